"""Computing one setting of the benchmark grid: its data, its descriptive routes, its certificates."""

from __future__ import annotations

import functools
import hashlib
import math
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from certify.benchmark._results import _frame
from certify.benchmark._setting import (
    CONFIDENCE_LEVEL,
    DEV_FRACTION,
    GAUSS_DELTA,
    GRID_SEED,
    KDE_ALPHA,
    Setting,
)
from certify.benchmark._workers import _SingleThreaded
from certify.benchmark.mechanisms import Mechanism, mechanism_for
from certify.benchmark.pairs import benchmark_pairs, power_pairs
from certify.benchmark.prototypes import PrototypeSet, clustered, dispersed
from certify.errors import ParameterError

__all__ = ["compute_setting"]

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
            ceiling = _zero_error_ceiling(int(cert.n_class0), int(cert.n_class1), float(a), float(cert.delta))
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


@functools.lru_cache(maxsize=256)
def _zero_error_ceiling(n_class0: int, n_class1: int, alpha_per_rate: float, delta: float) -> float:
    """The largest bound a test can certify on these reserved sizes (no errors at all), memoized."""
    from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds

    return float(epsilon_lower_from_error_bounds(
        clopper_pearson_upper(0, n_class0, alpha_per_rate),
        clopper_pearson_upper(0, n_class1, alpha_per_rate),
        delta,
    ))


class _OracleScore:
    """The exact log-likelihood ratio ``log p_j - log p_i`` of a benchmark mechanism."""

    __slots__ = ("i", "j", "mech")

    def __init__(self, mech: Mechanism, i: int, j: int) -> None:
        self.mech, self.i, self.j = mech, i, j

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.mech.log_likelihood_ratio(x, self.i, self.j)


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
