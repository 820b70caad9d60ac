"""The cell of the benchmark grid: :class:`Setting`, its validation and the grid's constants."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal, TypeAlias

import attrs
import numpy as np

from certify.benchmark.mechanisms import MechanismFamily
from certify.errors import ParameterError

__all__ = [
    "ALL_ROUTES",
    "APPENDIX_EPSILONS",
    "CERTIFICATE_EPSILONS",
    "CONFIDENCE_LEVEL",
    "DEV_FRACTION",
    "GAUSS_DELTA",
    "GRID_SEED",
    "KDE_ALPHA",
    "NULL_FLOOR_DIMENSIONS",
    "PAPER_EPSILONS",
    "POWER_CELLS",
    "POWER_REPETITIONS",
    "REPETITIONS",
    "SAMPLE_SIZES",
    "PairSetName",
    "PrototypeName",
    "RouteName",
    "Setting",
]

RouteName: TypeAlias = Literal["gauss_mech", "kde_lr", "mmd_tv", "roc_oof"]
PrototypeName: TypeAlias = Literal["dispersed", "clustered"]
PairSetName: TypeAlias = Literal["benchmark", "power"]

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
