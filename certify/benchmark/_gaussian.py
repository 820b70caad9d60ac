"""The calibrated Gaussian mechanisms: isotropic (paper Eq. 20) and anisotropic (App. C)."""

from __future__ import annotations

import math
import numbers
from typing import final

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr

from certify.benchmark._mechanism_base import (
    _SQRT2,
    DEFAULT_DELTA,
    _as_generator,
    _Calibrated,
    _check_delta,
    _check_epsilon_g,
    _check_n_samples,
    _gaussian_llr,
    _readonly,
)
from certify.benchmark.prototypes import PrototypeSet, array_sha256, pairwise_distances
from certify.errors import ParameterError
from certify.stats.gaussian import analytic_gaussian_epsilon, calibrate_sigma

__all__ = ["Anisotropic", "Gaussian", "anisotropic_variances"]


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
