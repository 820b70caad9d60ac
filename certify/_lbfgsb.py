"""Unbounded L-BFGS-B through :func:`scipy.optimize.minimize`, with the options certify's fits use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeAlias

import numpy as np
from numpy.typing import NDArray

__all__ = ["minimize_lbfgsb"]

Objective: TypeAlias = Callable[[NDArray[np.float64]], tuple[float, NDArray[np.float64]]]
"""A function returning the value and the gradient at a point."""
Result: TypeAlias = tuple[NDArray[np.float64], int, bool, str]
"""``(x, iterations, converged, message)``."""

MAXCOR: Final = 10
"""Stored correction pairs (``minimize``'s default ``maxcor``)."""
MAXFUN: Final = 15_000
"""Largest number of evaluations (``minimize``'s default ``maxfun``)."""


def minimize_lbfgsb(
    fun: Objective, x0: NDArray[np.float64], maxiter: int, gtol: float, ftol: float, maxls: int
) -> Result:
    """Minimize ``fun`` from ``x0`` by unbounded L-BFGS-B (``scipy.optimize.minimize``).

    Parameters
    ----------
    fun : callable
        ``x -> (value, gradient)``.
    x0 : ndarray of float64
        The starting point.
    maxiter, gtol, ftol, maxls
        The ``minimize`` options of the same names (``maxcor = 10``, ``maxfun = 15000``).

    Returns
    -------
    (x, iterations, converged, message)
        ``res.x``, ``res.nit``, ``res.status == 0`` and ``res.message``.

    Examples
    --------
    >>> import numpy as np
    >>> x, nit, ok, _ = minimize_lbfgsb(lambda v: (float(v @ v), 2 * v), np.ones(3), 100, 1e-8, 1e-12, 20)
    >>> ok, bool(np.abs(x).max() < 1e-8)
    (True, True)
    """
    from scipy.optimize import minimize

    res = minimize(
        fun, x0, method="L-BFGS-B", jac=True,
        options={"maxiter": maxiter, "maxls": maxls, "gtol": gtol, "ftol": ftol,
                 "maxcor": MAXCOR, "maxfun": MAXFUN},
    )
    return np.asarray(res.x, dtype=np.float64), int(res.nit), int(res.status) == 0, str(res.message)
