"""What a test's two error rates say about privacy curves: Gaussian DP, zCDP and privacy profiles.

A fixed test (an event ``E``) applied to the outputs of two neighbouring inputs has a
false-positive rate ``alpha = P_a(E)`` and a false-negative rate ``beta = 1 - P_b(E)``. A
certificate bounds both from above, ``alpha <= u_fpr`` and ``beta <= u_fnr``, simultaneously at
its level. Each function here turns such a pair of upper bounds into the smallest parameter of a
privacy curve that the true pair of rates is compatible with; every one of them is monotone
(smaller error bounds never give a smaller parameter), which is what makes it a valid lower bound
from upper bounds on the rates:

- :func:`gdp_mu_lower`: ``mu``-GDP (Dong, Roth and Su, 2022) holds only if
  ``beta >= G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)``, i.e.
  ``mu >= Phi^-1(1 - alpha) + Phi^-1(1 - beta)``;
- :func:`zcdp_rho_lower`: ``rho``-zCDP (Bun and Steinke, 2016) bounds the Renyi divergence of
  every order ``lambda > 1`` by ``rho lambda`` in both directions, and by data processing the
  divergence of the two Bernoulli laws of ``E`` is at most that;
- :func:`profile_excess`: an ``(epsilon, delta(epsilon))`` profile holds only if each of its
  points satisfies Eq. 16's two inequalities.

Nothing here knows about statuses; :mod:`certify.claims` and :class:`certify.Certificate` use
these to state certified parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, Literal, TypeAlias, final

import attrs
import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize_scalar
from scipy.special import log_ndtr
from scipy.stats import norm

from certify.errors import ParameterError

__all__ = [
    "ORDERS",
    "Floats",
    "Target",
    "TargetKind",
    "bernoulli_renyi",
    "epsilon_lower_values",
    "gaussian_tradeoff",
    "gdp_delta",
    "gdp_mu_lower",
    "profile_excess",
    "profile_grid",
    "tv_mu_lower",
    "tv_rho_lower",
    "zcdp_delta",
    "zcdp_rho_lower",
]

ORDERS: Final = 1.0 + np.geomspace(1e-3, 1e3, 97)
"""Renyi orders searched (``lambda - 1`` on a geometric grid from 1e-3 to 1e3)."""

Floats: TypeAlias = float | Sequence[float] | NDArray[np.float64]
"""A number or an array of numbers (the functions here work elementwise and broadcast)."""

TargetKind: TypeAlias = Literal["epsilon", "mu", "rho", "profile"]
"""What a development choice maximizes: Eq. 16's epsilon, ``mu``, ``rho`` or a profile's excess."""

_EPS_GRID_POINTS: Final = 400
"""Points of the epsilon grid on which a privacy profile is tabulated for the criterion."""


def _rates(u_fpr: Floats, u_fnr: Floats) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Two broadcast arrays of error-rate bounds in [0, 1] (ParameterError otherwise)."""
    u0 = np.asarray(u_fpr, dtype=np.float64)
    u1 = np.asarray(u_fnr, dtype=np.float64)
    for name, u in (("u_fpr", u0), ("u_fnr", u1)):
        if not np.all((u >= 0.0) & (u <= 1.0)):
            raise ParameterError(f"{name} must lie in [0, 1]; got {u!r:.80}.")
    b0, b1 = np.broadcast_arrays(u0, u1)
    return b0, b1


def gaussian_tradeoff(alpha: Floats, mu: float) -> NDArray[np.float64]:
    """The Gaussian trade-off function ``G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)``.

    The smallest false-negative rate of any test at false-positive rate ``alpha`` between
    ``N(0, 1)`` and ``N(mu, 1)``; a mechanism is ``mu``-GDP when no test between the outputs of
    neighbouring inputs does better (Dong, Roth and Su, 2022, Def. 2.6).

    Examples
    --------
    >>> round(float(gaussian_tradeoff(0.5, 1.0)), 4)
    0.1587
    """
    a = np.asarray(alpha, dtype=np.float64)
    out: NDArray[np.float64] = np.asarray(norm.cdf(norm.isf(a) - float(mu)), dtype=np.float64)
    return out


def gdp_mu_lower(u_fpr: Floats, u_fnr: Floats) -> NDArray[np.float64]:
    """Smallest ``mu`` for which ``mu``-GDP allows a test with these error rates (elementwise).

    Parameters
    ----------
    u_fpr, u_fnr : array_like
        Upper bounds on a test's false-positive and false-negative rates, in [0, 1].

    Returns
    -------
    numpy.ndarray
        ``max(0, Phi^-1(1 - u_fpr) + Phi^-1(1 - u_fnr))``; ``inf`` where a bound is 0 and the
        other below 1.

    Notes
    -----
    ``mu``-GDP requires ``beta >= G_mu(alpha)`` for every test, which is
    ``mu >= Phi^-1(1 - alpha) + Phi^-1(1 - beta)`` (symmetric in the two rates, so both orders of
    the inputs give the same bound). The right side falls as either rate grows, so true rates
    below their bounds give a value at least this one: a lower bound on every ``mu`` the
    mechanism can satisfy.

    Examples
    --------
    >>> round(float(gdp_mu_lower(norm.sf(0.5), norm.cdf(-0.5))), 6)
    1.0
    """
    u0, u1 = _rates(u_fpr, u_fnr)
    with np.errstate(invalid="ignore"):
        mu = norm.isf(u0) + norm.isf(u1)
    out: NDArray[np.float64] = np.asarray(
        np.where(np.isnan(mu) | (u0 + u1 >= 1.0), 0.0, np.maximum(mu, 0.0)), dtype=np.float64
    )
    return out


def bernoulli_renyi(p: Floats, q: Floats, order: float) -> NDArray[np.float64]:
    """Renyi divergence ``D_order(Ber(p) || Ber(q))`` in nats (elementwise), ``order > 1``.

    ``log(p^l q^(1-l) + (1-p)^l (1-q)^(1-l)) / (l - 1)``, computed in logs; ``inf`` where ``q``
    is 0 or 1 and ``p`` differs from it.

    Examples
    --------
    >>> round(float(bernoulli_renyi(0.5, 0.25, 2.0)), 6)
    0.287682
    """
    lam = float(order)
    if not lam > 1.0 or not math.isfinite(lam):
        raise ParameterError(f"order must be a finite number > 1; got {order!r}.")
    pp = np.asarray(p, dtype=np.float64)
    qq = np.asarray(q, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(pp > 0.0, lam * np.log(pp) + (1.0 - lam) * np.log(qq), -np.inf)
        second = np.where(
            pp < 1.0, lam * np.log1p(-pp) + (1.0 - lam) * np.log1p(-qq), -np.inf
        )
        out = np.logaddexp(first, second) / (lam - 1.0)
    result: NDArray[np.float64] = np.asarray(np.where(np.isnan(out), np.inf, np.maximum(out, 0.0)))
    return result


def _bernoulli_kl(p: NDArray[np.float64], q: NDArray[np.float64]) -> NDArray[np.float64]:
    """``KL(Ber(p) || Ber(q))`` in nats, the Renyi divergence of order 1 (elementwise)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0.0, p * (np.log(p) - np.log(q)), 0.0)
        b = np.where(p < 1.0, (1.0 - p) * (np.log1p(-p) - np.log1p(-q)), 0.0)
        out = a + b
    result: NDArray[np.float64] = np.asarray(np.where(np.isnan(out), np.inf, np.maximum(out, 0.0)))
    return result


def _rho_at(p: NDArray[np.float64], q: NDArray[np.float64], lam: float) -> NDArray[np.float64]:
    """``max(D_lam(p || q), D_lam(q || p)) / lam`` (both orders of the inputs)."""
    out: NDArray[np.float64] = np.asarray(
        np.maximum(bernoulli_renyi(p, q, lam), bernoulli_renyi(q, p, lam)) / lam
    )
    return out


def _rho_grid(
    p: NDArray[np.float64], q: NDArray[np.float64], grid: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The best ``max(D(p||q), D(q||p)) / lambda`` over the grid (and KL), and its order.

    ``0 <= q < p <= 1`` elementwise. The four logarithms are taken once for all orders.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lp, lq = np.log(p), np.log(q)
        l1p, l1q = np.log1p(-p), np.log1p(-q)
        best = np.maximum(_bernoulli_kl(p, q), _bernoulli_kl(q, p))
        arg = np.ones_like(best)
        d_pq_a, d_pq_b = lp - lq, l1p - l1q  # log ratios; D = logaddexp(lp + (l-1) a, l1p + (l-1) b) / (l-1)
        for lam in grid:
            k = float(lam) - 1.0
            forward = np.logaddexp(lp + k * d_pq_a, l1p + k * d_pq_b)
            backward = np.logaddexp(lq - k * d_pq_a, l1q - k * d_pq_b)
            value = np.maximum(forward, backward) / (k * float(lam))
            value = np.where(np.isnan(value), np.inf, value)
            better = value > best
            best = np.where(better, value, best)
            arg = np.where(better, float(lam), arg)
    return np.asarray(np.maximum(best, 0.0)), np.asarray(arg)


def zcdp_rho_lower(
    u_fpr: Floats, u_fnr: Floats, *, orders: Sequence[float] | None = None, refine: bool = False
) -> NDArray[np.float64]:
    """Smallest ``rho`` for which ``rho``-zCDP allows a test with these error rates (elementwise).

    Parameters
    ----------
    u_fpr, u_fnr : array_like
        Upper bounds on a test's false-positive and false-negative rates, in [0, 1].
    orders : sequence of float, optional
        Renyi orders ``lambda > 1`` to take the supremum over; default :data:`ORDERS`, plus the
        limit ``lambda -> 1`` (the Kullback-Leibler divergence) always.
    refine : bool, default False
        Also maximize over ``lambda`` by a bounded scalar search around the best grid order
        (for a certificate's stated value; the grid alone is used to rank choices).

    Returns
    -------
    numpy.ndarray
        ``sup_lambda max(D_lambda(Ber(1 - u_fnr) || Ber(u_fpr)), D_lambda(Ber(u_fpr) ||
        Ber(1 - u_fnr))) / lambda`` over the orders searched, 0 where ``u_fpr + u_fnr >= 1``.

    Notes
    -----
    ``rho``-zCDP means ``D_lambda(P_a || P_b) <= rho lambda`` and ``D_lambda(P_b || P_a) <= rho
    lambda`` for all ``lambda > 1`` (and, in the limit, ``KL <= rho``). The event's indicator is
    a post-processing of the output, so the divergence of its two Bernoulli laws,
    ``Ber(1 - beta)`` under input b and ``Ber(alpha)`` under input a, is at most the
    mechanism's. For ``1 - beta > alpha`` that Bernoulli divergence only grows as ``alpha``
    falls or ``1 - beta`` rises (the Renyi divergence of two Bernoulli laws is quasi-convex
    with its minimum where they meet), so the true rates, below their bounds, give a value at
    least the one computed at the bounds. Every order gives a valid lower bound; searching more
    orders only tightens it.

    Examples
    --------
    >>> r = zcdp_rho_lower(norm.sf(3.0), norm.cdf(2.0), refine=True)
    >>> 0.3 < float(r) < 0.5
    True
    """
    u0, u1 = _rates(u_fpr, u_fnr)
    grid = ORDERS if orders is None else np.asarray(orders, dtype=np.float64)
    if grid.size and not np.all(grid > 1.0):
        raise ParameterError("orders must all be > 1.")
    p, q = 1.0 - u1, u0
    active = p > q
    p = np.where(active, p, 0.75)
    q = np.where(active, q, 0.25)
    best, arg = _rho_grid(p, q, grid)
    if refine:
        flat_best, flat_arg = best.reshape(-1), arg.reshape(-1)
        flat_p, flat_q = p.reshape(-1), q.reshape(-1)
        for i in range(flat_best.size):
            if not (active.reshape(-1)[i] and math.isfinite(flat_best[i])):
                continue
            flat_best[i] = max(flat_best[i], _refine_order(flat_p[i], flat_q[i], flat_arg[i]))
        best = flat_best.reshape(best.shape)
    out: NDArray[np.float64] = np.asarray(np.where(active, best, 0.0))
    return out


def _refine_order(p: float, q: float, start: float) -> float:
    """The largest ``max(D(p||q), D(q||p)) / lambda`` found by a bounded search near ``start``."""
    x0 = math.log(start - 1.0) if start > 1.0 else math.log(1e-3)
    step = math.log(float(ORDERS[1] - 1.0) / float(ORDERS[0] - 1.0))
    lo, hi = x0 - 2.0 * step, x0 + 2.0 * step

    def loss(x: float) -> float:
        value = float(_rho_at(np.array(p), np.array(q), 1.0 + math.exp(x)))
        return -value if math.isfinite(value) else -1e300

    found = minimize_scalar(loss, bounds=(lo, hi), method="bounded", options={"xatol": 1e-6})
    return max(-float(found.fun), 0.0)


def epsilon_lower_values(
    u_fpr: Floats, u_fnr: Floats, delta: Floats, *, floor: bool = True
) -> NDArray[np.float64]:
    """Eq. 16 elementwise (broadcasting), ``inf`` where a positive numerator meets a zero bound.

    With ``floor=False`` the larger of the two log ratios is returned as it is (negative when
    the test is weaker than the statement at ``delta`` needs, ``-inf`` when neither numerator
    is positive), so that how far a test falls short still ranks choices.

    Examples
    --------
    >>> round(float(epsilon_lower_values(0.1, 0.1, 0.0)), 4)
    2.1972
    >>> round(float(epsilon_lower_values(0.5, 0.6, 0.0, floor=False)), 4)
    -0.1823
    """
    u0, u1 = _rates(u_fpr, u_fnr)
    d = np.asarray(delta, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(1.0 - d - u1 > 0, np.log(1.0 - d - u1) - np.log(u0), -np.inf)
        b = np.where(1.0 - d - u0 > 0, np.log(1.0 - d - u0) - np.log(u1), -np.inf)
    out: NDArray[np.float64] = np.asarray(np.maximum(a, b))
    if floor:
        out = np.asarray(np.maximum(out, 0.0))
    return out


def profile_excess(
    u_fpr: Floats, u_fnr: Floats, epsilons: Floats, deltas: Floats
) -> NDArray[np.float64]:
    """How far a test's bounds reach past a privacy profile: ``max_i l(delta_i) - epsilon_i``.

    Parameters
    ----------
    u_fpr, u_fnr : array_like
        Upper bounds on a test's two error rates.
    epsilons, deltas : array_like, shape (m,)
        Points ``(epsilon_i, delta(epsilon_i))`` of the claimed profile.

    Returns
    -------
    numpy.ndarray
        The largest ``l(delta_i) - epsilon_i`` over the points, where ``l(delta)`` is the larger
        of Eq. 16's two log ratios at ``delta`` (not floored at 0), at the shape of the
        broadcast bounds. Positive: the profile's point ``(epsilon_i, delta_i)`` is
        contradicted (Eq. 16 certifies an epsilon above ``epsilon_i`` at ``delta_i``);
        negative: how far, in epsilon, the test falls short of contradicting any point.

    Examples
    --------
    >>> float(profile_excess(0.01, 0.01, [1.0, 3.0], [0.5, 1e-9])) > 1.5
    True
    """
    u0, u1 = _rates(u_fpr, u_fnr)
    eps = np.asarray(epsilons, dtype=np.float64).reshape(-1)
    dls = np.asarray(deltas, dtype=np.float64).reshape(-1)
    if eps.size == 0 or eps.shape != dls.shape:
        raise ParameterError("epsilons and deltas must be non-empty and of one length.")
    best = np.full(u0.shape, -np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_u0, log_u1 = np.log(u0), np.log(u1)
        for e, d in zip(eps, dls, strict=True):
            # the larger of Eq. 16's two log ratios at d, unfloored (-inf: no positive numerator);
            # fmax skips the NaN of -inf - -inf (a zero bound against a zero numerator)
            a = np.log(np.maximum(1.0 - d - u1, 0.0)) - log_u0
            b = np.log(np.maximum(1.0 - d - u0, 0.0)) - log_u1
            best = np.fmax(best, np.fmax(a, b) - e)
    return np.asarray(best)


def gdp_delta(epsilon: Floats, mu: float) -> NDArray[np.float64]:
    """The privacy profile of ``mu``-GDP: ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)``.

    Dong, Roth and Su (2022), Corollary 2.13: a mechanism is ``mu``-GDP if and only if it is
    ``(epsilon, gdp_delta(epsilon, mu))``-DP for every ``epsilon >= 0``.

    Examples
    --------
    >>> round(float(gdp_delta(4.9, 1.0)) * 1e6, 3)
    0.938
    """
    e = np.asarray(epsilon, dtype=np.float64)
    m = float(mu)
    if m == 0.0:
        return np.zeros_like(e)
    # in logs: the second term is e^eps times a far tail, which overflows for large epsilon
    first = log_ndtr(-e / m + m / 2.0)
    second = e + log_ndtr(-e / m - m / 2.0)
    with np.errstate(invalid="ignore"):
        out = np.exp(first) * -np.expm1(np.minimum(second - first, 0.0))
    result: NDArray[np.float64] = np.asarray(np.maximum(np.nan_to_num(out, nan=0.0), 0.0))
    return result


def zcdp_delta(epsilon: Floats, rho: float) -> NDArray[np.float64]:
    """A delta at which ``rho``-zCDP implies ``(epsilon, delta)``-DP (the tight conversion).

    ``inf over lambda > 1`` of ``exp((lambda - 1)(lambda rho - epsilon)) / lambda *
    (1 - 1/lambda)^(lambda - 1)`` (Canonne, Kamath and Steinke, 2020, Prop. 7), searched on a
    grid of orders and capped at 1; a grid can only overstate the infimum, so the value is a
    valid delta for the claim it implies.

    Examples
    --------
    >>> d = float(zcdp_delta(1.0, 0.01))
    >>> 0.0 < d < 1e-4
    True
    """
    e = np.asarray(epsilon, dtype=np.float64)
    r = float(rho)
    if r == 0.0:
        return np.zeros_like(e)
    lams = 1.0 + np.geomspace(1e-4, 1e5, 400)
    best = np.zeros_like(e)  # log of the delta, capped at log 1
    for lam in lams:
        log_delta = (lam - 1.0) * (lam * r - e) - math.log(lam) + (lam - 1.0) * math.log1p(-1.0 / lam)
        best = np.minimum(best, log_delta)
    out: NDArray[np.float64] = np.asarray(np.exp(best))
    return out


def tv_mu_lower(tv_lower: float) -> float:
    """Smallest ``mu`` allowed by a lower bound on the total variation distance of the outputs.

    ``mu``-GDP bounds the total variation distance by ``2 Phi(mu / 2) - 1`` (the largest
    ``1 - alpha - G_mu(alpha)``), so ``mu >= 2 Phi^-1((1 + TV) / 2)``.

    Examples
    --------
    >>> round(tv_mu_lower(2 * norm.cdf(0.5) - 1), 6)
    1.0
    """
    t = min(max(float(tv_lower), 0.0), 1.0)
    return math.inf if t >= 1.0 else float(2.0 * norm.ppf((1.0 + t) / 2.0))


def tv_rho_lower(tv_lower: float) -> float:
    """Smallest ``rho`` allowed by a lower bound on the total variation distance (Pinsker).

    ``rho``-zCDP bounds the Kullback-Leibler divergence by ``rho`` (the limit of order 1) and
    Pinsker's inequality gives ``KL >= 2 TV^2``, so ``rho >= 2 TV^2``. Conservative: the
    event behind the distance is not known, only its size.

    Examples
    --------
    >>> tv_rho_lower(0.5)
    0.5
    """
    t = min(max(float(tv_lower), 0.0), 1.0)
    return 2.0 * t * t


def profile_grid(
    delta_of_epsilon: Callable[[float], float],
    epsilon_max: float = 30.0,
    include: Sequence[float] = (),
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """A privacy profile tabulated on a grid of epsilons in ``[0, epsilon_max]``.

    The grid is dense near 0 and geometric above, plus the epsilons in ``include`` (the
    corners of a stepwise profile); every point is a genuine point of the profile, so a search
    over it can miss a violation but never invent one.

    Raises
    ------
    ParameterError
        If the profile returns a value outside [0, 1] or NaN.
    """
    eps = np.unique(np.concatenate([
        np.linspace(0.0, 1.0, _EPS_GRID_POINTS // 4),
        np.geomspace(1e-3, epsilon_max, 3 * _EPS_GRID_POINTS // 4),
        np.asarray(include, dtype=np.float64).reshape(-1),
    ]))
    deltas = np.array([_profile_value(delta_of_epsilon, float(e)) for e in eps])
    return eps, deltas


def _profile_value(delta_of_epsilon: Callable[[float], float], epsilon: float) -> float:
    """One profile value, checked to be a probability."""
    try:
        value = float(delta_of_epsilon(epsilon))
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise ParameterError(
            f"the privacy profile must return a number for epsilon = {epsilon:g}; got {exc!r}."
        ) from exc
    if not 0.0 <= value <= 1.0:  # NaN fails too
        raise ParameterError(
            f"the privacy profile must return a delta in [0, 1]; got {value!r} at epsilon = {epsilon:g}."
        )
    return value


@final
@attrs.frozen
class Target:
    """What a development choice maximizes, as a function of a test's two error-rate bounds.

    Attributes
    ----------
    kind : {"epsilon", "mu", "rho", "profile"}
        ``"epsilon"``: Eq. 16 at ``delta`` (the point claim); ``"mu"``: :func:`gdp_mu_lower`;
        ``"rho"``: :func:`zcdp_rho_lower`; ``"profile"``: ``exp`` of :func:`profile_excess` on
        the tabulated points ``(epsilons, deltas)``: the certified likelihood ratio over the
        claimed one, ``e^(l(delta_i) - epsilon_i)``, at the profile's weakest point (above 1:
        refuted; below 1 it still ranks how close a test comes, where the excess itself,
        floored, would tie at 0).
    delta : float, default 0.0
        Delta of the ``"epsilon"`` kind.
    epsilons, deltas : tuple of float
        A tabulated profile (``"profile"`` kind only).

    Notes
    -----
    Every kind is monotone: a smaller bound on either rate never gives a smaller value, which
    the criterion's search over thresholds relies on. A target only ranks choices made before
    any reserved draw, so it affects power, never validity.

    Examples
    --------
    >>> Target("mu").values(np.array([norm.sf(0.5)]), np.array([norm.cdf(-0.5)])).round(6)
    array([1.])
    """

    kind: TargetKind
    delta: float = 0.0
    epsilons: tuple[float, ...] = ()
    deltas: tuple[float, ...] = ()

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("epsilon", "mu", "rho", "profile"):
            raise ParameterError(f"Target.kind must be epsilon, mu, rho or profile; got {self.kind!r}.")
        if self.kind == "profile" and (not self.epsilons or len(self.epsilons) != len(self.deltas)):
            raise ParameterError("a profile target needs tabulated epsilons and deltas of one length.")

    def values(self, u_fpr: NDArray[np.float64], u_fnr: NDArray[np.float64]) -> NDArray[np.float64]:
        """The target's value at each pair of error-rate bounds (broadcasting)."""
        if self.kind == "epsilon":
            return epsilon_lower_values(u_fpr, u_fnr, self.delta)
        if self.kind == "mu":
            return gdp_mu_lower(u_fpr, u_fnr)
        if self.kind == "rho":
            return zcdp_rho_lower(u_fpr, u_fnr)
        with np.errstate(over="ignore"):
            out: NDArray[np.float64] = np.asarray(
                np.exp(profile_excess(u_fpr, u_fnr, self.epsilons, self.deltas))
            )
        return out

    @property
    def unit(self) -> str:
        """The name of the value (``"epsilon"``, ``"mu"``, ``"rho"`` or ``"profile ratio"``)."""
        return "profile ratio" if self.kind == "profile" else self.kind
