"""Benchmark mechanisms with exact pairwise privacy references (paper Sec. 6.1, App. B and C).

Every mechanism maps an identity ``i`` of a :class:`~certify.benchmark.prototypes.PrototypeSet`
to a random vector in ``R^d`` and knows, exactly, (a) the pairwise privacy loss
``exact_epsilon(i, j)`` at its ``delta``, (b) the log-likelihood ratio
``log p_j(x) - log p_i(x)`` (the oracle score of Sec. 6.5; larger means "more like ``j``") and
(c) a population-optimal AUC reference ``reference_auc(i, j)`` (Eq. 21).

The references are exact for the ideal real-valued mechanisms; the samples are float64 Monte
Carlo draws and carry no bit-level privacy claim (paper Sec. 6.1).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Final, Literal, Protocol, final, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr
from scipy.stats import rankdata

from certify.benchmark.prototypes import PrototypeSet, array_sha256, pairwise_distances
from certify.errors import DataError, ParameterError
from certify.stats.gaussian import analytic_gaussian_epsilon, calibrate_sigma

__all__ = [
    "DEFAULT_DELTA",
    "NULL_NOISE_EPSILON",
    "REFERENCE_AUC_DRAWS",
    "REFERENCE_AUC_SEED",
    "RR_GRID_BITS",
    "Anisotropic",
    "Gaussian",
    "Laplace",
    "Mechanism",
    "Null",
    "RandomizedResponse",
    "anisotropic_variances",
    "laplace_reference_aucs",
    "mechanism_for",
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
_CHUNK_ROWS: Final = 2_000
_LLR_BLOCK_ROWS: Final = 512


@runtime_checkable
class Mechanism(Protocol):
    """What every benchmark mechanism offers (structural type; the classes below conform)."""

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


def _laplace_noise(gen: np.random.Generator, scale: float, n: int, d: int) -> NDArray[np.float64]:
    """Iid Laplace(0, scale) noise of shape ``(n, d)`` as a standard exponential times a random sign.

    The ziggurat exponential plus one random bit per entry is about three times faster than
    ``Generator.laplace`` (inverse transform with a logarithm) and has the same law.
    """
    out = gen.standard_exponential((n, d))
    size = n * d
    bits = np.unpackbits(gen.integers(0, 256, size=(size + 7) // 8, dtype=np.uint8), count=size)
    out *= (scale * (1.0 - 2.0 * bits.astype(np.float64))).reshape(n, d)
    return out


def _l1_difference(
    x: NDArray[np.float64], ci: NDArray[np.float64], cj: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``||x - c_i||_1 - ||x - c_j||_1`` per row."""
    out: NDArray[np.float64] = _shifted_l1(x, -ci) - _shifted_l1(x, -cj)
    return out


def _shifted_l1(noise: NDArray[np.float64], shift: NDArray[np.float64]) -> NDArray[np.float64]:
    """``||noise_r + shift||_1`` per row, in cache-sized blocks with one reused buffer."""
    n = noise.shape[0]
    out = np.empty(n, dtype=np.float64)
    buf = np.empty((min(n, _LLR_BLOCK_ROWS), noise.shape[1]), dtype=np.float64)
    for start in range(0, n, _LLR_BLOCK_ROWS):
        stop = min(start + _LLR_BLOCK_ROWS, n)
        v = buf[: stop - start]
        np.add(noise[start:stop], shift, out=v)
        np.abs(v, out=v)
        out[start:stop] = v.sum(axis=1)
    return out


def _auc_from_scores(neg: NDArray[np.float64], pos: NDArray[np.float64]) -> float:
    """Mann-Whitney AUC ``P(pos > neg) + P(pos = neg) / 2`` from two score samples."""
    ranks = rankdata(np.concatenate([neg, pos]))
    n0, n1 = neg.size, pos.size
    return float((ranks[n0:].sum() - n1 * (n1 + 1) / 2.0) / (n0 * n1))


@final
class Laplace(_Base):
    """Coordinatewise Laplace mechanism ``c_i + eta``, ``eta_l ~ Laplace(0, b)`` (Eq. 18-19).

    Parameters
    ----------
    prototype_set : PrototypeSet
        The identity prototypes.
    epsilon_g : float
        Requested global pure-DP epsilon, finite and ``> 0``; ``b = Delta_1 / epsilon_g``.

    Raises
    ------
    ParameterError
        If ``epsilon_g`` is not a positive finite number (use :class:`Null` for 0).

    Notes
    -----
    Global guarantee: pure ``epsilon_g``-DP on the finite identity domain because
    ``Delta_1`` is the exact maximal L1 distance. Pairwise exact value (Eq. 19):
    ``epsilon_ij = ||c_i - c_j||_1 / b`` (tight: the log density ratio attains it). ``delta = 0``.

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> ps = dispersed()
    >>> m = Laplace(ps, 2.0)
    >>> round(m.exact_epsilon(*ps.l1_pair), 12)
    2.0
    """

    __slots__ = ("_b", "_eps")
    _b: float
    _eps: float

    def __init__(self, prototype_set: PrototypeSet, epsilon_g: float) -> None:
        super().__init__(prototype_set)
        self._eps = _check_epsilon_g(epsilon_g, allow_zero=False, family="laplace")
        self._b = self._ps.delta_1 / self._eps

    @property
    def name(self) -> str:
        """``"laplace"``."""
        return "laplace"

    @property
    def epsilon_g(self) -> float:
        """Requested global epsilon."""
        return self._eps

    @property
    def delta(self) -> float:
        """0.0: the guarantee is pure DP."""
        return 0.0

    @property
    def scale(self) -> float:
        """Laplace scale ``b = Delta_1 / epsilon_g``; per-coordinate variance ``2 b^2``."""
        return self._b

    def sample(self, identity: int, n_samples: int, rng: np.random.Generator | int) -> NDArray[np.float64]:
        """Draw ``n_samples`` outputs ``c_i + eta``; shape ``(n_samples, d)``."""
        i = self._identity(identity)
        n = _check_n_samples(n_samples)
        gen = _as_generator(rng)
        out = _laplace_noise(gen, self._b, n, self._ps.dimension)
        out += self._ps.prototypes[i]
        return out

    def exact_epsilon(self, i: int, j: int) -> float:
        """Exact pure-DP pairwise epsilon ``||c_i - c_j||_1 / b`` (Eq. 19)."""
        a, c = self._pair(i, j)
        return float(self._ps.l1_distances[a, c]) / self._b

    def log_likelihood_ratio(self, x: ArrayLike, i: int, j: int) -> NDArray[np.float64]:
        """``(||x - c_i||_1 - ||x - c_j||_1) / b`` for each row of ``x``; shape ``(n,)``."""
        a, c = self._pair(i, j)
        rows = self._rows(x)
        out = _l1_difference(rows, self._ps.prototypes[a], self._ps.prototypes[c])
        out /= self._b
        return out

    def reference_auc(
        self,
        i: int,
        j: int,
        n_draws: int = REFERENCE_AUC_DRAWS,
        seed: int = REFERENCE_AUC_SEED,
    ) -> float:
        """Monte Carlo AUC of the exact likelihood-ratio score (paper Sec. 6.2).

        ``n_draws`` outputs per class from a stream seeded by ``(seed, i, j)``; the score is
        :meth:`log_likelihood_ratio` and ties count one half. Standard error at most
        ``sqrt(1 / (12 n_draws))``-ish, about 0.002 for 20,000 draws.
        """
        return laplace_reference_aucs(self._ps, [self._eps], i, j, n_draws=n_draws, seed=seed)[0]


def laplace_reference_aucs(
    prototype_set: PrototypeSet,
    epsilons: Sequence[float],
    i: int,
    j: int,
    n_draws: int = REFERENCE_AUC_DRAWS,
    seed: int = REFERENCE_AUC_SEED,
) -> list[float]:
    """:meth:`Laplace.reference_auc` of one pair at several epsilons, sharing the random draws.

    Parameters
    ----------
    prototype_set : PrototypeSet
        The prototypes.
    epsilons : sequence of float
        Requested global epsilons (each > 0).
    i, j : int
        The pair (negative, positive).
    n_draws, seed : int
        As in :meth:`Laplace.reference_auc`.

    Returns
    -------
    list of float
        Entry ``k`` is ``Laplace(prototype_set, epsilons[k]).reference_auc(i, j, n_draws, seed)``
        (which calls this function): the Mann-Whitney AUC of the exact log-likelihood ratio on
        ``n_draws`` outputs per class. With ``x = c + b L`` and standard Laplace noise ``L``, the
        ratio ``(||x - c_i||_1 - ||x - c_j||_1) / b`` is ``||L||_1 - ||L + (c_i - c_j) / b||_1``
        for class ``i`` (and symmetrically for ``j``), so the noise is drawn once per pair
        (a standard exponential times a random sign, from a stream seeded by ``(seed, i, j)``)
        and only the shift depends on epsilon.
    """
    mechs = [Laplace(prototype_set, eps) for eps in epsilons]
    if not mechs:
        return []
    a, c = mechs[0]._pair(i, j)
    n = _check_n_samples(n_draws)
    if n < 1:
        raise ParameterError(f"n_draws must be a positive integer; got {n_draws!r}.")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer; got {seed!r}.")
    gen = np.random.default_rng([int(seed), a, c])
    protos = prototype_set.prototypes
    d = prototype_set.dimension
    diff = protos[a] - protos[c]
    scores: list[list[list[NDArray[np.float64]]]] = [[[], []] for _ in mechs]
    for side in (0, 1):
        for start in range(0, n, _CHUNK_ROWS):
            m = min(_CHUNK_ROWS, n - start)
            noise = gen.standard_exponential((m, d))
            size = m * d
            bits = np.unpackbits(gen.integers(0, 256, size=(size + 7) // 8, dtype=np.uint8), count=size)
            noise *= (1.0 - 2.0 * bits.astype(np.float64)).reshape(m, d)
            own = np.abs(noise).sum(axis=1)
            for k, mech in enumerate(mechs):
                if side == 0:  # x = c_a + b L: (|x - c_a| - |x - c_c|) / b = |L| - |L + (c_a - c_c) / b|
                    llr = own - _shifted_l1(noise, diff / mech.scale)
                else:  # x = c_c + b L: |L - (c_a - c_c) / b| - |L|
                    llr = _shifted_l1(noise, -diff / mech.scale) - own
                scores[k][side].append(llr)
    return [_auc_from_scores(np.concatenate(neg), np.concatenate(pos)) for neg, pos in scores]


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


@final
class Gaussian(_Calibrated):
    """Isotropic Gaussian mechanism ``c_i + xi``, ``xi ~ N(0, sigma^2 I)`` (Eq. 20).

    Parameters
    ----------
    prototype_set : PrototypeSet
        The identity prototypes.
    epsilon_g : float
        Requested global epsilon, finite and ``> 0``.
    delta : float, default 1e-5
        The delta of the guarantee and of every pairwise reference.

    Raises
    ------
    ParameterError
        On a non-positive ``epsilon_g`` (use :class:`Null`) or ``delta`` outside (0, 1).

    Notes
    -----
    ``sigma = calibrate_sigma(epsilon_g, delta, Delta_2)`` (analytic Gaussian mechanism), so the
    mechanism is ``(epsilon_g, delta)``-DP on the identity domain. The exact pairwise reference is
    ``analytic_gaussian_epsilon(sigma, ||c_i - c_j||_2, delta)``: the smallest epsilon at which
    the pair's two output laws satisfy the ``delta`` constraint in both directions. The AUC
    reference is Eq. 21, ``Phi(||c_i - c_j||_2 / (sqrt(2) sigma))``.

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> ps = dispersed()
    >>> m = Gaussian(ps, 8.0)
    >>> round(m.exact_epsilon(*ps.l2_pair), 9)
    8.0
    """

    __slots__ = ("_sigma",)
    _sigma: float

    def __init__(self, prototype_set: PrototypeSet, epsilon_g: float, delta: float = DEFAULT_DELTA) -> None:
        super().__init__(prototype_set)
        self._eps = _check_epsilon_g(epsilon_g, allow_zero=False, family="gaussian")
        self._delta = _check_delta(delta)
        self._sigma = calibrate_sigma(self._eps, self._delta, self._ps.delta_2)

    @property
    def name(self) -> str:
        """``"gaussian"``."""
        return "gaussian"

    @property
    def sigma(self) -> float:
        """Noise standard deviation per coordinate."""
        return self._sigma

    def sample(self, identity: int, n_samples: int, rng: np.random.Generator | int) -> NDArray[np.float64]:
        """Draw ``n_samples`` outputs ``c_i + sigma z``; shape ``(n_samples, d)``."""
        i = self._identity(identity)
        n = _check_n_samples(n_samples)
        gen = _as_generator(rng)
        out: NDArray[np.float64] = gen.standard_normal((n, self._ps.dimension))
        out *= self._sigma
        out += self._ps.prototypes[i]
        return out

    def exact_epsilon(self, i: int, j: int) -> float:
        """Exact pairwise epsilon at ``delta`` from the analytic profile (Eq. 20)."""
        a, c = self._pair(i, j)
        return analytic_gaussian_epsilon(self._sigma, float(self._ps.l2_distances[a, c]), self._delta)

    def log_likelihood_ratio(self, x: ArrayLike, i: int, j: int) -> NDArray[np.float64]:
        """``(||x - c_i||^2 - ||x - c_j||^2) / (2 sigma^2)`` per row; shape ``(n,)``."""
        a, c = self._pair(i, j)
        return _gaussian_llr(self._rows(x), self._ps.prototypes[a], self._ps.prototypes[c], self._sigma**-2)

    def reference_auc(self, i: int, j: int) -> float:
        """Population-optimal AUC ``Phi(||c_i - c_j||_2 / (sqrt(2) sigma))`` (Eq. 21)."""
        a, c = self._pair(i, j)
        return float(ndtr(float(self._ps.l2_distances[a, c]) / (_SQRT2 * self._sigma)))


def anisotropic_variances(dimension: int, condition: float) -> NDArray[np.float64]:
    """Diagonal ``Lambda_kk = C^(1/2 - k/(d-1))``: descending, geometric mean 1, ratio ``C``.

    Parameters
    ----------
    dimension : int
        ``d >= 2``.
    condition : float
        Condition number ``C >= 1`` (largest over smallest entry).

    Returns
    -------
    ndarray of shape (d,)
        Read-only variance multipliers.

    Raises
    ------
    ParameterError
        If ``dimension < 2`` or ``condition`` is not a finite number ``>= 1``.

    Notes
    -----
    Paper App. C. The exponents ``1/2 - k/(d-1)`` average to zero, so the geometric mean is one
    up to rounding.

    Examples
    --------
    >>> lam = anisotropic_variances(3, 100.0)
    >>> [round(float(v), 6) for v in lam]
    [10.0, 1.0, 0.1]
    """
    if isinstance(dimension, bool) or not isinstance(dimension, numbers.Integral) or dimension < 2:
        raise ParameterError(f"dimension must be an integer >= 2; got {dimension!r}.")
    if (
        isinstance(condition, bool)
        or not isinstance(condition, numbers.Real)
        or not math.isfinite(float(condition))
        or float(condition) < 1.0
    ):
        raise ParameterError(f"condition must be a finite number >= 1; got {condition!r}.")
    k = np.arange(int(dimension), dtype=np.float64)
    lam = np.exp(math.log(float(condition)) * (0.5 - k / (int(dimension) - 1)))
    return _readonly(lam)


@final
class Anisotropic(_Calibrated):
    """Anisotropic Gaussian mechanism ``c_i + s Lambda^(1/2) z`` (paper App. C).

    Parameters
    ----------
    prototype_set : PrototypeSet
        The identity prototypes (dimension ``>= 2``).
    epsilon_g : float
        Requested global epsilon, finite and ``> 0``.
    delta : float, default 1e-5
        The delta of the guarantee and of every pairwise reference.
    condition : float, default 100
        Condition number ``C`` of the diagonal ``Lambda`` (:func:`anisotropic_variances`).

    Raises
    ------
    ParameterError
        On invalid ``epsilon_g``, ``delta`` or ``condition``.

    Notes
    -----
    Whitening by ``Lambda^(-1/2)`` turns the mechanism into the isotropic Gaussian mechanism with
    noise ``s`` on the whitened prototypes. So ``s = calibrate_sigma(epsilon_g, delta, D_Lambda)``
    with ``D_Lambda = max_{i != j} ||c_i - c_j||_{Lambda^-1}``, each pair's exact reference is the
    analytic profile at its whitened distance, and the AUC reference is
    ``Phi(||c_i - c_j||_{Lambda^-1} / (sqrt(2) s))``. The oracle score uses the whitening
    direction ``Lambda^-1 (c_j - c_i)``.

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> m = Anisotropic(dispersed(), 8.0)
    >>> round(m.whitened_sensitivity, 3)
    2.471
    """

    __slots__ = ("_condition", "_lam", "_s", "_wd")

    def __init__(
        self,
        prototype_set: PrototypeSet,
        epsilon_g: float,
        delta: float = DEFAULT_DELTA,
        condition: float = 100.0,
    ) -> None:
        super().__init__(prototype_set)
        self._eps = _check_epsilon_g(epsilon_g, allow_zero=False, family="anisotropic")
        self._delta = _check_delta(delta)
        self._lam = anisotropic_variances(self._ps.dimension, condition)
        self._condition = float(condition)
        self._wd = _readonly(pairwise_distances(self._ps.prototypes / np.sqrt(self._lam), 2))
        self._s = calibrate_sigma(self._eps, self._delta, self.whitened_sensitivity)

    @property
    def name(self) -> str:
        """``"anisotropic"``."""
        return "anisotropic"

    @property
    def condition(self) -> float:
        """Condition number ``C`` of ``Lambda``."""
        return self._condition

    @property
    def variances(self) -> NDArray[np.float64]:
        """Read-only diagonal of ``Lambda`` (noise variance of coordinate ``k`` is ``s^2 Lambda_kk``)."""
        return self._lam

    @property
    def variances_sha256(self) -> str:
        """SHA-256 of the diagonal of ``Lambda`` (recorded with the experiment)."""
        return array_sha256(self._lam)

    @property
    def scale(self) -> float:
        """The calibrated scale ``s``."""
        return self._s

    @property
    def whitened_distances(self) -> NDArray[np.float64]:
        """Read-only matrix of ``||c_i - c_j||_{Lambda^-1}``."""
        return self._wd

    @property
    def whitened_sensitivity(self) -> float:
        """``D_Lambda = max_{i != j} ||c_i - c_j||_{Lambda^-1}``."""
        return float(self._wd.max())

    def sample(self, identity: int, n_samples: int, rng: np.random.Generator | int) -> NDArray[np.float64]:
        """Draw ``n_samples`` outputs ``c_i + s Lambda^(1/2) z``; shape ``(n_samples, d)``."""
        i = self._identity(identity)
        n = _check_n_samples(n_samples)
        gen = _as_generator(rng)
        out: NDArray[np.float64] = gen.standard_normal((n, self._ps.dimension))
        out *= self._s * np.sqrt(self._lam)
        out += self._ps.prototypes[i]
        return out

    def exact_epsilon(self, i: int, j: int) -> float:
        """Exact pairwise epsilon at ``delta`` from the whitened distance."""
        a, c = self._pair(i, j)
        return analytic_gaussian_epsilon(self._s, float(self._wd[a, c]), self._delta)

    def log_likelihood_ratio(self, x: ArrayLike, i: int, j: int) -> NDArray[np.float64]:
        """Gaussian log-likelihood ratio with covariance ``s^2 Lambda``; shape ``(n,)``."""
        a, c = self._pair(i, j)
        inv_var = 1.0 / (self._s**2 * self._lam)
        return _gaussian_llr(self._rows(x), self._ps.prototypes[a], self._ps.prototypes[c], inv_var)

    def reference_auc(self, i: int, j: int) -> float:
        """``Phi(||c_i - c_j||_{Lambda^-1} / (sqrt(2) s))``: Eq. 21 after whitening."""
        a, c = self._pair(i, j)
        return float(ndtr(float(self._wd[a, c]) / (_SQRT2 * self._s)))


NullFamily = Literal["laplace", "gaussian", "anisotropic"]


@final
class Null(_Base):
    """The no-information mechanism: every identity maps to prototype 0, then common noise.

    Parameters
    ----------
    prototype_set : PrototypeSet
        Gives the dimension, the number of identities, the shared prototype ``c_0`` and the
        sensitivities that fix the noise scale.
    family : {"laplace", "gaussian", "anisotropic"}, default "laplace"
        Noise law: that family's mechanism at ``epsilon_g = 0.1`` (Laplace ``b = 10 Delta_1``;
        Gaussian ``sigma = calibrate_sigma(0.1, delta, Delta_2)``; anisotropic ``s Lambda^(1/2)``
        with ``s`` calibrated at 0.1 and ``condition``).
    delta : float, default 1e-5
        Reported ``delta`` for the Gaussian families (the reference 0 holds at every delta).
    condition : float, default 100
        Condition number for the anisotropic family.

    Raises
    ------
    ParameterError
        On an unknown ``family`` or invalid ``delta``.

    Notes
    -----
    Paper Sec. 6.1, "A case with no identity information": all identity-conditioned output laws
    are identical, so every pairwise and the global epsilon equal 0 exactly (at ``delta = 0``
    already). The oracle log-likelihood ratio is identically 0 (uninformative) and the AUC
    reference is 0.5.

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> m = Null(dispersed(), family="gaussian")
    >>> m.exact_epsilon(0, 1), m.reference_auc(0, 1)
    (0.0, 0.5)
    """

    __slots__ = ("_delta", "_family", "_noise")

    def __init__(
        self,
        prototype_set: PrototypeSet,
        family: NullFamily = "laplace",
        delta: float = DEFAULT_DELTA,
        condition: float = 100.0,
    ) -> None:
        super().__init__(prototype_set)
        noise: Laplace | Gaussian | Anisotropic
        if family == "laplace":
            noise = Laplace(self._ps, NULL_NOISE_EPSILON)
            self._delta = 0.0
        elif family == "gaussian":
            noise = Gaussian(self._ps, NULL_NOISE_EPSILON, delta)
            self._delta = noise.delta
        elif family == "anisotropic":
            noise = Anisotropic(self._ps, NULL_NOISE_EPSILON, delta, condition)
            self._delta = noise.delta
        else:
            raise ParameterError(f"family must be 'laplace', 'gaussian' or 'anisotropic'; got {family!r}.")
        self._family: NullFamily = family
        self._noise = noise

    @property
    def name(self) -> str:
        """``"null-<family>"``."""
        return f"null-{self._family}"

    @property
    def family(self) -> NullFamily:
        """The noise family."""
        return self._family

    @property
    def epsilon_g(self) -> float:
        """0.0: no identity information reaches the output."""
        return 0.0

    @property
    def delta(self) -> float:
        """0 for the Laplace family, the given delta otherwise (the reference holds at any)."""
        return self._delta

    @property
    def noise_mechanism(self) -> Laplace | Gaussian | Anisotropic:
        """The mechanism at ``epsilon_g = 0.1`` whose noise law is reused."""
        return self._noise

    def sample(self, identity: int, n_samples: int, rng: np.random.Generator | int) -> NDArray[np.float64]:
        """Draw ``n_samples`` outputs ``c_0 + noise``, whatever ``identity`` is."""
        self._identity(identity)
        return self._noise.sample(0, n_samples, rng)

    def exact_epsilon(self, i: int, j: int) -> float:
        """0.0 for every pair."""
        self._pair(i, j)
        return 0.0

    def log_likelihood_ratio(self, x: ArrayLike, i: int, j: int) -> NDArray[np.float64]:
        """Identically 0 (the laws coincide); shape ``(n,)``."""
        self._pair(i, j)
        return np.zeros(self._rows(x).shape[0], dtype=np.float64)

    def reference_auc(self, i: int, j: int) -> float:
        """0.5 for every pair."""
        self._pair(i, j)
        return 0.5


@final
class RandomizedResponse(_Base):
    """``K``-ary randomized response over prototypes, with an integer keep threshold (App. B).

    Parameters
    ----------
    prototype_set : PrototypeSet
        The prototypes; labels are ``0 .. K - 1`` and must have distinct prototypes.
    epsilon_g : float
        Requested epsilon, finite and ``>= 0``.
    K : int or None, default None
        Number of labels, ``2 <= K <= n_identities``; ``None`` means all prototypes
        (``K = 400`` for the paper's sets).

    Raises
    ------
    ParameterError
        On invalid ``epsilon_g`` or ``K``.
    DataError
        If two of the first ``K`` prototypes coincide (outputs would not identify labels).

    Notes
    -----
    Given identity ``i`` the mechanism draws a uniform 53-bit integer ``u`` and releases ``c_i``
    if ``u < T``, else the prototype of a label drawn uniformly from the other ``K - 1``. The
    threshold ``T = round(p 2^53)`` represents the ideal probability
    ``p = e^epsilon / (e^epsilon + K - 1)`` exactly on the ``2^53`` grid, so the mechanism is
    pure DP with the *realized* epsilon ``|ln((T / 2^53) / ((1 - T / 2^53) / (K - 1)))|``, which
    :meth:`exact_epsilon` returns for every pair ``i != j`` (it differs from the request by
    rounding; it is ``inf`` when ``T = 2^53``, i.e. the requested epsilon is too large for the
    grid). ``delta = 0``.

    No continuous noise is added: outputs are exact copies of prototypes, so samples contain many
    exact ties (repeated rows) and a score is constant on each output value. Estimators that assume
    continuous data (density estimates, ROC curves without tie handling) must account for this.
    The oracle score is the discrete log-likelihood ratio: ``+epsilon`` when the output is
    ``c_j``, ``-epsilon`` when it is ``c_i``, 0 otherwise.

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> m = RandomizedResponse(dispersed(), 2.0)
    >>> round(m.epsilon_realized, 12), m.threshold < 2**53
    (2.0, True)
    """

    __slots__ = ("_eps", "_k", "_l", "_threshold")
    _eps: float
    _k: int
    _l: float
    _threshold: int

    def __init__(self, prototype_set: PrototypeSet, epsilon_g: float, K: int | None = None) -> None:
        super().__init__(prototype_set)
        self._eps = _check_epsilon_g(epsilon_g, allow_zero=True, family="randomized_response")
        n = self._ps.n_identities
        k = n if K is None else K
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 2 <= k <= n:
            raise ParameterError(f"K must be an integer in [2, {n}] (or None); got {K!r}.")
        self._k = int(k)
        sub = self._ps.l2_distances[: self._k, : self._k]
        if self._k > 1 and float(sub[np.triu_indices(self._k, 1)].min()) <= 0.0:
            raise DataError("prototypes must be distinct among the first K labels; got a repeated prototype.")
        self._threshold = _rr_threshold(self._eps, self._k)
        grid = 1 << RR_GRID_BITS
        t = self._threshold
        if t >= grid:
            self._l = math.inf
        else:
            self._l = math.log(t) + math.log(self._k - 1) - math.log(grid - t)

    @property
    def name(self) -> str:
        """``"randomized_response"``."""
        return "randomized_response"

    @property
    def epsilon_g(self) -> float:
        """Requested epsilon (see :attr:`epsilon_realized` for the exact one)."""
        return self._eps

    @property
    def epsilon_realized(self) -> float:
        """Realized pure-DP epsilon of the integer threshold."""
        return abs(self._l)

    @property
    def delta(self) -> float:
        """0.0: pure DP."""
        return 0.0

    @property
    def n_labels(self) -> int:
        """Number of labels ``K``."""
        return self._k

    @property
    def n_identities(self) -> int:
        """Valid identities are the ``K`` labels."""
        return self._k

    @property
    def threshold(self) -> int:
        """Integer keep threshold ``T`` on the ``2^53`` grid."""
        return self._threshold

    @property
    def keep_probability(self) -> float:
        """``T / 2^53``, the exact probability of releasing the true prototype."""
        return self._threshold / float(1 << RR_GRID_BITS)

    def sample_labels(
        self, identity: int, n_samples: int, rng: np.random.Generator | int
    ) -> NDArray[np.int64]:
        """Draw the released labels (not prototypes) for ``identity``; shape ``(n_samples,)``."""
        i = self._identity(identity)
        n = _check_n_samples(n_samples)
        gen = _as_generator(rng)
        u = gen.integers(0, 1 << RR_GRID_BITS, size=n, dtype=np.int64)
        other = gen.integers(0, self._k - 1, size=n, dtype=np.int64)
        other += other >= i
        labels: NDArray[np.int64] = np.where(u < self._threshold, np.int64(i), other)
        return labels

    def sample(self, identity: int, n_samples: int, rng: np.random.Generator | int) -> NDArray[np.float64]:
        """Draw ``n_samples`` released prototypes for ``identity``; shape ``(n_samples, d)``."""
        labels = self.sample_labels(identity, n_samples, rng)
        out: NDArray[np.float64] = self._ps.prototypes[labels]
        return out

    def exact_epsilon(self, i: int, j: int) -> float:
        """Realized epsilon for ``i != j`` (the same for every pair); 0 for ``i == j``."""
        a, c = self._pair(i, j)
        return 0.0 if a == c else self.epsilon_realized

    def log_likelihood_ratio(self, x: ArrayLike, i: int, j: int) -> NDArray[np.float64]:
        """Discrete LR: ``L`` if a row equals ``c_j``, ``-L`` if it equals ``c_i``, else 0."""
        a, c = self._pair(i, j)
        rows = self._rows(x)
        out = np.zeros(rows.shape[0], dtype=np.float64)
        if a == c:
            return out
        out[np.all(rows == self._ps.prototypes[c], axis=1)] = self._l
        out[np.all(rows == self._ps.prototypes[a], axis=1)] = -self._l
        return out

    def reference_auc(self, i: int, j: int) -> float:
        """Exact AUC of the discrete LR score, ties counting one half."""
        a, c = self._pair(i, j)
        if a == c or self._l == 0.0:
            return 0.5
        grid = float(1 << RR_GRID_BITS)
        p = self._threshold / grid
        q = (grid - self._threshold) / grid / (self._k - 1)
        rest = max(0.0, 1.0 - p - q)
        sgn = 1.0 if self._l > 0 else -1.0
        # Score values in increasing order: -|L|, 0, +|L|.
        neg = np.array([p, rest, q]) if sgn > 0 else np.array([q, rest, p])
        pos = neg[::-1]
        greater = sum(pos[u] * neg[:u].sum() for u in range(3))
        ties = float(np.dot(pos, neg))
        return float(greater + 0.5 * ties)


def _rr_threshold(epsilon: float, k: int) -> int:
    """``round(p 2^53)`` for ``p = e^eps / (e^eps + K - 1)``, via the complement when ``p > 1/2``."""
    grid = 1 << RR_GRID_BITS
    # q = 1 - p = (K - 1) e^-eps / (1 + (K - 1) e^-eps), accurate even when it is tiny.
    r = (k - 1) * math.exp(-epsilon)
    if r < 1.0:
        q = r / (1.0 + r)
        return grid - round(q * grid)
    p = 1.0 / (1.0 + r)
    return round(p * grid)


MechanismFamily = Literal["laplace", "gaussian", "anisotropic", "randomized_response"]


def mechanism_for(
    family: MechanismFamily,
    prototype_set: PrototypeSet,
    epsilon_g: float,
    delta: float = DEFAULT_DELTA,
) -> Mechanism:
    """The benchmark mechanism of a family at a requested global epsilon (0 gives the null).

    Parameters
    ----------
    family : {"laplace", "gaussian", "anisotropic", "randomized_response"}
        Mechanism family.
    prototype_set : PrototypeSet
        The prototypes.
    epsilon_g : float
        Requested global epsilon, finite and ``>= 0``.
    delta : float, default 1e-5
        Delta for the Gaussian families.

    Returns
    -------
    Mechanism
        ``Null(prototype_set, family)`` at ``epsilon_g == 0`` for the additive-noise families,
        otherwise the family's mechanism. Randomized response at 0 is itself (``p = 1/K`` up
        to the grid rounding, so its realized epsilon is ~1e-14, not exactly 0).

    Raises
    ------
    ParameterError
        On an unknown family or invalid parameters.

    Examples
    --------
    >>> from certify.benchmark.prototypes import dispersed
    >>> mechanism_for("gaussian", dispersed(), 0.0).name
    'null-gaussian'
    """
    eps = _check_epsilon_g(epsilon_g, allow_zero=True, family=str(family))
    if family == "randomized_response":
        return RandomizedResponse(prototype_set, eps)
    if family not in ("laplace", "gaussian", "anisotropic"):
        raise ParameterError(
            f"family must be 'laplace', 'gaussian', 'anisotropic' or 'randomized_response'; got {family!r}."
        )
    if eps == 0.0:
        return Null(prototype_set, family, delta)
    if family == "laplace":
        return Laplace(prototype_set, eps)
    if family == "gaussian":
        return Gaussian(prototype_set, eps, delta)
    return Anisotropic(prototype_set, eps, delta)
