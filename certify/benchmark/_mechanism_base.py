"""What every benchmark mechanism offers (the :class:`Mechanism` protocol), its shared parts and checks."""

from __future__ import annotations

import math
import numbers
from typing import Final, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify.benchmark.prototypes import PrototypeSet
from certify.errors import DataError, ParameterError
from certify.stats.roc import auc

__all__ = [
    "DEFAULT_DELTA",
    "NULL_NOISE_EPSILON",
    "REFERENCE_AUC_DRAWS",
    "REFERENCE_AUC_SEED",
    "RR_GRID_BITS",
    "Mechanism",
]

DEFAULT_DELTA: Final = 1e-5
"""The delta at which Gaussian-family references are computed (paper Sec. 6.1)."""
NULL_NOISE_EPSILON: Final = 0.1
"""The null mechanisms use the noise law of their family at this global epsilon."""
REFERENCE_AUC_DRAWS: Final = 20_000
"""Monte Carlo draws per class for the Laplace AUC reference (paper Sec. 6.2)."""
REFERENCE_AUC_SEED: Final = 20_260_621
"""Default seed of the Laplace AUC reference; each pair derives its own stream from it."""
RR_GRID_BITS: Final = 53
"""Randomized response keeps the true label when a uniform 53-bit integer is below a threshold."""

_SQRT2: Final = math.sqrt(2.0)


@runtime_checkable
class Mechanism(Protocol):
    """What every benchmark mechanism offers (structural type; the benchmark mechanisms conform)."""

    @property
    def name(self) -> str:
        """Short family name, e.g. ``"laplace"``."""
        ...

    @property
    def epsilon_g(self) -> float:
        """Requested global epsilon (0 for the null mechanisms)."""
        ...

    @property
    def delta(self) -> float:
        """The delta at which ``exact_epsilon`` holds (0 for pure DP)."""
        ...

    @property
    def prototype_set(self) -> PrototypeSet:
        """The prototypes the mechanism perturbs."""
        ...

    @property
    def n_identities(self) -> int:
        """Number of valid identities ``0 .. n_identities - 1``."""
        ...

    def sample(self, identity: int, n_samples: int, rng: np.random.Generator | int) -> NDArray[np.float64]:
        """Draw ``n_samples`` iid outputs for ``identity``; shape ``(n_samples, d)``."""
        ...

    def exact_epsilon(self, i: int, j: int) -> float:
        """Exact pairwise privacy loss between identities ``i`` and ``j`` at ``delta``."""
        ...

    def log_likelihood_ratio(self, x: ArrayLike, i: int, j: int) -> NDArray[np.float64]:
        """Oracle score ``log p_j(x) - log p_i(x)`` for each row of ``x``."""
        ...

    def reference_auc(self, i: int, j: int) -> float:
        """Population-optimal AUC for telling ``i`` (negative) from ``j`` (positive)."""
        ...


def _as_generator(rng: np.random.Generator | int) -> np.random.Generator:
    """Accept a Generator or a non-negative integer seed."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, bool) or not isinstance(rng, numbers.Integral) or rng < 0:
        raise ParameterError(
            f"rng must be a numpy.random.Generator or a non-negative integer seed; got {rng!r}."
        )
    return np.random.default_rng(int(rng))


def _check_n_samples(n_samples: int) -> int:
    """Check that ``n_samples`` is a non-negative integer."""
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 0:
        raise ParameterError(f"n_samples must be a non-negative integer; got {n_samples!r}.")
    return int(n_samples)


def _check_epsilon_g(epsilon_g: float, *, allow_zero: bool, family: str) -> float:
    """Check a requested global epsilon."""
    ok = (
        not isinstance(epsilon_g, bool)
        and isinstance(epsilon_g, numbers.Real)
        and math.isfinite(float(epsilon_g))
        and (float(epsilon_g) >= 0.0 if allow_zero else float(epsilon_g) > 0.0)
    )
    if not ok:
        constraint = "a finite number >= 0" if allow_zero else "a finite number > 0"
        fix = "" if allow_zero else f" Use Null(prototype_set, family={family!r}) for epsilon_g = 0."
        raise ParameterError(f"epsilon_g must be {constraint}; got {epsilon_g!r}.{fix}")
    return float(epsilon_g)


def _check_delta(delta: float) -> float:
    """Check that ``delta`` is in the open interval (0, 1)."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0.0 < float(delta) < 1.0:
        raise ParameterError(f"delta must be in the open interval (0, 1); got {delta!r}.")
    return float(delta)


def _check_prototype_set(prototype_set: PrototypeSet) -> PrototypeSet:
    """Check the prototypes argument is a PrototypeSet."""
    if not isinstance(prototype_set, PrototypeSet):
        raise ParameterError(
            f"prototype_set must be a PrototypeSet; got {type(prototype_set).__name__}. "
            "Build one with certify.benchmark.prototypes.sensitivities(array)."
        )
    return prototype_set


def _readonly(array: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return a read-only float64 copy."""
    out = np.array(array, dtype=np.float64, copy=True)
    out.setflags(write=False)
    return out


class _Base:
    """Shared plumbing: prototypes, identity checks and input conversion."""

    __slots__ = ("_ps",)

    def __init__(self, prototype_set: PrototypeSet) -> None:
        self._ps = _check_prototype_set(prototype_set)

    @property
    def prototype_set(self) -> PrototypeSet:
        """The prototypes the mechanism perturbs."""
        return self._ps

    @property
    def n_identities(self) -> int:
        """Number of valid identities."""
        return self._ps.n_identities

    def _identity(self, identity: int) -> int:
        """Validate one identity index."""
        n = self.n_identities
        if (
            isinstance(identity, bool)
            or not isinstance(identity, numbers.Integral)
            or not (0 <= identity < n)
        ):
            raise ParameterError(f"identity must be an integer in [0, {n}); got {identity!r}.")
        return int(identity)

    def _pair(self, i: int, j: int) -> tuple[int, int]:
        """Validate a pair of identity indices."""
        return self._identity(i), self._identity(j)

    def _rows(self, x: ArrayLike) -> NDArray[np.float64]:
        """Convert outputs to a 2-D float64 array with ``d`` columns."""
        arr = np.asarray(x, dtype=np.float64)
        d = self._ps.dimension
        if arr.ndim == 1:
            arr = arr[np.newaxis, :]
        if arr.ndim != 2 or arr.shape[1] != d:
            raise DataError(
                f"x must have shape (n, {d}) or ({d},); got {np.shape(x)!r}. "
                "Pass mechanism outputs, one per row."
            )
        return arr


def _gaussian_llr(
    x: NDArray[np.float64],
    ci: NDArray[np.float64],
    cj: NDArray[np.float64],
    inv_var: NDArray[np.float64] | float,
) -> NDArray[np.float64]:
    """Gaussian ``log p_j - log p_i`` with diagonal precision ``inv_var``: linear in ``x``."""
    w = (cj - ci) * inv_var
    offset = 0.5 * float(np.dot(cj + ci, w))
    out: NDArray[np.float64] = x @ w - offset
    return out


def _auc_from_scores(neg: NDArray[np.float64], pos: NDArray[np.float64]) -> float:
    """Mann-Whitney AUC ``P(pos > neg) + P(pos = neg) / 2`` from two score samples."""
    return auc(neg, pos)


class _Calibrated(_Base):
    """A mechanism calibrated to a requested ``(epsilon_g, delta)``: its two accessors."""

    __slots__ = ("_delta", "_eps")
    _delta: float
    _eps: float

    @property
    def epsilon_g(self) -> float:
        """Requested global epsilon."""
        return self._eps

    @property
    def delta(self) -> float:
        """The delta of every reference."""
        return self._delta
