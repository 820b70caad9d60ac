"""The known-epsilon benchmark grid: settings, presets, a resumable parallel runner (paper Sec. 6).

A :class:`Setting` is one cell of the benchmark: a prototype set, a mechanism family, a requested
global epsilon, a sample size per identity and a repetition. :func:`run_grid` computes every
setting of a preset (or a list of settings) and writes a tidy results table, one row per
setting, pair and route, as Parquet and CSV. Each row keeps the status of its number
(``Diagnostic``, ``PopulationEstimate`` or ``Certificate``) beside the exact pairwise reference.

Determinism
    Every random draw of a setting comes from a :class:`numpy.random.SeedSequence` derived from
    the setting's identity (a hash of its data-defining fields), never from the worker that runs
    it or the order of completion; BLAS runs single-threaded inside a setting. Results are
    therefore identical, bit for bit, for any backend and worker count.

Resuming
    Each finished setting is written to ``settings/`` (temporary file plus rename) as soon as it
    completes, and skipped on a rerun; an interrupted run loses only the settings in flight.

Certificates
    The paper evaluates the learned and the exact likelihood-ratio test on the same reserved
    rows. A reserved split can be evaluated only once, so here the oracle family gets its own,
    independent sample of the same law (a child seed): each family has its own data, protocol
    and ledger, and each is valid at 95% on its own, as in the paper. Each evaluation also labels
    its identities with a fresh evaluation id: a recomputed setting (after an interruption, or in
    a determinism check) is a new simulated experiment whose draws coincide with the first, and
    the id keeps the reserved-split guard, which keys on the data fingerprint including labels,
    from mistaking it for a second look at spent data. Numbers never depend on the id.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal, TypeAlias, cast

import attrs
import numpy as np
import pandas as pd
from numpy.typing import NDArray

from certify.benchmark.mechanisms import Mechanism, MechanismFamily, mechanism_for
from certify.benchmark.pairs import benchmark_pairs, power_pairs
from certify.benchmark.prototypes import PrototypeSet, clustered, dispersed
from certify.errors import DataError, ParameterError

__all__ = [
    "APPENDIX_EPSILONS",
    "CERTIFICATE_EPSILONS",
    "COLUMNS",
    "NULL_FLOOR_DIMENSIONS",
    "PAPER_EPSILONS",
    "POWER_CELLS",
    "POWER_REPETITIONS",
    "SAMPLE_SIZES",
    "Setting",
    "compute_setting",
    "paper_settings",
    "presets",
    "quick_settings",
    "read_results",
    "run_cli",
    "run_grid",
]

RouteName: TypeAlias = Literal["gauss_mech", "kde_lr", "mmd_tv", "roc_oof"]
PrototypeName: TypeAlias = Literal["dispersed", "clustered"]
PairSetName: TypeAlias = Literal["benchmark", "power"]
Backend: TypeAlias = Literal["local", "dask"]

GRID_SEED: Final = 20_260_623
"""Root entropy of every setting's seed sequence."""
PAPER_EPSILONS: Final = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)
"""Requested global epsilons of the main grid (paper Sec. 6.2); 0 is the null of each family."""
CERTIFICATE_EPSILONS: Final = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0)
"""The Sec. 6.5 subset on which certificates are computed."""
APPENDIX_EPSILONS: Final = (0.0, 0.5, 2.0, 8.0, 16.0, 32.0)
"""Requested epsilons of the randomized-response and anisotropic grids (App. B, C)."""
SAMPLE_SIZES: Final = (30, 100, 300)
"""Samples per identity (paper Sec. 6.2)."""
REPETITIONS: Final = 3
"""Independent repetitions of the main and appendix grids."""
POWER_CELLS: Final = (("gaussian", 16.0), ("gaussian", 32.0), ("laplace", 64.0), ("laplace", 128.0))
"""(family, epsilon_g) cells of the power experiment (Sec. 6.5); see :func:`paper_settings`."""
POWER_REPETITIONS: Final = 200
"""Repetitions per cell of the power experiment."""
NULL_FLOOR_DIMENSIONS: Final = (64, 128, 256, 512)
"""Dimensions of the null-floor sweep (Eq. 22)."""
DEV_FRACTION: Final = 0.5
"""Development share of each identity's rows for certificates (Sec. 6.5)."""
CONFIDENCE_LEVEL: Final = 0.95
"""Simultaneous confidence level of each setting's certificate family."""
GAUSS_DELTA: Final = 1e-5
"""The delta inside GaussMech (App. D)."""
KDE_ALPHA: Final = 0.01
"""Uniform mixture weight of KDE-LR (Table 4 reports alpha = 0.01)."""
ALL_ROUTES: Final[tuple[RouteName, ...]] = ("gauss_mech", "kde_lr", "mmd_tv", "roc_oof")
"""The four descriptive routes of the main grid."""

COLUMNS: Final[dict[str, str]] = {
    "experiment": "str",
    "prototypes": "str",
    "mechanism": "str",
    "noise_family": "str",
    "epsilon_g": "float64",
    "n_samples": "int64",
    "repetition": "int64",
    "dimension": "int64",
    "pair_index": "int64",
    "pair_a": "int64",
    "pair_b": "int64",
    "within_cluster": "boolean",
    "exact_epsilon": "float64",
    "exact_delta": "float64",
    "reference_auc": "float64",
    "route": "str",
    "status": "str",
    "value_name": "str",
    "value": "float64",
    "auc": "float64",
    "exact_corner": "boolean",
    "infinite_by_endpoint": "boolean",
    "mmd": "float64",
    "mmd_lower": "float64",
    "development_auc": "float64",
    "false_positives": "Int64",
    "n_class0": "Int64",
    "false_negatives": "Int64",
    "n_class1": "Int64",
    "alpha_per_rate": "float64",
    "certificate_delta": "float64",
    "u_fpr": "float64",
    "u_fnr": "float64",
    "zero_error_ceiling": "float64",
    "failure_possible": "boolean",
    "exceeds_exact": "boolean",
}
"""Columns of the results table and their pandas dtypes (``value`` keeps infinities)."""

_ROUTE_WEIGHT: Final[dict[str, float]] = {"gauss_mech": 0.05, "kde_lr": 1.0, "mmd_tv": 0.3, "roc_oof": 1.0}


def _check_choice(name: str, value: object, allowed: Sequence[object]) -> None:
    """Raise ParameterError unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise ParameterError(f"{name} must be one of {tuple(allowed)!r}; got {value!r}.")


def _check_positive_int(name: str, value: object, minimum: int = 1) -> None:
    """Raise ParameterError unless ``value`` is an int ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}; got {value!r}.")


def _routes_tuple(value: Iterable[str]) -> tuple[RouteName, ...]:
    """Routes as a tuple in canonical order."""
    items = tuple(value)
    for r in items:
        _check_choice("routes", r, ALL_ROUTES)
    return tuple(r for r in ALL_ROUTES if r in items)


@attrs.frozen
class Setting:
    """One cell of the benchmark grid.

    Parameters
    ----------
    experiment : str
        Group name: ``"main"``, ``"randomized_response"``, ``"anisotropic"``, ``"power"``,
        ``"null_floor"`` or any label of your own.
    prototypes : {"dispersed", "clustered"}
        The prototype set (paper Sec. 6.1).
    family : {"laplace", "gaussian", "anisotropic", "randomized_response"}
        Mechanism family; ``epsilon_g = 0`` gives the family's null (except randomized response).
    epsilon_g : float
        Requested global epsilon, finite and ``>= 0``.
    n_samples : int
        Samples per identity (split 50/50 for certificates).
    repetition : int
        Repetition index, ``>= 0``.
    routes : tuple of str, default ()
        Descriptive routes: any of ``"gauss_mech"``, ``"kde_lr"``, ``"mmd_tv"``, ``"roc_oof"``.
    certificates : bool, default False
        Also certify every pair with the learned logistic test and the exact-LR oracle.
    pair_set : {"benchmark", "power"}, default "benchmark"
        :func:`~certify.benchmark.pairs.benchmark_pairs` or the five
        :func:`~certify.benchmark.pairs.power_pairs`.
    pair_count : int, default 40
        Number of benchmark pairs (5 for the power pairs).
    family_size : int or None, default None
        Tests in the Bonferroni family of each certificate family; None means the number of
        pairs (``alpha_per_rate = 0.05 / (2 family_size)``).
    dimension : int, default 512
        Prototype dimension.
    reference_draws : int, default 20000
        Monte Carlo draws per class of the Laplace AUC reference.
    default_test : bool, default False
        With ``certificates``, also certify every pair with certify's default test
        (``FixedTest.select("certify", ...)``, route ``certificate_default``) on its own
        independent sample, protocol and ledger.
    mmd_test : bool, default False
        With ``certificates``, also certify every pair through the certified MMD route
        (:class:`certify.MMDTest`, route ``certificate_mmd``) on its own independent sample,
        protocol and ledger.

    Raises
    ------
    ParameterError
        On an unknown choice or an out-of-range number.
    """

    experiment: str
    prototypes: PrototypeName
    family: MechanismFamily
    epsilon_g: float = attrs.field(converter=float)
    n_samples: int
    repetition: int
    routes: tuple[RouteName, ...] = attrs.field(default=(), converter=_routes_tuple)
    certificates: bool = False
    pair_set: PairSetName = "benchmark"
    pair_count: int = 40
    family_size: int | None = None
    dimension: int = 512
    reference_draws: int = 20_000
    default_test: bool = False
    mmd_test: bool = False

    def __attrs_post_init__(self) -> None:
        if not self.experiment.strip():
            raise ParameterError(f"experiment must be a non-empty string; got {self.experiment!r}.")
        _check_choice("prototypes", self.prototypes, ("dispersed", "clustered"))
        _check_choice("family", self.family, ("laplace", "gaussian", "anisotropic", "randomized_response"))
        if not (math.isfinite(self.epsilon_g) and self.epsilon_g >= 0.0):
            raise ParameterError(f"epsilon_g must be a finite number >= 0; got {self.epsilon_g!r}.")
        _check_positive_int("n_samples", self.n_samples, 4 if self.certificates else 2)
        _check_positive_int("repetition", self.repetition, 0)
        _check_choice("pair_set", self.pair_set, ("benchmark", "power"))
        _check_positive_int("pair_count", self.pair_count, 1)
        if self.pair_set == "power" and self.pair_count != 5:
            raise ParameterError(f"pair_count must be 5 for the power pairs; got {self.pair_count!r}.")
        if self.family_size is not None:
            _check_positive_int("family_size", self.family_size, self.pair_count)
        _check_positive_int("dimension", self.dimension, 1)
        _check_positive_int("reference_draws", self.reference_draws, 1)
        if not isinstance(self.certificates, bool):
            raise ParameterError(f"certificates must be True or False; got {self.certificates!r}.")
        if "roc_oof" in self.routes and self.n_samples < 5:
            raise ParameterError(f"n_samples must be >= 5 for roc_oof (5 folds); got {self.n_samples!r}.")

    def fields(self) -> dict[str, Any]:
        """All fields as JSON-ready values."""
        out = attrs.asdict(self)
        out["routes"] = list(self.routes)
        if not self.default_test:
            del out["default_test"]  # settings without the route keep their earlier keys
        if not self.mmd_test:
            del out["mmd_test"]
        return out

    @property
    def key(self) -> str:
        """Canonical text of every field; two settings with one key compute the same rows."""
        return json.dumps(self.fields(), sort_keys=True, separators=(",", ":"))

    @property
    def data_key(self) -> str:
        """Canonical text of the fields that define the data (seeds derive from it)."""
        keep = ("experiment", "prototypes", "family", "epsilon_g", "n_samples", "repetition",
                "pair_set", "pair_count", "dimension")
        return json.dumps({k: self.fields()[k] for k in keep}, sort_keys=True, separators=(",", ":"))

    @property
    def file_stem(self) -> str:
        """File name stem: readable fields plus a hash of the full key."""
        digest = hashlib.sha256(self.key.encode()).hexdigest()[:10]
        return (
            f"{self.prototypes}-{self.family}-d{self.dimension}-eps{self.epsilon_g:g}-"
            f"n{self.n_samples}-r{self.repetition}-{digest}"
        )

    @property
    def needs_reference(self) -> bool:
        """True when the setting needs the Monte Carlo Laplace AUC reference."""
        return self.family == "laplace" and self.epsilon_g > 0 and "roc_oof" in self.routes

    def cost(self) -> float:
        """A rough relative cost, for scheduling and the progress ETA."""
        per_pair = sum(_ROUTE_WEIGHT[r] for r in self.routes) + (2.0 if self.certificates else 0.0)
        return self.pair_count * (0.05 + per_pair) * (0.3 + self.n_samples / 100.0)


# -- presets -----------------------------------------------------------------------------------


def paper_settings() -> tuple[Setting, ...]:
    """Every setting of the paper's known-epsilon experiments (Sec. 6, App. B and C).

    Returns
    -------
    tuple of Setting
        ``main``: 2 prototype sets x {laplace, gaussian} x 13 epsilons x n in {30, 100, 300} x 3
        repetitions with the four descriptive routes on 40 pairs, certificates on the 10-epsilon
        subset (468 settings, 18,720 pairs, 14,400 certified pairs per test).
        ``randomized_response`` and ``anisotropic``: 2 sets x 6 epsilons x 3 n x 3 repetitions,
        MMD-TV, ROC-HT out of fold and certificates (108 settings, 4,320 pairs each).
        ``power``: the 5 power pairs of the dispersed set, Gaussian at epsilon 16 and 32 and
        Laplace at 64 and 128, 3 n, 200 repetitions, certificates only (2,400 settings,
        12,000 pair replications per test, 24,000 over both tests); each replication uses the
        main grid's Bonferroni family of 40 tests, i.e. the full Sec. 6.5 procedure.
        ``null_floor``: GaussMech at the null of both families, both sets, d in {64, 128, 256,
        512}, 3 n, 3 repetitions (144 settings, Eq. 22).

    Notes
    -----
    The paper quotes power at Gaussian 16 and Laplace 64 and counts 24,000 replications; the
    second epsilon per family is our choice (the next grid point, where power should be near 1
    from n = 100), which makes the count 24,000 over both tests.
    """
    out: list[Setting] = []
    protos: tuple[PrototypeName, PrototypeName] = ("dispersed", "clustered")
    main_families: tuple[MechanismFamily, MechanismFamily] = ("laplace", "gaussian")
    for ps in protos:
        for fam in main_families:
            for eps in PAPER_EPSILONS:
                for n in SAMPLE_SIZES:
                    for rep in range(REPETITIONS):
                        out.append(Setting("main", ps, fam, eps, n, rep, ALL_ROUTES,
                                           certificates=eps in CERTIFICATE_EPSILONS))
    appendix: tuple[MechanismFamily, MechanismFamily] = ("randomized_response", "anisotropic")
    for fam in appendix:
        for ps in protos:
            for eps in APPENDIX_EPSILONS:
                for n in SAMPLE_SIZES:
                    for rep in range(REPETITIONS):
                        out.append(Setting(fam, ps, fam, eps, n, rep, ("mmd_tv", "roc_oof"),
                                           certificates=True))
    for fam_name, eps in POWER_CELLS:
        fam = cast(MechanismFamily, fam_name)
        for n in SAMPLE_SIZES:
            for rep in range(POWER_REPETITIONS):
                out.append(Setting("power", "dispersed", fam, eps, n, rep, (), certificates=True,
                                   pair_set="power", pair_count=5, family_size=40))
    for ps in protos:
        for fam in main_families:
            for d in NULL_FLOOR_DIMENSIONS:
                for n in SAMPLE_SIZES:
                    for rep in range(REPETITIONS):
                        out.append(Setting("null_floor", ps, fam, 0.0, n, rep, ("gauss_mech",),
                                           dimension=d))
    return tuple(out)


def quick_settings() -> tuple[Setting, ...]:
    """A small subset of every experiment that runs in a few minutes on 2 cores.

    Returns
    -------
    tuple of Setting
        Dispersed prototypes, one repetition: the main grid at epsilon {0, 16, 128} x n
        {30, 100} (all routes, certificates); randomized response at {0, 8, 32} and the
        anisotropic Gaussian at {0, 32}, n = 100; the power cells Gaussian 16 and Laplace 64 at
        n in {30, 100} with
        5 repetitions; the null floor at d in {64, 512} x n in {30, 100} (Gaussian). The Laplace
        AUC reference uses 4,000 draws per class.
    """
    out: list[Setting] = []
    for fam in ("laplace", "gaussian"):
        for eps in (0.0, 16.0, 128.0):
            for n in (30, 100):
                out.append(Setting("main", "dispersed", fam, eps, n, 0, ALL_ROUTES,
                                   certificates=True, reference_draws=4_000))
    for fam in ("randomized_response", "anisotropic"):
        for eps in (0.0, 8.0, 32.0):
            if fam == "anisotropic" and eps == 8.0:
                continue
            out.append(Setting(fam, "dispersed", cast(MechanismFamily, fam), eps, 100, 0,
                               ("mmd_tv", "roc_oof"), certificates=True))
    for fam, eps in (("gaussian", 16.0), ("laplace", 64.0)):
        for n in (30, 100):
            for rep in range(5):
                out.append(Setting("power", "dispersed", cast(MechanismFamily, fam), eps, n, rep, (),
                                   certificates=True, pair_set="power", pair_count=5, family_size=40))
    for d in (64, 512):
        for n in (30, 100):
            out.append(Setting("null_floor", "dispersed", "gaussian", 0.0, n, 0, ("gauss_mech",),
                               dimension=d))
    return tuple(out)


def presets() -> dict[str, tuple[Setting, ...]]:
    """The named presets: ``"paper"`` (the full Sec. 6 grid) and ``"quick"`` (a few minutes).

    Returns
    -------
    dict of str to tuple of Setting

    Examples
    --------
    >>> p = presets()
    >>> sorted(p), len(p["paper"])
    (['paper', 'quick'], 3228)
    """
    return {"paper": paper_settings(), "quick": quick_settings()}


# -- computing one setting ---------------------------------------------------------------------

_PROTOTYPE_CACHE: dict[tuple[str, int], PrototypeSet] = {}
_CACHE_LOCK = threading.Lock()


def _prototype_set(name: str, dimension: int) -> PrototypeSet:
    """The named prototype set at a dimension, built once per process."""
    key = (name, dimension)
    with _CACHE_LOCK:
        ps = _PROTOTYPE_CACHE.get(key)
        if ps is None:
            ps = dispersed(dimension=dimension) if name == "dispersed" else clustered(dimension=dimension)
            _PROTOTYPE_CACHE[key] = ps
    return ps


_PAIR_CACHE: dict[tuple[str, str, int, int], tuple[tuple[int, int], ...]] = {}


def _pairs(setting: Setting, ps: PrototypeSet) -> list[tuple[int, int]]:
    """The setting's pair list (computed once per process for each prototype set and list)."""
    key = (setting.pair_set, setting.prototypes, setting.dimension, setting.pair_count)
    with _CACHE_LOCK:
        pairs = _PAIR_CACHE.get(key)
        if pairs is None:
            if setting.pair_set == "power":
                found = power_pairs(ps)
            else:
                found = benchmark_pairs(ps, count=setting.pair_count)
            pairs = tuple((int(i), int(j)) for i, j in found)
            _PAIR_CACHE[key] = pairs
    return list(pairs)


def _entropy(setting: Setting) -> list[int]:
    """Seed-sequence entropy from the setting's data identity (never from the worker)."""
    digest = hashlib.sha256(setting.data_key.encode()).digest()
    return [GRID_SEED, *(int.from_bytes(digest[k : k + 4], "little") for k in range(0, 16, 4))]


def _stream(entropy: list[int], *key: int) -> np.random.Generator:
    """An independent generator for one purpose (stream, identity) of a setting."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))


_STREAM_MAIN: Final = 0
_STREAM_ORACLE: Final = 1
_STREAM_SPLIT: Final = 2
_STREAM_DEFAULT: Final = 3
_STREAM_MMD: Final = 4


def _keep_freed_memory() -> None:
    """Let this worker's C allocator reuse freed memory instead of returning it to the system.

    A setting allocates and frees arrays of up to ~100 MB many times; by default glibc maps
    each one freshly (and zero-fills its pages on first touch), which costs a few percent of a
    worker's time in page faults. Raising the mmap and trim thresholds (``mallopt``) keeps
    the freed heap for the next allocation; the worker's resident memory then stays near its
    peak. Linux with glibc only; elsewhere nothing happens.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
        libc.mallopt(m_mmap_threshold, 2**31 - 1)
        libc.mallopt(m_trim_threshold, 2**31 - 1)
        libc.mallopt(m_top_pad, 256 << 20)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return


class _SingleThreaded:
    """Run BLAS single-threaded while any task is active (safe with concurrent threads)."""

    _lock = threading.Lock()
    _active = 0
    _limiter: Any = None
    _pinned = False

    @classmethod
    def pin_process(cls) -> None:
        """Limit BLAS and numba to one thread for the rest of this (worker) process."""
        with cls._lock:
            if cls._pinned:
                return
            from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

            threadpool_limits(limits=1)
            try:
                import numba

                numba.set_num_threads(1)
            except ImportError:  # pragma: no cover - numba is a dependency
                pass
            _keep_freed_memory()
            cls._pinned = True

    def __enter__(self) -> None:
        from threadpoolctl import threadpool_limits

        with _SingleThreaded._lock:
            if _SingleThreaded._pinned:
                return
            if _SingleThreaded._active == 0:
                _SingleThreaded._limiter = threadpool_limits(limits=1)
            _SingleThreaded._active += 1

    def __exit__(self, *exc: object) -> None:
        with _SingleThreaded._lock:
            if _SingleThreaded._pinned:
                return
            _SingleThreaded._active -= 1
            if _SingleThreaded._active == 0 and _SingleThreaded._limiter is not None:
                _SingleThreaded._limiter.restore_original_limits()
                _SingleThreaded._limiter = None


def _scratch_dir() -> str | None:
    """Where a setting's throw-away ledgers go: memory-backed ``/dev/shm`` when usable.

    Each certificate family of a simulated setting writes a fresh ledger (every reserved row's
    key, with the ledger's durable commits) that is deleted when the setting ends; on a
    memory-backed file system those writes cost no disk I/O. Elsewhere: the default temp folder.
    """
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def _mechanism_label(mech: Mechanism) -> str:
    """The ``mechanism`` column: the family, or ``"null"``."""
    return "null" if mech.name.startswith("null-") else mech.name


def _sample_table(
    mech: Mechanism, identities: Sequence[int], n: int, entropy: list[int], stream: int, token: str
) -> Any:
    """Draw ``n`` outputs per identity and wrap them in an (unnormalized) EmbeddingTable."""
    from certify.data import EmbeddingTable

    blocks = [mech.sample(i, n, _stream(entropy, stream, i)) for i in identities]
    labels = [label for i in identities for label in [_label(token, i)] * n]
    return EmbeddingTable.from_arrays(labels, np.vstack(blocks), normalize=False)


def _label(token: str, identity: int) -> str:
    """Identity label inside a setting's tables (zero-padded so sorting keeps numeric order)."""
    return f"{token}-{identity:05d}"


def _reference_aucs(
    setting: Setting, mech: Mechanism, pairs: Sequence[tuple[int, int]], references: Mapping[str, float]
) -> list[float]:
    """Population-optimal AUC per pair (Laplace: from the precomputed references)."""
    if "roc_oof" not in setting.routes:
        return [math.nan] * len(pairs)
    if setting.needs_reference:
        return [float(references[f"{i}-{j}"]) for i, j in pairs]
    return [float(mech.reference_auc(i, j)) for i, j in pairs]


def _base_rows(
    setting: Setting, mech: Mechanism, pairs: Sequence[tuple[int, int]], ref_auc: Sequence[float]
) -> list[dict[str, Any]]:
    """Per-pair columns shared by every route row."""
    rows = []
    for k, (i, j) in enumerate(pairs):
        rows.append({
            "experiment": setting.experiment,
            "prototypes": setting.prototypes,
            "mechanism": _mechanism_label(mech),
            "noise_family": setting.family,
            "epsilon_g": setting.epsilon_g,
            "n_samples": setting.n_samples,
            "repetition": setting.repetition,
            "dimension": setting.dimension,
            "pair_index": k,
            "pair_a": i,
            "pair_b": j,
            "within_cluster": (i % 4 == j % 4) if setting.prototypes == "clustered" else None,
            "exact_epsilon": float(mech.exact_epsilon(i, j)),
            "exact_delta": float(mech.delta),
            "reference_auc": ref_auc[k],
        })
    return rows


def _descriptive_rows(
    setting: Setting, table: Any, pairs: Sequence[tuple[int, int]], token: str,
    base: Sequence[dict[str, Any]], delta: float, timings: dict[str, float],
) -> list[dict[str, Any]]:
    """Run the descriptive routes on every pair; one row per result (two for MMD-TV)."""
    from certify._core import Pair
    from certify.methods.audit import audit_pairs

    pair_objs = [Pair(_label(token, i), _label(token, j)) for i, j in pairs]
    audit = audit_pairs(
        table, pair_objs, methods=setting.routes, gauss_delta=GAUSS_DELTA, kde_alpha=KDE_ALPHA,
        roc_delta=delta, seed=0,
    )
    for m, sec in audit.timings.items():
        timings[m] = timings.get(m, 0.0) + float(sec)
    per_pair = len(setting.routes)
    rows: list[dict[str, Any]] = []
    for idx, r in enumerate(audit.results):
        row = dict(base[idx // per_pair])
        row["route"] = r.method
        row["status"] = r.status
        details = dict(getattr(r, "details", {}))
        if r.status == "Diagnostic":
            row["value_name"], row["value"] = "score", float(getattr(r, "score"))  # noqa: B009
        else:
            row["value_name"], row["value"] = "epsilon_estimate", float(getattr(r, "epsilon_estimate"))  # noqa: B009
        if r.method == "roc_oof":
            row["auc"] = float(details["auc"])
            row["exact_corner"] = bool(details["exact_corner"])
            row["infinite_by_endpoint"] = bool(details["infinite_by_endpoint"])
        rows.append(row)
        if r.method == "mmd_tv":
            row["mmd"] = float(details["mmd"])
            hs = dict(row)
            hs["route"] = "mmd_tv_hockey_stick"
            hs["value"] = float(details["epsilon_hockey_stick"])
            rows.append(hs)
    return rows


def _certificate_rows(
    setting: Setting, mech: Mechanism, table: Any, pairs: Sequence[tuple[int, int]], token: str,
    base: Sequence[dict[str, Any]], delta: float, split_seed: int, oracle: bool, ledger_dir: Path,
    default: bool = False,
    mmd: bool = False,
) -> list[dict[str, Any]]:
    """Fit one family of fixed tests on development rows, seal, evaluate once; one row per pair."""
    from certify._core import Pair
    from certify.protocol import FixedTest, Protocol
    from certify.protocol.families import BoundPlan
    from certify.protocol.ledger import Ledger
    from certify.protocol.mmd import MMDTest
    from certify.results import ErrorRateEvidence
    from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds
    from certify.stats.mmd import mmd_pure_dp_epsilon_lower

    route = (
        "certificate_oracle"
        if oracle
        else "certificate_default"
        if default
        else "certificate_mmd"
        if mmd
        else "certificate_learned"
    )
    split = table.split(dev_fraction=DEV_FRACTION, seed=split_seed)
    family_size = setting.family_size or len(pairs)
    protocol = Protocol(f"benchmark-{route}", confidence_level=CONFIDENCE_LEVEL, delta=delta,
                        family_size=family_size)
    for i, j in pairs:
        pair = Pair(_label(token, i), _label(token, j))
        test: FixedTest | MMDTest
        if mmd:
            test = MMDTest.fit(split.development, pair)
        elif oracle:
            test = FixedTest.from_score(_OracleScore(mech, i, j), split.development, pair, name="oracle")
        elif default:
            plan = BoundPlan.for_pair(split.reserved, pair, family_size, CONFIDENCE_LEVEL, delta)
            test = FixedTest.select("certify", split.development, pair, plan=plan, seed=0)
        else:
            test = FixedTest.fit(None, split.development, pair, seed=0, name="logistic")
        protocol.register(test)
    sealed = protocol.seal(split.reserved, ledger=Ledger(ledger_dir / f"{route}.ledger"))
    family = sealed.evaluate()
    dev_auc = {t.pair: t.development_auc for t in sealed.tests if isinstance(t, FixedTest)}
    rows: list[dict[str, Any]] = []
    for k, cert in enumerate(family.certificates):
        row = dict(base[k])
        a = cert.alpha_per_rate
        ev = cert.evidence
        row.update({
            "route": route,
            "status": cert.status,
            "value_name": "epsilon_lower",
            "value": float(cert.epsilon_lower),
            "n_class0": int(cert.n_class0),
            "n_class1": int(cert.n_class1),
            "alpha_per_rate": float(a),
            "certificate_delta": float(cert.delta),
            "exceeds_exact": bool(cert.epsilon_lower > row["exact_epsilon"]),
        })
        if isinstance(ev, ErrorRateEvidence):
            ceiling = epsilon_lower_from_error_bounds(
                clopper_pearson_upper(0, cert.n_class0, a),
                clopper_pearson_upper(0, cert.n_class1, a),
                cert.delta,
            )
            row.update({
                "development_auc": float(dev_auc[cert.pair]),
                "false_positives": int(ev.false_positives),
                "false_negatives": int(ev.false_negatives),
                "u_fpr": float(ev.u_fpr),
                "u_fnr": float(ev.u_fnr),
            })
        else:
            # the largest possible statistic is sqrt 2 (kernel in [0, 1]); its bound is the ceiling
            ceiling = mmd_pure_dp_epsilon_lower(max(0.0, math.sqrt(2.0) - ev.slack), cert.delta)
            row.update({"mmd": float(ev.mmd_biased), "mmd_lower": float(ev.mmd_lower)})
        row["zero_error_ceiling"] = float(ceiling)
        row["failure_possible"] = bool(ceiling > row["exact_epsilon"])
        rows.append(row)
    return rows


class _OracleScore:
    """The exact log-likelihood ratio ``log p_j - log p_i`` of a benchmark mechanism."""

    __slots__ = ("i", "j", "mech")

    def __init__(self, mech: Mechanism, i: int, j: int) -> None:
        self.mech, self.i, self.j = mech, i, j

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.mech.log_likelihood_ratio(x, self.i, self.j)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows to a DataFrame with exactly the :data:`COLUMNS` schema (as :func:`_coerce` gives).

    Built column by column from the row dicts, which costs a fraction of coercing a generic
    frame (a setting's rows are written once per setting, thousands of times per preset).
    """
    data: dict[str, Any] = {}
    for col, dtype in COLUMNS.items():
        values: list[Any] = [r.get(col) for r in rows]
        if dtype == "float64":
            data[col] = np.array([math.nan if v is None else float(v) for v in values], dtype=np.float64)
        elif dtype == "int64":
            data[col] = np.array([int(v) for v in values], dtype=np.int64)
        elif dtype == "Int64":
            data[col] = pd.array([None if v is None else int(v) for v in values], dtype="Int64")
        elif dtype == "boolean":
            data[col] = pd.array([_to_bool(v) for v in values], dtype="boolean")
        else:
            data[col] = pd.Series(values, dtype=object).astype("str")
    return pd.DataFrame(data, index=pd.RangeIndex(len(rows)))


def _coerce(frame: pd.DataFrame) -> pd.DataFrame:
    """Apply the column dtypes of :data:`COLUMNS` (missing columns are added empty)."""
    out = frame.copy()
    for col, dtype in COLUMNS.items():
        if col not in out.columns:
            out[col] = pd.NA if dtype in ("boolean", "Int64", "str") else math.nan
        if dtype == "boolean":
            out[col] = out[col].map(_to_bool).astype("boolean")
        elif dtype == "Int64":
            out[col] = pd.to_numeric(out[col]).astype("Int64")
        elif dtype == "float64":
            out[col] = pd.to_numeric(out[col]).astype("float64")
        elif dtype == "int64":
            out[col] = pd.to_numeric(out[col]).astype("int64")
        else:
            out[col] = out[col].astype("str")
    return out[list(COLUMNS)].reset_index(drop=True)


def _to_bool(value: object) -> object:
    """Parse booleans written by CSV ("True"/"False") and keep missing values missing."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return pd.NA
    if isinstance(value, str):
        if value.strip().lower() in ("true", "1"):
            return True
        if value.strip().lower() in ("false", "0"):
            return False
        return pd.NA
    return bool(value)


def compute_setting(
    setting: Setting, references: Mapping[str, float] | None = None
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Compute every row of one setting.

    Parameters
    ----------
    setting : Setting
        The cell to compute.
    references : Mapping[str, float], optional
        Laplace AUC references keyed ``"i-j"`` (required when ``setting.needs_reference``).

    Returns
    -------
    (pandas.DataFrame, dict)
        The rows (schema :data:`COLUMNS`) and seconds spent per route (plus ``"sampling"``).

    Raises
    ------
    ParameterError
        If a needed reference is missing.

    Notes
    -----
    Data: ``n_samples`` outputs per identity of the setting's pairs, drawn from per-identity
    streams of a seed sequence keyed by the setting's data identity. The descriptive routes and
    the learned certificates use this sample; the oracle certificates use an independent sample
    of the same law. Certificates: 50/50 split per identity, ``alpha_per_rate = 0.05 / (2 *
    family_size)``, delta 0 for pure-DP families and 1e-5 for the Gaussian families (paper
    Sec. 6.5, Eq. 23). BLAS runs single-threaded so the numbers do not depend on the machine's
    thread settings.
    """
    if not isinstance(setting, Setting):
        raise ParameterError(f"setting must be a Setting; got {type(setting).__name__}.")
    refs = dict(references or {})
    with _SingleThreaded():
        return _compute(setting, refs)


def _compute(setting: Setting, refs: Mapping[str, float]) -> tuple[pd.DataFrame, dict[str, float]]:
    """Body of :func:`compute_setting`."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    ps = _prototype_set(setting.prototypes, setting.dimension)
    mech = mechanism_for(setting.family, ps, setting.epsilon_g)
    pairs = _pairs(setting, ps)
    if setting.needs_reference:
        missing = [f"{i}-{j}" for i, j in pairs if f"{i}-{j}" not in refs]
        if missing:
            raise ParameterError(
                f"references must hold the Laplace AUC of every pair; missing {missing[:3]!r}. "
                "Compute them with laplace_references(...) or run the setting through run_grid."
            )
    identities = sorted({i for p in pairs for i in p})
    entropy = _entropy(setting)
    delta = float(mech.delta)
    base = _base_rows(setting, mech, pairs, _reference_aucs(setting, mech, pairs, refs))
    timings["setup"] = time.perf_counter() - t0
    rows: list[dict[str, Any]] = []
    token = uuid.uuid4().hex[:12]
    if setting.routes or setting.certificates:
        t0 = time.perf_counter()
        table = _sample_table(mech, identities, setting.n_samples, entropy, _STREAM_MAIN, token)
        timings["sampling"] = time.perf_counter() - t0
        if setting.routes:
            rows += _descriptive_rows(setting, table, pairs, token, base, delta, timings)
        if setting.certificates:
            split_seed = int(np.random.SeedSequence(entropy, spawn_key=(_STREAM_SPLIT,)).generate_state(1)[0])
            with tempfile.TemporaryDirectory(prefix="certify-grid-", dir=_scratch_dir()) as tmp:
                t0 = time.perf_counter()
                rows += _certificate_rows(setting, mech, table, pairs, token, base, delta, split_seed,
                                          False, Path(tmp))
                timings["certificate_learned"] = time.perf_counter() - t0
                del table
                # Each further family draws its own sample of the same law, with its own labels
                # (randomized response can draw value-identical samples), protocol and ledger.
                families = [("oracle", _STREAM_ORACLE, "o")]
                if setting.default_test:
                    families.append(("default", _STREAM_DEFAULT, "c"))
                if setting.mmd_test:
                    families.append(("mmd", _STREAM_MMD, "m"))
                for kind, stream, suffix in families:
                    t0 = time.perf_counter()
                    own_token = f"{token}{suffix}"
                    own_table = _sample_table(mech, identities, setting.n_samples, entropy, stream, own_token)
                    timings["sampling"] += time.perf_counter() - t0
                    t0 = time.perf_counter()
                    rows += _certificate_rows(setting, mech, own_table, pairs, own_token, base, delta,
                                              split_seed, kind == "oracle", Path(tmp),
                                              default=kind == "default", mmd=kind == "mmd")
                    timings[f"certificate_{kind}"] = time.perf_counter() - t0
    return _frame(rows), timings


# -- Laplace AUC references -------------------------------------------------------------------


@attrs.frozen
class _RefKey:
    """Identity of one cached set of Laplace AUC references."""

    prototypes: str
    epsilon_g: float
    pair_set: str
    pair_count: int
    dimension: int
    draws: int

    @property
    def file_name(self) -> str:
        """Cache file name."""
        return (f"laplace-{self.prototypes}-d{self.dimension}-eps{self.epsilon_g:g}-"
                f"{self.pair_set}{self.pair_count}-draws{self.draws}.json")


def _ref_key(setting: Setting) -> _RefKey:
    """The reference cache key of a setting."""
    return _RefKey(setting.prototypes, setting.epsilon_g, setting.pair_set, setting.pair_count,
                   setting.dimension, setting.reference_draws)


def laplace_references(key: _RefKey) -> dict[str, float]:
    """Monte Carlo AUC of the exact LR score for every pair of a Laplace setting (Sec. 6.2)."""
    return _reference_chunk((key,), 0, None)[key.file_name]


def _reference_pairs(key: _RefKey) -> list[tuple[int, int]]:
    """The pairs whose references a key holds."""
    ps = _prototype_set(key.prototypes, key.dimension)
    probe = Setting("reference", cast(PrototypeName, key.prototypes), "laplace", key.epsilon_g or 1.0, 30, 0,
                    pair_set=cast(PairSetName, key.pair_set), pair_count=key.pair_count,
                    dimension=key.dimension)
    return _pairs(probe, ps)


def _reference_chunk(keys: tuple[_RefKey, ...], start: int, stop: int | None) -> dict[str, dict[str, float]]:
    """References of pairs ``start:stop`` for keys that differ only in epsilon (draws shared).

    Each value equals ``Laplace(ps, key.epsilon_g).reference_auc(i, j, n_draws=key.draws)`` bit
    for bit (:func:`~certify.benchmark.mechanisms.laplace_reference_aucs`).
    """
    from certify.benchmark.mechanisms import laplace_reference_aucs

    with _SingleThreaded():
        first = keys[0]
        ps = _prototype_set(first.prototypes, first.dimension)
        out: dict[str, dict[str, float]] = {k.file_name: {} for k in keys}
        for i, j in _reference_pairs(first)[start:stop]:
            aucs = laplace_reference_aucs(ps, [k.epsilon_g for k in keys], i, j, n_draws=first.draws)
            for k, value in zip(keys, aucs, strict=True):
                out[k.file_name][f"{i}-{j}"] = float(value)
        return out


_REFERENCE_CHUNK_PAIRS: Final = 4
"""Pairs per reference task (all epsilons of a prototype set share each pair's draws)."""


def _reference_tasks(keys: Sequence[_RefKey]) -> list[tuple[tuple[_RefKey, ...], int, int]]:
    """Reference tasks: keys grouped by everything but epsilon, pairs cut into small chunks."""
    groups: dict[tuple[str, str, int, int, int], list[_RefKey]] = {}
    for k in keys:
        groups.setdefault((k.prototypes, k.pair_set, k.pair_count, k.dimension, k.draws), []).append(k)
    tasks = []
    for group in groups.values():
        n_pairs = len(_reference_pairs(group[0]))
        for start in range(0, n_pairs, _REFERENCE_CHUNK_PAIRS):
            tasks.append((tuple(group), start, min(start + _REFERENCE_CHUNK_PAIRS, n_pairs)))
    return tasks


# -- running many settings ---------------------------------------------------------------------


def _write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Write through a temporary file in the same folder, then rename over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_parquet(frame: pd.DataFrame, path: Path) -> None:
    """Atomic Parquet write."""
    _write_atomic(path, lambda p: frame.to_parquet(p, index=False, engine="pyarrow"))


def _write_text(text: str, path: Path) -> None:
    """Atomic text write."""
    def write(p: Path) -> None:
        p.write_text(text, encoding="utf-8")

    _write_atomic(path, write)


def read_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a results table written by :func:`run_grid` (Parquet or CSV) with its dtypes.

    Parameters
    ----------
    path : str or path-like
        ``results.parquet`` or ``results.csv`` (or a folder holding them).

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`COLUMNS`; ``inf`` values are kept as ``inf``.

    Raises
    ------
    DataError
        If the file does not exist or lacks a column.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "results.parquet" if (p / "results.parquet").exists() else p / "results.csv"
    if not p.exists():
        raise DataError(f"results must be an existing results.parquet or results.csv; got {str(p)!r}.")
    if p.suffix == ".csv":
        # Only empty cells are missing: "null" is a mechanism name, not a missing value.
        frame = pd.read_csv(p, keep_default_na=False, na_values=[""])
    else:
        frame = pd.read_parquet(p, engine="pyarrow")
    missing = [c for c in ("experiment", "route", "status", "value") if c not in frame.columns]
    if missing:
        raise DataError(f"results must have the columns {missing!r}; is {str(p)!r} a benchmark table?")
    return _coerce(frame)


class _Progress:
    """A cost-weighted progress bar with an ETA on stderr."""

    def __init__(self, label: str, total: float, count: int, enabled: bool) -> None:
        self.label, self.total, self.count, self.enabled = label, max(total, 1e-9), count, enabled
        self.done_weight = 0.0
        self.done = 0
        self.start = time.perf_counter()
        self.last = 0.0
        self.tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
        if enabled and count:
            self._show(force=True)

    def update(self, weight: float) -> None:
        """Record one finished task of the given weight."""
        self.done += 1
        self.done_weight += weight
        self._show(force=self.done == self.count)

    def _show(self, force: bool) -> None:
        """Print the bar (throttled)."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < (0.5 if self.tty else 30.0):
            return
        self.last = now
        elapsed = now - self.start
        frac = min(1.0, self.done_weight / self.total)
        left = self.total - self.done_weight
        eta = "?" if self.done_weight <= 0 else _clock(elapsed / self.done_weight * left)
        bar = "#" * int(24 * frac) + "-" * (24 - int(24 * frac))
        line = (f"{self.label} [{bar}] {self.done}/{self.count} {100 * frac:3.0f}%  "
                f"elapsed {_clock(elapsed)}  eta {eta}")
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if self.done == self.count else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _clock(seconds: float) -> str:
    """Seconds as h:mm:ss."""
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class _Executor:
    """Runs tasks in this process, through joblib (loky), or on a Dask cluster; one pool per run."""

    def __init__(self, workers: int, backend: Backend, scheduler: str | None) -> None:
        self.workers, self.backend, self.scheduler = workers, backend, scheduler
        self._client: Any = None
        self._cluster: Any = None

    def __enter__(self) -> _Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    def _dask_client(self) -> Any:
        """Connect (once) to the scheduler, or start a LocalCluster."""
        if self._client is None:
            from distributed import Client, LocalCluster

            if self.scheduler is None:
                self._cluster = LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._client = Client(self._cluster)  # type: ignore[no-untyped-call]
            else:
                self._client = Client(self.scheduler)  # type: ignore[no-untyped-call]
        return self._client

    def map_unordered(
        self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]
    ) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, fn(*tasks[index]))`` as each task completes."""
        if not tasks:
            return
        if self.backend == "local":
            if self.workers == 1:
                for k, t in enumerate(tasks):
                    yield k, fn(*t)
                return
            from joblib import Parallel, delayed

            par = Parallel(n_jobs=self.workers, backend="loky", return_as="generator_unordered",
                           batch_size=1)
            yield from par(delayed(_indexed_single_threaded)(fn, k, t) for k, t in enumerate(tasks))
            return
        from distributed import as_completed

        client = self._dask_client()
        futures = [client.submit(_indexed, fn, k, t, pure=False) for k, t in enumerate(tasks)]
        try:
            for fut in as_completed(futures):  # type: ignore[no-untyped-call]
                yield fut.result()
                fut.release()
        finally:
            client.cancel(futures)


def _indexed(fn: Callable[..., Any], index: int, task: tuple[Any, ...]) -> tuple[int, Any]:
    """Call ``fn(*task)`` and return the result with its task index."""
    return index, fn(*task)


def _indexed_single_threaded(fn: Callable[..., Any], index: int, task: tuple[Any, ...]) -> tuple[int, Any]:
    """:func:`_indexed` in a local pool worker: BLAS and compiled loops pinned to one thread once.

    The pool already runs one task per core; pinning once per worker process replaces a
    threadpool probe per setting (about 10 ms each). Numbers do not depend on thread counts.
    """
    _SingleThreaded.pin_process()
    return _indexed(fn, index, task)


def _resolve(preset_or_settings: str | Iterable[Setting]) -> tuple[str, tuple[Setting, ...]]:
    """A preset name or explicit settings -> (label, settings), checked."""
    if isinstance(preset_or_settings, str):
        table = presets()
        if preset_or_settings not in table:
            raise ParameterError(
                f"preset must be one of {sorted(table)!r}; got {preset_or_settings!r}. "
                "Or pass a list of Setting objects."
            )
        return preset_or_settings, table[preset_or_settings]
    settings = tuple(preset_or_settings)
    if not settings:
        raise ParameterError("settings must hold at least one Setting; got an empty sequence.")
    for s in settings:
        if not isinstance(s, Setting):
            raise ParameterError(f"settings must contain Setting objects; got {type(s).__name__}.")
    keys = [s.key for s in settings]
    if len(set(keys)) != len(keys):
        raise ParameterError("settings must be distinct; the list repeats a setting.")
    return "custom", settings


def run_grid(
    preset_or_settings: str | Iterable[Setting],
    out_dir: str | os.PathLike[str],
    *,
    workers: int = 2,
    backend: Backend = "local",
    scheduler: str | None = None,
    progress: bool = True,
) -> Path:
    """Run a benchmark grid and write its tidy results table.

    Parameters
    ----------
    preset_or_settings : str or iterable of Setting
        ``"paper"``, ``"quick"`` (see :func:`presets`) or explicit settings.
    out_dir : str or path-like
        Output folder: ``settings/`` (one Parquet file per finished setting plus its timings),
        ``references/`` (cached Laplace AUC references), ``results.parquet``, ``results.csv``.
    workers : int, default 2
        Parallel workers (joblib processes, or Dask LocalCluster workers).
    backend : {"local", "dask"}, default "local"
        ``"local"`` runs through joblib (``workers=1`` runs in this process); ``"dask"`` submits
        the same tasks to a Dask cluster.
    scheduler : str, optional
        Dask scheduler address; default a new ``LocalCluster(n_workers=workers)``.
    progress : bool, default True
        Show a progress bar with an ETA on stderr.

    Returns
    -------
    pathlib.Path
        Path of ``results.parquet`` (``results.csv`` is beside it).

    Raises
    ------
    ParameterError
        On an unknown preset, bad settings or options.

    Notes
    -----
    Results are identical, bit for bit, for any backend and worker count: each setting's seeds
    derive from its own identity. Finished settings are written atomically as they complete
    and skipped on a rerun into the same folder, so an interrupted run resumes where it stopped.
    Workers return their rows to this process, which does all writing, so a remote Dask cluster
    needs no shared file system.

    Examples
    --------
    >>> import tempfile
    >>> s = Setting("main", "dispersed", "gaussian", 16.0, 20, 0, ("gauss_mech",), pair_count=4)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = run_grid([s], d, workers=1, progress=False)
    ...     read_results(path)[["route", "status"]].drop_duplicates().values.tolist()
    [['gauss_mech', 'Diagnostic']]
    """
    _check_positive_int("workers", workers, 1)
    _check_choice("backend", backend, ("local", "dask"))
    if scheduler is not None and backend != "dask":
        raise ParameterError(f"scheduler is used only with backend='dask'; got backend={backend!r}.")
    label, settings = _resolve(preset_or_settings)
    out = Path(out_dir)
    (out / "settings").mkdir(parents=True, exist_ok=True)
    (out / "references").mkdir(parents=True, exist_ok=True)
    _write_text(json.dumps({"preset": label, "settings": len(settings)}, indent=2), out / "grid.json")

    # Stage 1: Laplace AUC references, shared by every n and repetition of a (set, epsilon).
    ref_keys = sorted({_ref_key(s) for s in settings if s.needs_reference}, key=lambda k: k.file_name)
    todo_refs = [k for k in ref_keys if not (out / "references" / k.file_name).exists()]
    todo = [s for s in settings if not _setting_path(out, s).exists()]
    todo.sort(key=lambda s: -s.cost())
    with _Executor(workers, backend, scheduler) as pool:
        ref_tasks = _reference_tasks(todo_refs)
        bar = _Progress("references", float(len(ref_tasks)), len(ref_tasks), progress)
        found: dict[str, dict[str, float]] = {k.file_name: {} for k in todo_refs}
        expected = {k.file_name: len(_reference_pairs(k)) for k in todo_refs}
        for _, chunk in pool.map_unordered(_reference_chunk, ref_tasks):
            for name, refs in chunk.items():
                found[name].update(refs)
                if len(found[name]) == expected[name]:  # complete: write it (resumable per key)
                    _write_text(json.dumps(found[name], sort_keys=True), out / "references" / name)
            bar.update(1.0)
        ref_cache = {k: json.loads((out / "references" / k.file_name).read_text()) for k in ref_keys}

        # Stage 2: settings, most expensive first; each written as soon as it completes.
        bar = _Progress("settings", sum(s.cost() for s in todo), len(todo), progress)
        tasks = [(s, ref_cache.get(_ref_key(s)) if s.needs_reference else None) for s in todo]
        computed: dict[Setting, pd.DataFrame] = {}
        for idx, (frame, timings) in pool.map_unordered(compute_setting, tasks):
            s = todo[idx]
            path = _setting_path(out, s)
            _write_parquet(frame, path)
            computed[s] = frame
            _write_text(json.dumps({"setting": s.fields(), "seconds": timings}, indent=1),
                        path.with_suffix(".timing.json"))
            bar.update(s.cost())

    # Stage 3: the tidy table, in the preset's order (settings finished by an earlier run are
    # read back from their files, the others are already in memory).
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = [
        pa.Table.from_pandas(computed[s], preserve_index=False) if s in computed
        else pq.read_table(_setting_path(out, s))
        for s in settings
    ]
    results = _coerce(pa.concat_tables(tables, promote_options="permissive").to_pandas())
    target = out / "results.parquet"
    _write_parquet(results, target)
    _write_atomic(out / "results.csv", lambda p: results.to_csv(p, index=False))
    return target


def _setting_path(out: Path, setting: Setting) -> Path:
    """Where a setting's rows are written."""
    return out / "settings" / setting.experiment / f"{setting.file_stem}.parquet"


def run_cli(args: Any, say: Callable[[str], None]) -> int:
    """The ``certify benchmark`` command: run a preset and say where the results are.

    Parameters
    ----------
    args : argparse.Namespace
        ``preset``, ``workers``, ``backend``, ``scheduler``, ``out``.
    say : callable
        Prints one line for the user.

    Returns
    -------
    int
        Exit code 0.
    """
    settings = presets().get(args.preset, ())
    say(f"benchmark preset {args.preset!r}: {len(settings)} settings, {args.workers} worker(s), "
        f"backend {args.backend}; output {args.out}")
    start = time.perf_counter()
    path = run_grid(args.preset, args.out, workers=args.workers, backend=args.backend,
                    scheduler=args.scheduler, progress=True)
    say(f"finished in {time.perf_counter() - start:.1f} s; results: {path} and {path.with_suffix('.csv')}")
    say(f"tables and figures: certify report {path} --out {Path(args.out) / 'report'}")
    return 0
