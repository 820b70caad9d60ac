"""Tighter certificates from the same two counts: an uneven level split and an exact ratio test.

An event ``S`` is counted on reserved calls: ``k0`` of ``n0`` outputs of input a fall in ``S``
(``k0 ~ Bin(n0, p_a)``), ``m1`` of ``n1`` outputs of input b (``m1 ~ Bin(n1, p_b)``, ``k1 = n1 - m1``).
Three lower bounds on epsilon (delta = 0) from those counts, at the error budget of a first
evaluation at 95% (``alpha = 0.05 * evaluation_share(1) = 0.0304``, one test):

``today``
    certify's rule: one-sided Clopper-Pearson upper bounds on both error rates at
    ``a = rate_level(alpha)`` (``(1 - a)^2 = 1 - alpha``), then Eq. 16
    (:func:`certify.stats.binomial.clopper_pearson_upper`,
    :func:`certify.stats.binomial.epsilon_lower_from_error_bounds`, :func:`certify.plan.rate_level`).
``A``
    an uneven split ``(1 - a0)(1 - a1) = 1 - alpha`` with ``a0 = 1 - (1 - alpha)^s``; the share
    ``s`` is fixed before the reserved calls from the rates (the largest Eq. 16 at the expected
    counts over a grid of shares; the even split kept unless strictly better), then Eq. 16 as today.
``B``
    an exact unconditional test of ``H0(theta): p_b <= theta p_a`` inverted over ``eps = log theta``
    (Berger and Boos 1994): ordering statistic ``T = log L_b^c(m1) - log U_a^c(k0)`` (Clopper-Pearson
    at a level ``c`` pre-registered from the rates), the nuisance ``p_a`` restricted to its two-sided
    Clopper-Pearson interval at ``gamma = alpha / 50``, ``p(theta) = gamma + sup P(T >= T_obs)`` by
    exact binomial sums, ``eps_B = inf{eps >= 0 : p(e^eps) > alpha}``. The sup is taken on a
    9-point grid refined by golden section (the "fast" sup, a lower bound of the sup) for the
    expectations and the coverage; the certified sup (cells bounded by monotonicity, branch and
    bound to ``0.02 alpha``), the one a certificate would use, gives p-values at least as large,
    so B's bound and failure rate with it are at most those printed. ``--rigorous`` computes it
    at the central observation of each point and at the likeliest ``k0`` of each coverage point.

Expected certified epsilon: for each operating point, ``--draws`` paired draws (fixed seed
``1000 * regime + index``, the same draws for all three rules). Today's and A's bounds are exact
per draw (and today's expectation also by exact double sum where that has at most 3e7 terms);
B is computed at up to 11 x 11 nodes of ``(k0, m1)`` (every distinct value when there are at
most 12) and interpolated linearly to the draws. Printed: expectations, relative gains over
today with the Monte Carlo standard error of the paired difference, and the fraction of draws
with a positive certificate. Regimes (calls per input ``n`` in 1e5, 1e6, 4.5e6):

1. ``p_a = 1e-3``, ``p_b = p_a e^eps`` for eps 0.1, 0.25, 0.5, 1, 4.6, and eps 10 with
   ``p_b = 0.5`` (``p_a = 0.5 e^-10``);
2. rare events: ``(p_a, p_b)`` = (1e-5, 0.3), (1e-5, 0.99), (1e-6, 0.99);
3. balanced Gaussian-like events: ``p_a = 0.3``, ``p_b`` 0.35, 0.4, 0.5;
4. certify's uneven reserved split of ``2 n`` calls (``split_reserved``'s shares 0.05 to 0.95,
   emulated with the true rates as development rates), the points where it is not even.

Coverage at the edge of the null (``p_b = e^eps p_a`` exactly): the probability that a bound
exceeds the event's epsilon, by exact summation (today and A: double sum; B: for every ``k0``
in the central ``1 - 2e-8`` of its binomial, the smallest failing ``m1``) and by 10,000 and
50,000 fresh draws, printed beside alpha. Points C0-C5: a NoisyHist2-like rare event
(C0, and C1/C5 with ``P(k0 = 0)`` about alpha, the tight case for A and B), moderate counts
(C2, C3) and a balanced event at 1e4 calls (C4).

Default run (3 to 4 minutes on one core), the rows docs/blackbox.md quotes, 4,000 paired draws
each with the seeds above: regime 1 at eps 0.1 to 4.6 and all three sizes (B's gains, the
positive certificates, A's ranges); regime 2 at (1e-5, 0.3) and (1e-5, 0.99) with 1e5 calls,
(1e-5, 0.99) with 4.5e6 and (1e-6, 0.99) with 1e5 and 1e6 calls, and regime 4 at (2.27e-5, 0.5)
with 8.55e6 / 450e3 calls (the ends of A's and B's ranges on rare events); coverage at C0-C5,
C4 also with 200,000 draws. ``--full`` runs all 54 points and adds the certified sup
(``--rigorous``); it was not timed as a whole: a regime 3 point at 4.5e6 calls takes about 3
minutes, most others seconds to a minute.

Run with ``.venv/bin/python benchmarks/bench_ratio_bound.py [--full] [--rigorous] [--draws R]
[--select TEXT ...]`` (``--select`` keeps the rows whose label contains one of the texts).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.special import betainccinv
from scipy.stats import beta as beta_law
from scipy.stats import binom, norm

from certify._core import first_true
from certify.plan import rate_level
from certify.protocol.ledger import evaluation_share
from certify.stats.binomial import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_from_error_bounds,
)

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

ALPHA = (1.0 - 0.95) * evaluation_share(1)
"""Error budget of one test in a first evaluation at 95%: 0.0303964."""
GAMMA = ALPHA / 50.0
"""B's nuisance level: ``p_a`` outside its Clopper-Pearson interval at ``gamma`` is charged in full."""
DRAWS = 4000
EXACT_TERMS = 3e7
"""Largest double sum computed for today's exact expectation."""
SHARES_A = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55,
            0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999)
CERTIFY_SHARES = (0.5, 0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9, 0.95)
"""``split_reserved``'s shares of input a, the even split first (kept unless another is better)."""
CALLS = (100_000, 1_000_000, 4_500_000)
TAIL = 1e-10
"""Binomial mass left out on each side of B's sums (added back to the rejection probability)."""
DEFAULT_ROWS = tuple(
    [f"R1 e={eps} n={n}" for eps in ("0.1", "0.25", "0.5", "1", "4.6") for n in ("1e5", "1e6", "4.5e6")]
    + ["R2 1e-05/0.3 n=1e5", "R2 1e-05/0.99 n=1e5", "R2 1e-05/0.99 n=4.5e6", "R2 1e-06/0.99 n=1e5",
       "R2 1e-06/0.99 n=1e6", "R4 2.27e-05/0.5 n=8.55e6/450e3"]
)
"""The rows docs/blackbox.md quotes: regime 1 up to eps 4.6 and the ends of the rare events' ranges."""


# ----------------------------------------------------------------------------------------------
# today's rule and A: certify's Clopper-Pearson bounds and Eq. 16
# ----------------------------------------------------------------------------------------------
def upper_bounds(k: Ints, n: int, level: float) -> Floats:
    """``clopper_pearson_upper(k, n, level)`` for every count (computed once per distinct count)."""
    values, where = np.unique(k, return_inverse=True)
    bounds = np.array([clopper_pearson_upper(int(x), n, level) for x in values])
    out: Floats = bounds[where.reshape(k.shape)]
    return out


def certify_bounds(k0: Ints, k1: Ints, n0: int, n1: int, a0: float, a1: float) -> Floats:
    """Eq. 16 from the two rates' upper bounds at levels ``a0``, ``a1`` (today: both ``rate_level``)."""
    u0, u1 = upper_bounds(k0, n0, a0), upper_bounds(k1, n1, a1)
    pairs = zip(u0.tolist(), u1.tolist(), strict=True)
    return np.array([epsilon_lower_from_error_bounds(x, y, 0.0) for x, y in pairs])


def eq16(u0: Floats, u1: Floats) -> Floats:
    """Eq. 16 at delta = 0, elementwise (checked against certify's function on every draw)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where((u1 < 1.0) & (u0 > 0.0), np.log((1.0 - u1) / u0), 0.0)
        second = np.where((u0 < 1.0) & (u1 > 0.0), np.log((1.0 - u0) / u1), 0.0)
    out: Floats = np.maximum(0.0, np.maximum(first, second))
    return out


def split_levels(share: float) -> tuple[float, float]:
    """``(a0, a1)`` with ``(1 - a0)(1 - a1) = 1 - alpha``; ``share`` of ``-log(1 - alpha)`` to ``a0``."""
    spend = math.log1p(-ALPHA)
    return -math.expm1(share * spend), -math.expm1((1.0 - share) * spend)


def central(n: int, p: float, tail: float) -> Ints:
    """The counts of ``Bin(n, p)`` between its ``tail`` and ``1 - tail`` quantiles."""
    out: Ints = np.arange(int(binom.ppf(tail, n, p)), int(binom.isf(tail, n, p)) + 1, dtype=np.int64)
    return out


def planned_value(pa: float, pb: float, n0: int, n1: int, a0: float, a1: float) -> float:
    """Eq. 16 at the expected counts (Clopper-Pearson at real-valued counts, as certify plans)."""
    def upper(k: float, n: int, level: float) -> float:
        return 1.0 if k >= n else float(betainccinv(k + 1.0, n - k, level))
    return float(eq16(np.array([upper(pa * n0, n0, a0)]), np.array([upper((1.0 - pb) * n1, n1, a1)]))[0])


def share_a(pa: float, pb: float, n0: int, n1: int) -> float:
    """A's share, fixed from the rates before any reserved call; 0.5 unless another is strictly better."""
    level = rate_level(ALPHA)
    best, chosen = planned_value(pa, pb, n0, n1, level, level), 0.5
    for s in SHARES_A:
        value = planned_value(pa, pb, n0, n1, *split_levels(s))
        if value > best + 1e-12:
            best, chosen = value, s
    return chosen


def certify_split(pa: float, pb: float, total: int) -> tuple[int, int]:
    """``split_reserved``'s choice of ``(n0, n1)``, with the true rates as development rates."""
    level = rate_level(ALPHA)
    best, chosen = -1.0, (total // 2, total - total // 2)
    for s in CERTIFY_SHARES:
        n0 = min(max(round(s * total), 1), total - 1)
        value = planned_value(pa, pb, n0, total - n0, level, level)
        if value > best:
            best, chosen = value, (n0, total - n0)
    return chosen


def exact_expectation(pa: float, pb: float, n0: int, n1: int, a0: float, a1: float) -> float | None:
    """``E[Eq. 16]`` by a double sum over the central ``1 - 2e-10`` of both counts (None if too large)."""
    k0, m1 = central(n0, pa, TAIL), central(n1, pb, TAIL)
    if k0.size * m1.size > EXACT_TERMS:
        return None
    w0, w1 = binom.pmf(k0, n0, pa), binom.pmf(m1, n1, pb)
    u0, u1 = upper_bounds(k0, n0, a0), upper_bounds(n1 - m1, n1, a1)
    step = max(1, int(2e6 // m1.size))
    total = sum(float(w0[i:i + step] @ eq16(u0[i:i + step, None], u1[None, :]) @ w1)
                for i in range(0, k0.size, step))
    return total / float(w0.sum() * w1.sum())


# ----------------------------------------------------------------------------------------------
# B: exact unconditional test of p_b <= theta p_a, inverted over epsilon
# ----------------------------------------------------------------------------------------------
class _Table:
    """Clopper-Pearson bounds at a fixed level for counts of one input, computed in blocks on demand."""

    BLOCK = 4096

    def __init__(self, n: int, level: float, lower: bool) -> None:
        self.n, self.level, self.lower = n, level, lower
        self.blocks: dict[int, Floats] = {}

    def _block(self, b: int) -> Floats:
        if b not in self.blocks:
            k = np.minimum(np.arange(b * self.BLOCK, (b + 1) * self.BLOCK), self.n).astype(np.float64)
            if self.lower:  # L(m) = 1 - U(n - m)
                k = self.n - k
            up = np.ones_like(k)
            inside = (k > 0) & (k < self.n)
            up[inside] = beta_law.isf(self.level, k[inside] + 1.0, self.n - k[inside])
            up[k == 0] = -math.expm1(math.log(self.level) / self.n)
            self.blocks[b] = 1.0 - up if self.lower else up
        return self.blocks[b]

    def __call__(self, k: Ints) -> Floats:
        if k.size == 0:
            return np.empty(0)
        first, last = int(k.min()) // self.BLOCK, int(k.max()) // self.BLOCK
        if first == last:
            out: Floats = self._block(first)[k - first * self.BLOCK]
            return out
        joined = np.concatenate([self._block(b) for b in range(first, last + 1)])
        out = joined[k - first * self.BLOCK]
        return out


def counts_range(n: int, p: float) -> tuple[int, int]:
    """Counts of ``Bin(n, p)`` outside which less than about ``TAIL`` lies on either side."""
    mean, sd = n * p, math.sqrt(n * p * (1.0 - p))
    spread = 6.6 * sd + 14.0  # covers the skewed tails of small means as well
    return max(int(mean - spread), 0), min(math.ceil(mean + spread), n)


class RatioTest:
    """B for fixed sizes, ordering level ``c`` and ``gamma``: p-values and the inverted bound.

    ``p(theta; k0, m1) = gamma + sup_{x in C_gamma(k0)} P_{x, min(1, theta x)}(T >= T(k0, m1))``.
    ``P`` falls in ``p_a`` and rises in ``p_b`` (``T`` falls in ``k0`` and rises in ``m1``), so
    on a cell ``[x_i, x_j]`` of the boundary ``P <= P_{x_i, theta x_j}``: the certified sup.
    """

    def __init__(self, n0: int, n1: int, c: float) -> None:
        self.n0, self.n1, self.c = n0, n1, c
        self.ua = _Table(n0, c, lower=False)
        self.lb = _Table(n1, c, lower=True)

    def stat(self, k0: int, m1: int) -> float:
        """``T = log L_b(m1) - log U_a(k0)`` (``-inf`` at ``m1 = 0``)."""
        low = float(self.lb(np.array([m1]))[0])
        return -math.inf if low <= 0.0 else math.log(low) - math.log(float(self.ua(np.array([k0]))[0]))

    def nuisance(self, k0: int) -> tuple[float, float]:
        """Two-sided Clopper-Pearson interval for ``p_a`` at total level ``gamma``."""
        lo = 0.0 if k0 == 0 else clopper_pearson_lower(k0, self.n0, GAMMA / 2.0)
        return lo, clopper_pearson_upper(k0, self.n0, GAMMA / 2.0)

    def rejection(self, x: float, y: float, t: float) -> float:
        """``P_{x, y}(T >= t)``, an upper bound within ``4 TAIL`` (dropped mass counted as rejected)."""
        if y <= 0.0:
            return 0.0
        y = min(1.0, y)
        if x <= 0.0:
            ks, w, extra = np.zeros(1, dtype=np.int64), np.ones(1), 0.0
        else:
            lo, hi = counts_range(self.n0, x)
            ks = np.arange(lo, hi + 1, dtype=np.int64)
            w = binom.pmf(ks, self.n0, x)
            extra = max(0.0, 1.0 - float(w.sum())) + 1e-13
        need = math.exp(t) * self.ua(ks)  # rejected when L_b(m1) >= need
        lo, hi = counts_range(self.n1, y)
        grid = np.arange(lo, hi + 1, dtype=np.int64)
        pos = np.searchsorted(self.lb(grid), need, side="left")
        # P(M >= lo + j) for j = 0 .. size: the pmf summed from the top, plus P(M > hi)
        above = float(binom.sf(hi, self.n1, y))
        tails = np.concatenate([np.cumsum(binom.pmf(grid, self.n1, y)[::-1])[::-1] + above, [above]])
        tail = np.where(pos == 0, 1.0, tails[pos])  # threshold below the grid: bounded by 1
        tail = np.where(need > 1.0, 0.0, tail)
        return float(w @ tail) + extra

    def sup_fast(self, theta: float, t: float, lo: float, hi: float) -> float:
        """The sup over the boundary by a 9-point grid and golden section (a lower bound of it)."""
        xs = (np.geomspace(lo, hi, 9) if lo > 0.0
              else np.concatenate([[0.0], np.geomspace(hi * 1e-4, hi, 9)]))
        values = [self.rejection(float(x), theta * float(x), t) for x in xs]
        i = int(np.argmax(values))
        a, b = float(xs[max(i - 1, 0)]), float(xs[min(i + 1, xs.size - 1)])
        best = values[i]
        if b > a:
            g = (math.sqrt(5.0) - 1.0) / 2.0
            c1, c2 = b - g * (b - a), a + g * (b - a)
            f1, f2 = self.rejection(c1, theta * c1, t), self.rejection(c2, theta * c2, t)
            for _ in range(8):
                if f1 >= f2:
                    b, c2, f2 = c2, c1, f1
                    c1 = b - g * (b - a)
                    f1 = self.rejection(c1, theta * c1, t)
                else:
                    a, c1, f1 = c1, c2, f2
                    c2 = a + g * (b - a)
                    f2 = self.rejection(c2, theta * c2, t)
            best = max(best, f1, f2)
        return best

    def sup_certified(self, theta: float, t: float, lo: float, hi: float, budget: int = 4000) -> float:
        """An upper bound on the sup: cells bounded by monotonicity, split while above the best point."""
        xs = (np.geomspace(lo, hi, 33) if lo > 0.0
              else np.concatenate([[0.0], np.geomspace(hi * 1e-5, hi, 33)]))
        tolerance, spent, best = 0.02 * ALPHA, 0, 0.0
        cells: list[tuple[float, float, float]] = []
        for a, b in zip(xs[:-1].tolist(), xs[1:].tolist(), strict=True):
            best = max(best, self.rejection(b, theta * b, t))
            cells.append((self.rejection(a, theta * b, t), a, b))
            spent += 2
        while True:
            wide = [cell for cell in cells if cell[0] > best + tolerance]
            if not wide or spent > budget:
                return max(max(cell[0] for cell in cells), best)
            cells = [cell for cell in cells if cell[0] <= best + tolerance]
            for _, a, b in wide:
                edges = np.geomspace(a, b, 5) if a > 0.0 else np.array([0.0, b * 1e-3, b * 1e-2, b * 1e-1, b])
                for aa, bb in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
                    best = max(best, self.rejection(bb, theta * bb, t))
                    cells.append((self.rejection(aa, theta * bb, t), aa, bb))
                    spent += 2

    def pvalue(self, eps: float, k0: int, m1: int, certified: bool = False) -> float:
        """``p(e^eps; k0, m1)`` with the fast or the certified sup."""
        t = self.stat(k0, m1)
        if not math.isfinite(t):
            return 1.0
        lo, hi = self.nuisance(k0)
        sup = self.sup_certified if certified else self.sup_fast
        return GAMMA + sup(math.exp(eps), t, lo, hi)

    def bound(self, k0: int, m1: int, certified: bool = False, xtol: float = 1e-5) -> float:
        """``eps_B = inf{eps >= 0 : p(e^eps) > alpha}`` (fast sup), then, if ``certified``,
        stepped down until the certified p-value is at most alpha (valid by monotonicity)."""
        t = self.stat(k0, m1)
        if not math.isfinite(t):
            return 0.0

        def excess(e: float) -> float:
            return self.pvalue(e, k0, m1) - ALPHA

        if excess(0.0) > 0.0:
            return 0.0
        g = max(t, 0.0)
        step = 0.02 * max(g, 0.05)
        if excess(g) <= 0.0:
            lo, hi = g, g + step
            while excess(hi) <= 0.0:
                lo, step = hi, 2.0 * step
                hi = lo + step
        else:
            hi, lo = g, max(g - step, 0.0)
            while lo > 0.0 and excess(lo) > 0.0:
                hi, step = lo, 2.0 * step
                lo = max(hi - step, 0.0)
        tol = xtol * max(1.0, abs(lo))
        e = float(brentq(excess, lo, hi, xtol=tol, rtol=1e-10)) if excess(hi) > 0.0 else hi
        e = max(lo, e - tol)
        if excess(e) > 0.0:
            e = lo
        if certified and e > 0.0 and self.pvalue(e, k0, m1, certified=True) > ALPHA:
            bad, step = e, max(1e-3 * max(e, 0.05), 2.0 * xtol)
            good = max(e - step, 0.0)
            while good > 0.0 and self.pvalue(good, k0, m1, certified=True) > ALPHA:
                bad, step = good, 2.0 * step
                good = max(good - step, 0.0)
            for _ in range(4):
                mid = 0.5 * (good + bad)
                if self.pvalue(mid, k0, m1, certified=True) <= ALPHA:
                    good = mid
                else:
                    bad = mid
            e = good
        return e


def ordering_level(pa: float, pb: float, n0: int, n1: int) -> float:
    """``c`` with ``z_c = z_(alpha - gamma) / r``, ``r = (s_a + s_b) / sqrt(s_a^2 + s_b^2)`` from the
    rates' relative standard errors: makes ``T`` about pivotal (pre-registered from development)."""
    sa = math.sqrt((1.0 - pa) / max(n0 * pa, 1e-300))
    sb = math.sqrt((1.0 - pb) / max(n1 * pb, 1e-300))
    return float(norm.sf(norm.isf(ALPHA - GAMMA) / ((sa + sb) / math.hypot(sa, sb))))


def nodes(draws: Ints) -> Ints:
    """Where B is computed: every distinct count if at most 12, else 11 quantiles of the draws."""
    distinct = np.unique(draws)
    if distinct.size <= 12:
        return distinct
    levels = (0.001, 0.01, 0.05, 0.15, 0.3, 0.5, 0.7, 0.85, 0.95, 0.99, 0.999)
    out: Ints = np.unique(np.quantile(draws, levels).round().astype(np.int64))
    return out


def interpolate(x: Floats, xp: Floats, fp: Floats) -> Floats:
    """Piecewise linear in ``xp``, extended linearly beyond its ends, floored at 0."""
    if xp.size == 1:
        return np.full(x.shape, fp[0])
    y = np.interp(x, xp, fp)
    below, over = x < xp[0], x > xp[-1]
    y[below] = fp[0] + (x[below] - xp[0]) * (fp[1] - fp[0]) / (xp[1] - xp[0])
    y[over] = fp[-1] + (x[over] - xp[-1]) * (fp[-1] - fp[-2]) / (xp[-1] - xp[-2])
    out: Floats = np.maximum(y, 0.0)
    return out


def b_on_draws(test: RatioTest, k0: Ints, m1: Ints) -> tuple[Floats, Ints, Ints, Floats]:
    """B at the nodes, interpolated to the draws (in ``m1`` per ``k0`` node, then in ``k0``)."""
    kn, mn = nodes(k0), nodes(m1)
    grid = np.array([[test.bound(int(x), int(y)) for y in mn] for x in kn])
    along = np.array([interpolate(m1.astype(np.float64), mn.astype(np.float64), row) for row in grid])
    if np.array_equal(kn, np.unique(k0)):
        out: Floats = along[np.searchsorted(kn, k0), np.arange(k0.size)]
    else:
        out = np.array([interpolate(np.array([float(k)]), kn.astype(np.float64), along[:, j])[0]
                        for j, k in enumerate(k0)])
    return out, kn, mn, grid


# ----------------------------------------------------------------------------------------------
# expected certified bound at the operating points
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Point:
    label: str
    pa: float
    pb: float
    n0: int
    n1: int
    seed: int


def size(n: int) -> str:
    """``1e5``, ``4.5e6``, ``120e3``: calls as the tables write them."""
    return f"{n / 1e6:g}e6" if n >= 1_000_000 else "1e5" if n == 100_000 else f"{n / 1e3:g}e3"


def points() -> list[Point]:
    """The operating points of regimes 1-4 with their seeds (``1000 * regime + index``)."""
    regimes: list[list[tuple[str, float, float, int, int]]] = [[], [], [], []]
    for eps in (0.1, 0.25, 0.5, 1.0, 4.6, 10.0):
        pa, pb = 1e-3, 1e-3 * math.exp(eps)
        if pb > 0.5:
            pa, pb = 0.5 * math.exp(-eps), 0.5
        regimes[0] += [(f"R1 e={eps:g}", pa, pb, n, n) for n in CALLS]
    for pa, pb in ((1e-5, 0.3), (1e-5, 0.99), (1e-6, 0.99)):
        regimes[1] += [(f"R2 {pa:g}/{pb:g}", pa, pb, n, n) for n in CALLS]
    for pb in (0.35, 0.4, 0.5):
        regimes[2] += [(f"R3 0.3/{pb:g}", 0.3, pb, n, n) for n in CALLS]
    rates = [(1e-3, 1e-3 * math.exp(e)) for e in (0.1, 1.0, 4.6)] + [(0.5 * math.exp(-10.0), 0.5)]
    rates += [(1e-5, 0.3), (1e-5, 0.99), (1e-6, 0.99), (0.3, 0.4)]
    for pa, pb in rates:
        for n in CALLS:
            n0, n1 = certify_split(pa, pb, 2 * n)
            if n0 != n1:
                regimes[3].append((f"R4 {pa:.3g}/{pb:.4g}", pa, pb, n0, n1))
    out = []
    for r, rows in enumerate(regimes, start=1):
        for i, (name, pa, pb, n0, n1) in enumerate(rows):
            calls = f"n={size(n0)}" if n0 == n1 else f"n={size(n0)}/{size(n1)}"
            out.append(Point(f"{name} {calls}", pa, pb, n0, n1, 1000 * r + i))
    return out


@dataclass(frozen=True)
class Row:
    point: Point
    share: float
    today: Floats
    a: Floats
    b: Floats
    exact_today: float | None
    central: tuple[float, float | None]
    seconds: float


def run_point(p: Point, draws: int, certified: bool) -> Row:
    """Today's, A's and B's bounds on the same ``draws`` paired draws of one point."""
    start = time.perf_counter()
    rng = np.random.default_rng(p.seed)
    k0 = rng.binomial(p.n0, p.pa, draws).astype(np.int64)
    m1 = rng.binomial(p.n1, p.pb, draws).astype(np.int64)
    level = rate_level(ALPHA)
    today = certify_bounds(k0, p.n1 - m1, p.n0, p.n1, level, level)
    check = eq16(upper_bounds(k0, p.n0, level), upper_bounds(p.n1 - m1, p.n1, level))
    assert np.allclose(check, today, rtol=0.0, atol=1e-12), "vectorized Eq. 16 differs from certify's"
    s = share_a(p.pa, p.pb, p.n0, p.n1)
    a = certify_bounds(k0, p.n1 - m1, p.n0, p.n1, *split_levels(s))
    test = RatioTest(p.n0, p.n1, ordering_level(p.pa, p.pb, p.n0, p.n1))
    b, kn, mn, grid = b_on_draws(test, k0, m1)
    # the central node (the likeliest k0 when there are few), fast and certified
    i, j = kn.size // 2, mn.size // 2
    if np.unique(k0).size <= 12:
        i = int(np.argmax([np.sum(k0 == x) for x in kn]))
    rigorous = (test.bound(int(kn[i]), int(mn[j]), certified=True)
                if certified and p.n0 * p.pa < 3e5 else None)
    return Row(p, s, today, a, b, exact_expectation(p.pa, p.pb, p.n0, p.n1, level, level),
               (float(grid[i, j]), rigorous), time.perf_counter() - start)


def gain(new: Floats, old: Floats) -> str:
    """Relative gain of ``E[new]`` over ``E[old]`` with the s.e. of the paired difference."""
    base = float(old.mean())
    if base <= 0.0:
        return "n/a"
    se = 100.0 * float((new - old).std(ddof=1)) / math.sqrt(old.size) / base
    return f"{100 * (float(new.mean()) / base - 1):+.2f}% ± {se:.2g}" if se < 1.0 else \
        f"{100 * (float(new.mean()) / base - 1):+.0f}% ± {se:.0f}"


def bound_table(rows: Sequence[Row]) -> str:
    """The markdown table of expected certified epsilon."""
    rigorous = any(r.central[1] is not None for r in rows)
    head = ["point", "p_a", "p_b", "eps of S", "today E[eps_L]", "today exact", "A share",
            "A E[eps_L]", "A gain", "B E[eps_L]", "B gain", "B - today", "P(eps_L > 0) today / A / B"]
    if rigorous:
        head += ["B certified / fast (central node)", "B gain, certified"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        p, today, b = r.point, r.today, r.b
        diff = b - today
        cells = [
            p.label, f"{p.pa:.3g}", f"{p.pb:.4g}", f"{math.log(p.pb / p.pa):.3f}", f"{today.mean():.4f}",
            "" if r.exact_today is None else f"{r.exact_today:.4f}", f"{r.share:g}", f"{r.a.mean():.4f}",
            gain(r.a, today), f"{b.mean():.4f}", gain(b, today),
            f"{diff.mean():+.4f} ± {diff.std(ddof=1) / math.sqrt(diff.size):.4f}",
            f"{(today > 0).mean():.3f} / {(r.a > 0).mean():.3f} / {(b > 0).mean():.3f}",
        ]
        if rigorous:
            fast, certified = r.central
            cells += ["", ""] if certified is None else [
                f"{certified:.4f} / {fast:.4f}", gain(b - (fast - certified), today).split(" ")[0]]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
# coverage at the edge of the null
# ----------------------------------------------------------------------------------------------
COVERAGE = {
    "C0": (1e-5, 0.99, 100_000, 100_000),  # NoisyHist2-like: k0 ~ Poisson(1), no rule can fail
    "C1": (3.6e-5, 0.99, 100_000, 100_000),  # tight for A and B: P(k0 = 0) = e^-3.6 = 0.027
    "C2": (1e-3, 1e-3 * math.exp(0.25), 100_000, 100_000),  # counts about 100 / 128
    "C3": (5e-5, 5e-5 * math.exp(2.0), 100_000, 100_000),  # counts about 5 / 37
    "C4": (0.3, 0.4, 10_000, 10_000),  # balanced, Gaussian-like
    "C5": (1.9e-5, 0.99, 190_000, 10_000),  # certify's uneven split, tight: P(k0 = 0) = 0.027
}


def first_true_near(holds: Callable[[int], bool], lo: int, hi: int, guess: int) -> int:
    """Smallest ``m`` in ``[lo, hi]`` where ``holds`` (false, then true), ``hi + 1`` if none;
    searched outward from ``guess`` by doubling steps, then by bisection."""
    guess = min(max(guess, lo), hi)
    step = 1
    if holds(guess):  # down from guess: yes holds, no = lo - 1 or a point that does not
        yes, no = guess, lo - 1
        while yes - step >= lo:
            if not holds(yes - step):
                no = yes - step
                break
            yes, step = yes - step, 2 * step
    else:  # up from guess
        no, yes = guess, hi + 1
        while no < hi:
            probe = min(no + step, hi)
            if holds(probe):
                yes = probe
                break
            no, step = probe, 2 * step
        if yes > hi:
            return hi + 1
    return first_true(holds, no, yes)


def failure_exact(pa: float, pb: float, n0: int, n1: int, a0: float, a1: float, eps: float) -> float:
    """``P(Eq. 16 > eps)`` at levels ``(a0, a1)``, by a double sum."""
    k0, m1 = central(n0, pa, TAIL), central(n1, pb, TAIL)
    w0, w1 = binom.pmf(k0, n0, pa), binom.pmf(m1, n1, pb)
    fails = eq16(upper_bounds(k0, n0, a0)[:, None], upper_bounds(n1 - m1, n1, a1)[None, :]) > eps
    return float(w0 @ fails @ w1)


@dataclass
class Coverage:
    name: str
    share: float
    exact: tuple[float, float, float]
    simulated: list[tuple[int, float, float, float]]
    thresholds: str
    seconds: float


def run_coverage(name: str, draws: Sequence[int], certified: bool) -> Coverage:
    """Failure probabilities of today, A and B (fast sup) at one point on the null's edge."""
    start = time.perf_counter()
    pa, pb, n0, n1 = COVERAGE[name]
    eps = math.log(pb / pa)
    eps_event = max(eps, math.log((1.0 - pa) / (1.0 - pb)))
    level = rate_level(ALPHA)
    s = share_a(pa, pb, n0, n1)
    a0, a1 = split_levels(s)
    test = RatioTest(n0, n1, ordering_level(pa, pb, n0, n1))
    mlo, mhi = int(binom.ppf(1e-12, n1, pb)), min(int(binom.isf(1e-12, n1, pb)) + 5, n1)
    fail_at: dict[int, int] = {}

    def threshold(k: int, guess: int) -> int:
        """Smallest m1 at which B rejects ``H0(e^eps)`` (B exceeds ``eps``) given ``k0 = k``."""
        if k not in fail_at:
            fail_at[k] = first_true_near(lambda m: test.pvalue(eps, k, m) <= ALPHA, mlo, mhi, guess)
        return fail_at[k]

    ks = central(n0, pa, 1e-8)
    guess = round(pb * n1)
    for k in ks.tolist():
        guess = threshold(k, guess)
    w = binom.pmf(ks, n0, pa)
    fails = np.array([fail_at[k] for k in ks.tolist()])
    exact_b = float(w @ binom.sf(fails - 1, n1, pb)) + 1.0 - float(w.sum())
    exact = (failure_exact(pa, pb, n0, n1, level, level, eps_event),
             failure_exact(pa, pb, n0, n1, a0, a1, eps_event), exact_b)
    simulated = []
    seeds = (7 + sum(map(ord, name)), 99 + sum(map(ord, name)), 2024)  # fixed seeds
    for seed, count in zip(seeds[:len(draws)], draws, strict=True):
        rng = np.random.default_rng(seed)
        k0 = rng.binomial(n0, pa, count).astype(np.int64)
        m1 = rng.binomial(n1, pb, count).astype(np.int64)
        today = eq16(upper_bounds(k0, n0, level), upper_bounds(n1 - m1, n1, level)) > eps_event
        split = eq16(upper_bounds(k0, n0, a0), upper_bounds(n1 - m1, n1, a1)) > eps_event
        pairs = zip(k0.tolist(), m1.tolist(), strict=True)
        b = np.array([m >= threshold(k, fail_at.get(k, guess)) for k, m in pairs])
        simulated.append((count, float(today.mean()), float(split.mean()), float(b.mean())))
    shown = []
    if certified:  # the certified sup's thresholds at the likeliest k0 (never below the fast ones)
        for k in ks[np.argsort(-w)[:5]].tolist():
            def rejects(m: int, k: int = k) -> bool:
                return test.pvalue(eps, k, m, certified=True) <= ALPHA
            shown.append(f"k0={k}: {fail_at[k]}/{first_true_near(rejects, mlo, mhi, fail_at[k])}")
    return Coverage(name, s, exact, simulated, ", ".join(shown), time.perf_counter() - start)


def coverage_table(rows: Sequence[Coverage]) -> str:
    """The markdown table of failure probabilities."""
    sims = max(len(r.simulated) for r in rows)
    head = ["point", "p_a", "p_b", "n0 / n1", "alpha", "A share"]
    for rule in ("today", "A", "B (fast sup)"):
        head.append(f"{rule}: exact / " + " / ".join(["sim"] * sims))
    certified = any(r.thresholds for r in rows)
    if certified:
        head.append("B failing m1 fast / certified at the likeliest k0")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        pa, pb, n0, n1 = COVERAGE[r.name]
        cells = [r.name, f"{pa:.3g}", f"{pb:.4g}", f"{size(n0)} / {size(n1)}", f"{ALPHA:.4f}", f"{r.share:g}"]
        for i in range(3):
            sim = " / ".join(f"{s[i + 1]:.4f} ({s[0]:,})" for s in r.simulated)
            cells.append(f"{r.exact[i]:.4f} / {sim}")
        if certified:
            cells.append(r.thresholds)
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


# ----------------------------------------------------------------------------------------------
def chosen(
    labels: Iterable[str], select: Sequence[str] | None, default: Sequence[str], full: bool
) -> list[str]:
    """The labels to run: those containing a ``--select`` text, else all (``--full``) or the default."""
    labels = list(labels)
    if select:
        return [x for x in labels if any(s in x for s in select)]
    return labels if full else [x for x in labels if x in default]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="all 54 points and the certified sup")
    parser.add_argument("--rigorous", action="store_true",
                        help="also the certified sup at the central node and in coverage (on with --full)")
    parser.add_argument("--draws", type=int, default=DRAWS, help="paired draws per point")
    parser.add_argument("--select", nargs="*", help="only rows whose label contains one of these texts")
    args = parser.parse_args()
    certified = args.rigorous or args.full
    start = time.perf_counter()
    print(f"alpha = {ALPHA:.7f} (first evaluation at 95%, one test); today's level per rate "
          f"a = {rate_level(ALPHA):.7f}; B: gamma = alpha / 50; delta = 0; {args.draws:,} paired draws "
          f"per point\n")
    every = {p.label: p for p in points()}
    labels = chosen(every, args.select, DEFAULT_ROWS, args.full)
    rows = []
    for label in labels:
        rows.append(run_point(every[label], args.draws, certified))
        print(f"  {label}: {rows[-1].seconds:.0f} s", flush=True)
    for prefix, title in (("R1", "Regime 1: p_a = 1e-3"), ("R2", "Regime 2: rare events"),
                          ("R3", "Regime 3: balanced events"), ("R4", "Regime 4: certify's uneven split")):
        part = [r for r in rows if r.point.label.startswith(prefix)]
        if part:
            print(f"\n### {title}\n\n{bound_table(part)}")
    names = chosen(COVERAGE, args.select, list(COVERAGE), args.full)
    if names:
        cover = []
        for name in names:  # C4 comes closest to alpha: a third, larger simulation
            draws = (10_000, 50_000, 200_000) if name == "C4" else (10_000, 50_000)
            cover.append(run_coverage(name, draws, certified))
            print(f"  {name}: {cover[-1].seconds:.0f} s", flush=True)
        print("\n### Coverage: P(bound > epsilon of the event) on the null's edge, beside alpha\n")
        print(coverage_table(cover))
    print(f"\n{time.perf_counter() - start:.0f} s in all")


if __name__ == "__main__":
    main()
