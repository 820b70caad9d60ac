"""The no-information mechanisms: every identity shares one prototype (epsilon exactly 0)."""

from __future__ import annotations

from typing import Literal, final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify.benchmark._gaussian import Anisotropic, Gaussian
from certify.benchmark._laplace import Laplace
from certify.benchmark._mechanism_base import (
    DEFAULT_DELTA,
    NULL_NOISE_EPSILON,
    _Base,
)
from certify.benchmark.prototypes import PrototypeSet
from certify.errors import ParameterError

__all__ = ["Null", "NullFamily"]


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
