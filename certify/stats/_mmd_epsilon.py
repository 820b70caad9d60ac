"""From an MMD value to epsilon: the MMD-TV map (paper Eq. 12-14) and the hockey-stick map."""

from __future__ import annotations

import math
import numbers
from typing import Final

from certify.errors import ParameterError

__all__ = ["clipped_mmd", "hockey_stick_epsilon", "mmd_pure_dp_epsilon_lower", "mmd_tv_epsilon"]

_SQRT2: Final = math.sqrt(2.0)


def _check_mmd(mmd: float) -> float:
    """Validate an MMD value for a kernel bounded by 1: a number in [0, 2]."""
    if isinstance(mmd, bool) or not isinstance(mmd, numbers.Real) or not 0.0 <= mmd <= 2.0:
        raise ParameterError(
            f"mmd must be a number in [0, 2] (the MMD of a kernel with k(x, x) <= 1); got {mmd!r}. "
            "Pass the clipped square root clipped_mmd(mmd2), not the squared statistic."
        )
    return float(mmd)


# ------------------------------------------------------------------------------------ distances


def clipped_mmd(mmd2: float) -> float:
    """Return the MMD estimate the paper reports: ``sqrt(max(mmd2, 0))``.

    Parameters
    ----------
    mmd2 : float
        A squared-MMD estimate such as :func:`mmd2_unbiased` (may be negative).

    Returns
    -------
    float
        ``sqrt(max(mmd2, 0))``.

    Raises
    ------
    ParameterError
        If ``mmd2`` is not a finite real number.

    Notes
    -----
    Sec. 4.3: clipping and the square root make the statistic biased; it is a point estimate, not
    a lower confidence bound.

    Examples
    --------
    >>> clipped_mmd(0.25), clipped_mmd(-0.01)
    (0.5, 0.0)
    """
    if isinstance(mmd2, bool) or not isinstance(mmd2, numbers.Real) or not math.isfinite(mmd2):
        raise ParameterError(f"mmd2 must be a finite real number; got {mmd2!r}.")
    return math.sqrt(max(float(mmd2), 0.0))


def mmd_tv_epsilon(mmd: float) -> float:
    """MMD-TV pure-DP epsilon: ``ln((1 + mmd/2) / (1 - mmd/2))`` (paper Eq. 12/14).

    Parameters
    ----------
    mmd : float
        An MMD value in ``[0, 2]`` for a kernel with ``k(x, x) <= 1`` (e.g. :func:`clipped_mmd`).

    Returns
    -------
    float
        ``2 artanh(mmd / 2)``; ``+inf`` at ``mmd == 2``.

    Raises
    ------
    ParameterError
        If ``mmd`` is not a number in ``[0, 2]``.

    Notes
    -----
    For population distributions and a positive-definite kernel with ``k(x, x) <= 1``,
    ``MMD <= 2 d_TV`` (Lemma 4.1) and pure epsilon-DP gives ``d_TV <= tanh(epsilon / 2)``, so
    every pure epsilon-DP mechanism has ``epsilon >= `` this value (Theorem 4.2). Evaluated at a
    sample MMD it is a plug-in point estimate, not a lower confidence bound.

    Examples
    --------
    >>> round(mmd_tv_epsilon(0.5), 6)
    0.510826
    >>> mmd_tv_epsilon(2.0)
    inf
    """
    m = _check_mmd(mmd)
    if m == 2.0:
        return math.inf
    return 2.0 * math.atanh(m / 2.0)


def hockey_stick_epsilon(mmd: float) -> float:
    """Tighter pure-DP epsilon from the hockey-stick bound: ``2 artanh(mmd / sqrt 2)`` (Sec. 4.3).

    Parameters
    ----------
    mmd : float
        An MMD value in ``[0, 2]`` for a kernel with ``0 <= k(x, y) <= 1``.

    Returns
    -------
    float
        ``2 artanh(mmd / sqrt(2))``; ``+inf`` when ``mmd >= sqrt(2)``.

    Raises
    ------
    ParameterError
        If ``mmd`` is not a number in ``[0, 2]``.

    Notes
    -----
    González et al. show ``MMD <= sqrt(2) (1 - 2(1 - delta) / (1 + e^epsilon))`` for kernels with
    ``0 <= k(x, y) <= 1``; at ``delta = 0`` this inverts to the returned value, which is at least
    :func:`mmd_tv_epsilon` for every ``mmd``. It needs a nonnegative kernel (the RBF kernel is one);
    Eq. 12 needs only ``k(x, x) <= 1``. At a sample MMD it is a plug-in point estimate.

    References
    ----------
    .. [1] G. González et al., sequential MMD auditing, 2025 (see the paper's bibliography).

    Examples
    --------
    >>> round(hockey_stick_epsilon(0.5), 6)
    0.738998
    >>> hockey_stick_epsilon(1.5)
    inf
    """
    m = _check_mmd(mmd)
    if m >= _SQRT2:
        return math.inf
    return 2.0 * math.atanh(m / _SQRT2)


def mmd_pure_dp_epsilon_lower(mmd_lower: float, delta: float = 0.0) -> float:
    """Epsilon implied by a lower bound on the population MMD (kernel in [0, 1]).

    Parameters
    ----------
    mmd_lower : float
        A value the population MMD is known to exceed, in [0, sqrt 2].
    delta : float, default 0.0
        In [0, 1).

    Returns
    -------
    float
        At ``delta = 0`` the larger of Eq. 14, ``ln((1 + L/2) / (1 - L/2))``, and the tighter
        hockey-stick form ``2 artanh(L / sqrt 2)``; for ``delta > 0`` the hockey-stick form
        ``ln(2 (1 - delta) / (1 - L / sqrt 2) - 1)`` (Gonzalez et al., 2025), clipped at 0.

    Notes
    -----
    Both population inequalities hold for every (epsilon, delta)-DP mechanism (Eq. 14 for pure
    DP and ``k(x, x) <= 1``; the hockey-stick bound for ``0 <= k <= 1``); they are monotone in the
    MMD, so a lower confidence bound on the MMD gives a lower confidence bound on epsilon at the
    same level.

    Examples
    --------
    >>> round(mmd_pure_dp_epsilon_lower(0.5), 4) == round(hockey_stick_epsilon(0.5), 4)
    True
    """
    if not (isinstance(mmd_lower, numbers.Real) and mmd_lower >= 0.0):
        raise ParameterError(f"mmd_lower must be a number >= 0; got {mmd_lower!r}.")
    if not (isinstance(delta, numbers.Real) and 0.0 <= delta < 1.0):
        raise ParameterError(f"delta must be a number in [0, 1); got {delta!r}.")
    lower = float(mmd_lower)
    if lower >= math.sqrt(2.0):
        return math.inf
    hockey = math.log(max(2.0 * (1.0 - float(delta)) / (1.0 - lower / math.sqrt(2.0)) - 1.0, 1.0))
    if delta == 0.0:
        return max(mmd_tv_epsilon(min(lower, 2.0)), hockey)
    return hockey
