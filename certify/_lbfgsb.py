"""Unbounded L-BFGS-B as ``scipy.optimize.minimize(method="L-BFGS-B", jac=True)`` runs it, faster.

This is certify's only use of a private interface of another package, kept because of what it
saves: the benchmark fits hundreds of thousands of small logistic regressions (17 iterations of
a 240 x 512 problem take about 1.3 ms), and ``minimize``'s per-call and per-evaluation
bookkeeping adds about 30% to each fit, 15-25% to a whole benchmark run. :func:`minimize_lbfgsb`
drives SciPy's own L-BFGS-B step routine (``scipy.optimize._lbfgsb.setulb``) through the loop
``minimize`` runs, so the iterates are the same bit for bit. On first use in a process the loop
is checked against ``minimize`` on a small problem; a mismatch, or any change of the private
interface, switches to ``minimize`` for good.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeAlias

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

_direct_ok: bool | None = None
"""Whether the direct loop matched ``scipy.optimize.minimize`` in this process (None: not checked)."""


def minimize_lbfgsb(
    fun: Objective, x0: NDArray[np.float64], maxiter: int, gtol: float, ftol: float, maxls: int
) -> Result:
    """Minimize ``fun`` from ``x0`` by unbounded L-BFGS-B, as ``minimize`` does.

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
        The point ``minimize`` returns (``res.x``), ``res.nit``, ``res.status == 0`` and a
        message.

    Examples
    --------
    >>> import numpy as np
    >>> x, nit, ok, _ = minimize_lbfgsb(lambda v: (float(v @ v), 2 * v), np.ones(3), 100, 1e-8, 1e-12, 20)
    >>> ok, bool(np.abs(x).max() < 1e-8)
    (True, True)
    """
    global _direct_ok
    if _direct_ok is None:
        _direct_ok = _direct_matches_minimize()
    if _direct_ok:
        try:
            return _direct(fun, x0, maxiter, gtol, ftol, maxls)
        except (TypeError, ValueError, AttributeError, ImportError):  # pragma: no cover - other scipy
            _direct_ok = False
    return _via_minimize(fun, x0, maxiter, gtol, ftol, maxls)


def _via_minimize(
    fun: Objective, x0: NDArray[np.float64], maxiter: int, gtol: float, ftol: float, maxls: int
) -> Result:
    """The reference path: ``scipy.optimize.minimize``."""
    from scipy.optimize import minimize

    res = minimize(
        fun, x0, method="L-BFGS-B", jac=True,
        options={"maxiter": maxiter, "maxls": maxls, "gtol": gtol, "ftol": ftol,
                 "maxcor": MAXCOR, "maxfun": MAXFUN},
    )
    return np.asarray(res.x, dtype=np.float64), int(res.nit), int(res.status) == 0, str(res.message)


def _direct(
    fun: Objective, x0: NDArray[np.float64], maxiter: int, gtol: float, ftol: float, maxls: int
) -> Result:
    """The loop of ``scipy.optimize._lbfgsb_py._minimize_lbfgsb`` without bounds or callback."""
    from scipy.optimize import _lbfgsb

    n = x0.shape[0]
    m = MAXCOR
    factr = ftol / np.finfo(float).eps
    nbd = np.zeros(n, np.int32)
    low = np.zeros(n, np.float64)
    high = np.zeros(n, np.float64)
    x = np.array(x0, dtype=np.float64)
    f: Any = np.array(0.0, dtype=np.float64)
    g = np.zeros((n,), dtype=np.float64)
    wa = np.zeros(2 * m * n + 5 * n + 11 * m * m + 8 * m, np.float64)
    iwa = np.zeros(3 * n, dtype=np.int32)
    task = np.zeros(2, dtype=np.int32)
    ln_task = np.zeros(2, dtype=np.int32)
    lsave = np.zeros(4, dtype=np.int32)
    isave = np.zeros(44, dtype=np.int32)
    dsave = np.zeros(29, dtype=np.float64)
    nit = 0
    nfev = 0
    cached: tuple[NDArray[np.float64], float, NDArray[np.float64]] | None = None
    while True:
        g = g.astype(np.float64)
        _lbfgsb.setulb(m, x, low, high, nbd, f, g, factr, gtol, wa, iwa, task, lsave, isave, dsave,
                       maxls, ln_task)
        if task[0] == 3:  # evaluate at x
            if cached is not None and np.array_equal(cached[0], x):
                f, g = cached[1], cached[2]
            else:
                value, grad = fun(np.copy(x))
                nfev += 1
                f, g = float(value), np.atleast_1d(np.asarray(grad, dtype=np.float64))
                cached = (np.copy(x), f, g)
        elif task[0] == 1:  # a new iterate
            nit += 1
            if nit >= maxiter:
                task[0], task[1] = 5, 504
            elif nfev > MAXFUN:
                task[0], task[1] = 5, 502
        else:
            break
    return x, nit, bool(task[0] == 4), f"lbfgsb task {int(task[0])}/{int(task[1])}"


def _direct_matches_minimize() -> bool:
    """Whether the direct loop reproduces ``minimize`` bit for bit on a small logistic problem."""
    from scipy.special import expit, log_expit

    rng = np.random.default_rng(12345)
    X = rng.normal(size=(40, 6))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(np.float64)
    sign = 2.0 * y - 1.0

    def fun(wb: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        z = X @ wb[:6] + wb[6]
        g = (expit(z) - y) / 40
        return -float(log_expit(sign * z).sum()) / 40 + 0.05 * float(wb[:6] @ wb[:6]), np.r_[
            X.T @ g + 0.1 * wb[:6], g.sum()]

    try:
        ref = _via_minimize(fun, np.zeros(7), 1000, 1e-8, 64 * np.finfo(float).eps, 50)
        ours = _direct(fun, np.zeros(7), 1000, 1e-8, 64 * np.finfo(float).eps, 50)
    except Exception:  # any interface change means: use minimize
        return False
    return bool(np.array_equal(ref[0], ours[0]) and ref[1] == ours[1] and ref[2] == ours[2])
