"""Threshold choice for a fixed score: one chosen threshold vs a grid of K vs a simultaneous band.

The score is given (the exact likelihood ratio of a one-dimensional known-epsilon pair), so the
only question is the threshold. Each repetition draws ``n`` rows per class, puts
``floor(dev_fraction * n)`` of them in development and the rest in reserve, fixes the orientation
on development rows (Mann-Whitney AUC, as :class:`certify.FixedTest` does), and certifies with:

``single``
    the expected-bound threshold: :func:`certify.protocol.criterion.max_bound_cut` on development
    scores (``threshold="max_bound"`` until it took ``pessimistic 0.05``), one-sided
    Clopper-Pearson on reserved rows at ``alpha_per_rate = rate_level(alpha_test)``.
``grid-q K``
    ``K`` thresholds at the pooled development quantiles ``i / (K + 1)``, duplicates and the
    all-positive cut dropped (``K' <= K`` left); each is certified at ``rate_level(alpha_test / K')``
    and the largest bound is reported (union bound over the ``K'`` tests).
``grid-top K``
    the same with the ``K`` thresholds of largest expected bound
    (:func:`certify.protocol.criterion.expected_bound` at the single-test level), so it contains
    the single threshold's region and hedges against noise in the development choice.
``band``
    one-sided DKW bands with Massart's constant, ``sup_t (S_hat(t) - S(t)) <= sqrt(ln(1/a) / (2 m))``
    on each class's reserved rows at ``a = rate_level(alpha_test)``: the bounds hold for all
    thresholds at once, so the threshold is chosen on reserved rows and the largest bound reported.
``oracle``
    the threshold that maximizes the exact expected bound under the true error rates, certified
    like ``single`` (an upper reference; not available to an auditor).
``pessimistic L``
    one threshold, the cut of :func:`certify.protocol.criterion.best_cut` at ``dev_level=L``: the
    bound at one-sided Clopper-Pearson upper development rates at level ``L``;
    ``pessimistic 0.05`` is ``threshold="max_bound"``.
``halves``
    one threshold, :func:`certify.protocol.criterion.robust_cut`: the pessimistic bound (5%)
    must hold on both halves of the development rows (the black-box route's rule).

``alpha_test`` is ``1 - confidence`` for one test and ``(1 - confidence) / 40`` for a family of 40
tests (the benchmark's 40 pairs). Mechanisms: Laplace location pair at distance 1 with scale
``1 / epsilon`` (score ``clip(x, 0, 1)``); Gaussian pair at distance 1 calibrated to
``(epsilon, 1e-5)`` (score ``x``, bound at delta = 1e-5); binary and 400-ary randomized response
(score -1, 0, +1). The same draws serve every method within a repetition.

Usage: ``python benchmarks/bench_thresholds.py [--reps R] [--reps-large R] [--sizes N ...] [--quick]``
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binom, norm
from threadpoolctl import threadpool_limits

from certify.plan import rate_level
from certify.protocol.criterion import best_cut, expected_bound, max_bound_cut, robust_cut
from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds
from certify.stats.gaussian import analytic_gaussian_epsilon, calibrate_sigma

Array = NDArray[np.float64]

EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
SIZES = (30, 100, 300, 3000)
GRID_SIZES = (4, 16, 64)
PESSIMISTIC_LEVELS = (0.05, 0.2)
FAMILY_SIZES = (1, 40)
GAUSS_DELTA = 1e-5
RR_LABELS = 400
LARGE = 1000
"""Sizes at or above this use ``--reps-large`` repetitions (the criterion costs more there)."""


@dataclass(frozen=True)
class Pair1D:
    """A one-dimensional pair: scores per class, exact error rates per cut, exact epsilon."""

    name: str
    epsilon: float
    delta: float
    sample: Callable[[np.random.Generator, int, int], Array]
    rates: Callable[[Array], tuple[Array, Array]]
    oracle_cuts: Array


def laplace(eps: float) -> Pair1D:
    """Laplace(0, b) vs Laplace(1, b), ``b = 1 / eps``; exact LR is linear in ``clip(x, 0, 1)``."""
    b = 1.0 / eps

    def sample(rng: np.random.Generator, cls: int, n: int) -> Array:
        return np.clip(rng.laplace(float(cls), b, n), 0.0, 1.0)

    def rates(cuts: Array) -> tuple[Array, Array]:  # cuts in (0, 1]
        return 0.5 * np.exp(-cuts / b), 0.5 * np.exp(-(1.0 - cuts) / b)

    cuts = np.concatenate([[1e-12], np.linspace(0.0, 1.0, 401)[1:]])
    return Pair1D("laplace", eps, 0.0, sample, rates, cuts)


def gaussian(eps: float) -> Pair1D:
    """N(0, s^2) vs N(1, s^2) with ``s`` calibrated to ``(eps, 1e-5)``; exact LR is linear in x."""
    sigma = calibrate_sigma(eps, GAUSS_DELTA, 1.0)

    def sample(rng: np.random.Generator, cls: int, n: int) -> Array:
        return float(cls) + sigma * rng.standard_normal(n)

    def rates(cuts: Array) -> tuple[Array, Array]:
        return norm.sf(cuts / sigma), norm.cdf((cuts - 1.0) / sigma)

    exact = analytic_gaussian_epsilon(sigma, 1.0, GAUSS_DELTA)
    return Pair1D("gaussian", exact, GAUSS_DELTA, sample, rates, 0.5 + sigma * np.linspace(-10, 10, 801))


def randomized_response(eps: float, k: int) -> Pair1D:
    """K-ary randomized response seen from a pair: score +1 (b's label), -1 (a's label), 0 (other)."""
    keep = math.exp(eps) / (math.exp(eps) + k - 1)
    other = (1.0 - keep) / (k - 1)
    law = np.array([keep, 1.0 - keep - other, other])  # P(score = -1, 0, +1) for class 0
    values = np.array([-1.0, 0.0, 1.0])

    def sample(rng: np.random.Generator, cls: int, n: int) -> Array:
        p = law if cls == 0 else law[::-1]
        return values[rng.choice(3, size=n, p=p)]

    def rates(cuts: Array) -> tuple[Array, Array]:  # cuts in {0, 1}: class 1 when score >= cut
        fpr = np.where(cuts <= 0.0, law[1] + law[2], law[2])
        fnr = np.where(cuts <= 0.0, law[2], law[1] + law[2])
        return fpr, fnr

    return Pair1D(f"rr{k}", eps, 0.0, sample, rates, np.array([0.0, 1.0]))


MECHANISMS: dict[str, Callable[[float], Pair1D]] = {
    "laplace": laplace,
    "gaussian": gaussian,
    "rr2": lambda eps: randomized_response(eps, 2),
    f"rr{RR_LABELS}": lambda eps: randomized_response(eps, RR_LABELS),
}


def eq16(u0: Array, u1: Array, delta: float) -> Array:
    """Eq. 16 elementwise, as :func:`certify.stats.binomial.epsilon_lower_from_error_bounds`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(1.0 - delta - u1 > 0, np.log((1.0 - delta - u1) / u0), 0.0)
        b = np.where(1.0 - delta - u0 > 0, np.log((1.0 - delta - u0) / u1), 0.0)
    out: Array = np.maximum(0.0, np.maximum(a, b))
    return out


_CP: dict[tuple[int, float], Array] = {}


def cp_table(n: int, alpha: float) -> Array:
    """``clopper_pearson_upper(k, n, alpha)`` for k = 0..n (cached)."""
    key = (n, alpha)
    if key not in _CP:
        _CP[key] = np.array([clopper_pearson_upper(k, n, alpha) for k in range(n + 1)])
    return _CP[key]


def errors(s0: Array, s1: Array, cuts: Array) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """False positives (class 0 at or above the cut) and false negatives (class 1 below it)."""
    fp = s0.size - np.searchsorted(s0, cuts, side="left")
    fn = np.searchsorted(s1, cuts, side="left")
    return fp, fn


def certified(s0: Array, s1: Array, cuts: Array, alpha_rate: float, delta: float) -> Array:
    """Eq. 16 with Clopper-Pearson bounds on sorted reserved scores, one value per cut."""
    fp, fn = errors(s0, s1, cuts)
    return eq16(cp_table(s0.size, alpha_rate)[fp], cp_table(s1.size, alpha_rate)[fn], delta)


def oriented(d0: Array, d1: Array) -> int:
    """Orientation from the development Mann-Whitney AUC (ties one half), as FixedTest fixes it."""
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([d0, d1]))
    auc = (ranks[d0.size :].sum() - d1.size * (d1.size + 1) / 2) / (d0.size * d1.size)
    return 1 if auc >= 0.5 else -1


def oracle_cut(pair: Pair1D, n_res: int, alpha_rate: float) -> float:
    """The cut whose exact expected certified bound (true rates, binomial counts) is largest."""
    fpr, fnr = pair.rates(pair.oracle_cuts)
    k = np.arange(n_res + 1)
    p0 = binom.pmf(k[None, :], n_res, fpr[:, None])
    p1 = binom.pmf(k[None, :], n_res, fnr[:, None])
    u = cp_table(n_res, alpha_rate)
    m = eq16(u[:, None], u[None, :], pair.delta)
    value = ((p0 @ m) * p1).sum(axis=1)
    return float(pair.oracle_cuts[int(np.argmax(value))])


def quantile_grid(pooled: Array, k: int) -> Array:
    """Pooled development quantiles ``i / (k + 1)``, unique, without the all-positive cut."""
    ranks = np.floor(np.arange(1, k + 1) / (k + 1) * pooled.size).astype(np.int64)
    cuts = np.unique(pooled[ranks])
    out: Array = cuts[cuts > pooled[0]]
    return out


def top_grid(value: Array, youden: Array, cuts: Array, k: int) -> Array:
    """The ``k`` cuts of largest development criterion (then larger Youden index)."""
    order = np.lexsort((-youden, -value))
    out: Array = np.sort(cuts[order[:k]])
    return out


def dkw_max(s0: Array, s1: Array, alpha_rate: float, delta: float) -> float:
    """Largest Eq. 16 over all cuts with one-sided DKW-Massart bounds on both reserved classes."""
    cuts = np.concatenate([np.unique(np.concatenate([s0, s1])), [np.inf]])
    fp, fn = errors(s0, s1, cuts)
    lam0 = math.sqrt(math.log(1.0 / alpha_rate) / (2.0 * s0.size))
    lam1 = math.sqrt(math.log(1.0 / alpha_rate) / (2.0 * s1.size))
    u0 = np.minimum(1.0, fp / s0.size + lam0)
    u1 = np.minimum(1.0, fn / s1.size + lam1)
    return float(eq16(u0, u1, delta).max())


def method_names() -> list[str]:
    """Column names, in table order."""
    return (["single"] + [f"grid-q {k}" for k in GRID_SIZES] + [f"grid-top {k}" for k in GRID_SIZES]
            + ["band", "oracle"] + [f"pessimistic {lv:g}" for lv in PESSIMISTIC_LEVELS] + ["halves"])


def one_repetition(
    pair: Pair1D, n: int, dev_fraction: float, rng: np.random.Generator, oracle: dict[int, float]
) -> dict[int, list[float]]:
    """Every method's certified bound on one draw, for each family size."""
    n_dev = math.floor(dev_fraction * n)
    n_res = n - n_dev
    raw = [pair.sample(rng, cls, n) for cls in (0, 1)]
    o = oriented(raw[0][:n_dev], raw[1][:n_dev])
    d0, d1 = np.sort(o * raw[0][:n_dev]), np.sort(o * raw[1][:n_dev])
    r0, r1 = np.sort(o * raw[0][n_dev:]), np.sort(o * raw[1][n_dev:])
    pooled = np.sort(np.concatenate([d0, d1]))
    cuts = np.unique(pooled)
    if cuts.size > 512:  # criterion on a thinned candidate list (the top grid only)
        cuts = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, 512), method="inverted_cdf"))
    cuts = cuts[cuts > pooled[0]]  # the all-positive cut certifies nothing
    fp_dev, fn_dev = errors(d0, d1, cuts)
    youden = 1.0 - fn_dev / d1.size - fp_dev / d0.size
    out: dict[int, list[float]] = {}
    for family in FAMILY_SIZES:
        alpha_test = 0.05 / family
        a1 = rate_level(alpha_test)
        cut, _ = max_bound_cut(d0, d1, n_res, n_res, a1, pair.delta)
        k0 = int(np.count_nonzero(r0 >= cut))
        k1 = int(np.count_nonzero(r1 < cut))
        row = [epsilon_lower_from_error_bounds(
            clopper_pearson_upper(k0, n_res, a1), clopper_pearson_upper(k1, n_res, a1), pair.delta
        )]
        for k in GRID_SIZES:
            grid = quantile_grid(pooled, k)
            row.append(float(certified(r0, r1, grid, rate_level(alpha_test / grid.size), pair.delta).max())
                       if grid.size else 0.0)
        value = (expected_bound(fp_dev.astype(np.float64), d0.size, fn_dev.astype(np.float64), d1.size,
                                n_res, n_res, a1, pair.delta) if cuts.size else youden)
        for k in GRID_SIZES:
            grid = top_grid(value, youden, cuts, k)
            row.append(float(certified(r0, r1, grid, rate_level(alpha_test / grid.size), pair.delta).max())
                       if grid.size else 0.0)
        row.append(dkw_max(r0, r1, a1, pair.delta))
        oc = np.array([oracle[family]])
        row.append(float(certified(np.sort(raw[0][n_dev:]), np.sort(raw[1][n_dev:]), oc, a1, pair.delta)[0]))
        choices = [best_cut(d0, d1, n_res, n_res, a1, pair.delta, dev_level=lv)[:2]
                   for lv in PESSIMISTIC_LEVELS]
        # halves of the development rows in their drawn order (d0, d1 are sorted)
        h0, h1 = o * raw[0][:n_dev], o * raw[1][:n_dev]
        choices.append(robust_cut([(h0[k::2], h1[k::2]) for k in (0, 1)], n_res, n_res, a1, pair.delta)[:2])
        for side, thr in choices:  # side +1: class 1 when the (oriented) score >= thr; -1: when <=
            k0 = int(np.count_nonzero(side * r0 >= side * thr))
            k1 = int(np.count_nonzero(side * r1 < side * thr))
            row.append(epsilon_lower_from_error_bounds(
                clopper_pearson_upper(k0, n_res, a1), clopper_pearson_upper(k1, n_res, a1), pair.delta))
        out[family] = row
    return out


@dataclass
class Cell:
    """Results of one (mechanism, epsilon, n, family size) cell: one row per repetition."""

    mechanism: str
    epsilon_g: float
    exact: float
    n: int
    family: int
    values: Array


def run(mechanisms: Sequence[str], epsilons: Sequence[float], sizes: Sequence[int], reps: int,
        reps_large: int, dev_fraction: float, seed: int) -> list[Cell]:
    """All cells, seeded per (mechanism, epsilon, n); both family sizes share the draws."""
    cells: list[Cell] = []
    for mi, mech in enumerate(mechanisms):
        for ei, eps in enumerate(epsilons):
            pair = MECHANISMS[mech](eps)
            for n in sizes:
                n_res = n - math.floor(dev_fraction * n)
                oracle = {f: oracle_cut(pair, n_res, rate_level(0.05 / f)) for f in FAMILY_SIZES}
                r = reps_large if n >= LARGE else reps
                rng = np.random.default_rng([seed, mi, ei, n])
                rows = [one_repetition(pair, n, dev_fraction, rng, oracle) for _ in range(r)]
                for f in FAMILY_SIZES:
                    values = np.array([row[f] for row in rows])
                    cells.append(Cell(mech, eps, pair.epsilon, n, f, values))
    return cells


def check_eq16(rng: np.random.Generator) -> None:
    """The vectorized Eq. 16 agrees with certify's."""
    u = rng.uniform(1e-6, 1.0, (200, 2))
    for delta in (0.0, GAUSS_DELTA):
        mine = eq16(u[:, 0], u[:, 1], delta)
        ref = [epsilon_lower_from_error_bounds(float(a), float(b), delta) for a, b in u]
        if not np.allclose(mine, ref, rtol=1e-12, atol=1e-12):
            raise RuntimeError("vectorized Eq. 16 disagrees with certify.stats.binomial")


def fmt(mean: float, se: float) -> str:
    """``mean ± se`` with three decimals."""
    return f"{mean:.3f} ± {se:.3f}"


def print_tables(cells: list[Cell]) -> None:
    """Per-cell means, head-to-head against the single threshold, and validity counts."""
    names = method_names()
    print("## Mean certified bound ± standard error per cell\n")
    print("| mechanism | eps_g | exact | n | tests | reps | " + " | ".join(names) + " |")
    print("|---|---:|---:|---:|---:|---:|" + "---:|" * len(names))
    for c in cells:
        m = c.values.mean(axis=0)
        se = c.values.std(axis=0, ddof=1) / math.sqrt(len(c.values))
        print(f"| {c.mechanism} | {c.epsilon_g:g} | {c.exact:.3f} | {c.n} | {c.family} | {len(c.values)} | "
              + " | ".join(fmt(a, b) for a, b in zip(m, se, strict=True)) + " |")
    print("\n## Against `single` (paired over repetitions)\n")
    print("Cells where the method's mean exceeds `single` by more than 2 paired standard errors (win),"
          " falls below by more than 2 (loss), or neither (tie); mean and extreme differences over cells.\n")
    print("| method | tests | win | tie | loss | mean diff | largest gain | largest loss |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for j, name in enumerate(names[1:], start=1):
        for f in FAMILY_SIZES:
            diffs, win, loss, tie = [], 0, 0, 0
            for c in cells:
                if c.family != f:
                    continue
                d = c.values[:, j] - c.values[:, 0]
                mean = float(d.mean())
                se = float(d.std(ddof=1) / math.sqrt(d.size))
                diffs.append(mean)
                if mean > 2 * se and mean > 0:
                    win += 1
                elif mean < -2 * se and mean < 0:
                    loss += 1
                else:
                    tie += 1
            print(f"| {name} | {f} | {win} | {tie} | {loss} | {np.mean(diffs):+.3f} | {max(diffs):+.3f} | "
                  f"{min(diffs):+.3f} |")
    print("\n## Validity: certified bounds above the exact epsilon\n")
    print("| mechanism | tests | runs | " + " | ".join(names) + " |")
    print("|---|---:|---:|" + "---:|" * len(names))
    for mech in dict.fromkeys(c.mechanism for c in cells):
        for f in FAMILY_SIZES:
            sub = [c for c in cells if c.family == f and c.mechanism == mech]
            runs = sum(len(c.values) for c in sub)
            over = [sum(int(np.count_nonzero(c.values[:, j] > c.exact + 1e-9)) for c in sub)
                    for j in range(len(names))]
            print(f"| {mech} | {f} | {runs} | " + " | ".join(str(v) for v in over) + " |")


def main() -> None:
    """Parse arguments, run the cells and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200, help="repetitions per cell with n < 1000")
    parser.add_argument("--reps-large", type=int, default=40, help="repetitions per cell with n >= 1000")
    parser.add_argument("--dev-fraction", type=float, default=0.7, help="development share of each class")
    parser.add_argument("--seed", type=int, default=20_260_623)
    parser.add_argument("--mechanisms", nargs="+", default=list(MECHANISMS), choices=list(MECHANISMS))
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="rows per class")
    parser.add_argument("--quick", action="store_true", help="3 epsilons, n <= 300, 20 repetitions")
    args = parser.parse_args()
    epsilons: tuple[float, ...] = EPSILONS
    sizes: tuple[int, ...] = tuple(args.sizes)
    reps: int = args.reps
    if args.quick:
        epsilons, sizes, reps = (1.0, 4.0, 8.0), (30, 100, 300), 20
    start = time.process_time()
    check_eq16(np.random.default_rng(args.seed))
    with threadpool_limits(limits=1):
        cells = run(args.mechanisms, epsilons, sizes, reps, args.reps_large, args.dev_fraction, args.seed)
    print(f"# Threshold choice: single vs grid vs band (dev fraction {args.dev_fraction}, confidence 0.95)\n")
    print_tables(cells)
    print(f"\nCPU time: {time.process_time() - start:.0f} s")


if __name__ == "__main__":
    main()
