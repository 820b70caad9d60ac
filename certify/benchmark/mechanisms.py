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

from typing import Literal

from certify.benchmark._gaussian import Anisotropic, Gaussian, anisotropic_variances
from certify.benchmark._laplace import Laplace, laplace_reference_aucs
from certify.benchmark._mechanism_base import (
    DEFAULT_DELTA,
    NULL_NOISE_EPSILON,
    REFERENCE_AUC_DRAWS,
    REFERENCE_AUC_SEED,
    RR_GRID_BITS,
    Mechanism,
    _check_epsilon_g,
)
from certify.benchmark._null import Null
from certify.benchmark._randomized_response import RandomizedResponse
from certify.benchmark.prototypes import PrototypeSet
from certify.errors import ParameterError

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
    "MechanismFamily",
    "Null",
    "RandomizedResponse",
    "anisotropic_variances",
    "laplace_reference_aucs",
    "mechanism_for",
]


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
