"""The threshold searches return what evaluating the criterion at every cut returns.

``robust_cut`` and ``best_cut`` bound the criterion from approximate beta quantiles and
evaluate it exactly only on the cuts that could be the best; these tests compare them with
plain searches written from the public criteria, and check the approximation's error bound.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.special import betainccinv, logit, ndtri
from scipy.stats import beta as beta_dist

from certify.protocol import criterion
from certify.protocol.criterion import (
    FEW_CUTS,
    FEW_CUTS_LEVEL,
    best_cut,
    expected_bound,
    max_bound_cut,
    pessimistic_bound,
    robust_cut,
    robust_cuts,
)
from certify.stats.tradeoff import Target

Halves = list[tuple[NDArray[np.float64], NDArray[np.float64]]]

TARGETS = (
    None,
    Target("mu"),
    Target("epsilon", delta=1e-6),
    Target("profile", epsilons=(0.5, 1.0, 2.0), deltas=(0.1, 0.03, 0.001)),
)


def every_cut_robust(
    halves: Halves,
    n0: int,
    n1: int,
    alpha: float,
    delta: float = 0.0,
    *,
    dev_level: float = 0.05,
    candidates: int = 1,
    target: Target | None = None,
) -> tuple[int, float, float, float]:
    """``robust_cut`` by evaluating :func:`pessimistic_bound` at every cut (its definition)."""
    prepared = [(np.sort(a), np.sort(b)) for a, b in halves]
    unique = np.unique(np.concatenate([x for pair in prepared for x in pair]))
    ranks = criterion._thinned_ranks(unique.size)
    cuts = unique[ranks]
    if cuts.size * candidates <= FEW_CUTS:
        dev_level = max(dev_level, FEW_CUTS_LEVEL)
    found = {}
    values = {}
    for level in (dev_level, 0.5):
        best = (-1.0, 1, 0)
        for orientation in (1, -1):
            worst = np.full(cuts.size, np.inf)
            for a, b in prepared:
                if orientation == 1:
                    fp = a.size - np.searchsorted(a, cuts, side="left")
                    fn = np.searchsorted(b, cuts, side="left")
                else:
                    fp = np.searchsorted(a, cuts, side="right")
                    fn = b.size - np.searchsorted(b, cuts, side="right")
                value = pessimistic_bound(fp * 1.0, a.size, fn * 1.0, b.size, n0, n1, alpha, delta,
                                          level, target=target)
                worst = np.minimum(worst, value)
            values[level, orientation] = worst
            k = int(np.argmax(worst))
            if worst[k] > best[0]:
                best = (float(worst[k]), orientation, k)
        found[level] = best
    chosen, orientation, k = found[dev_level]
    if chosen <= 0.0:
        _, orientation, k = found[0.5]
    rank = ranks[k] - 1 if orientation == 1 else ranks[k] + 1
    edge = unique[rank] if 0 <= rank < unique.size else unique[ranks[k]] - orientation
    plug_in = float(values[0.5, orientation][k])  # at the chosen cut
    return orientation, float(0.5 * (cuts[k] + edge)), max(chosen, 0.0), max(plug_in, 0.0)


def every_cut_best(
    s0: NDArray[np.float64],
    s1: NDArray[np.float64],
    n0: int,
    n1: int,
    alpha: float,
    delta: float = 0.0,
    *,
    dev_level: float | None = None,
    target: Target | None = None,
) -> tuple[int, float, float]:
    """``best_cut`` by evaluating its criterion at every candidate cut (its definition)."""
    found = []
    for orientation in (1, -1):
        a, b = orientation * s0, orientation * s1
        cuts, below = criterion._thinned_cuts(np.unique(np.concatenate([a, b])))
        fp = a.size - np.searchsorted(np.sort(a), cuts, side="left")
        fn = np.searchsorted(np.sort(b), cuts, side="left")
        if dev_level is None:
            value = expected_bound(fp * 1.0, a.size, fn * 1.0, b.size, n0, n1, alpha, delta, target=target)
        else:
            value = pessimistic_bound(fp * 1.0, a.size, fn * 1.0, b.size, n0, n1, alpha, delta, dev_level,
                                      target=target)
        youden = (1.0 - fn / b.size) - fp / a.size
        k = int(np.argmax(value)) if value.max() > 0.0 else int(np.argmax(youden))
        found.append((orientation, float(0.5 * (cuts[k] + below[k])), max(float(value[k]), 0.0),
                      float(youden[k])))
    up, down = found
    if (down[2], down[3]) > (up[2], up[3]):
        return -1, -down[1], down[2]
    return 1, up[1], up[2]


def _halves(kind: str, rng: np.random.Generator, n: int = 20_000) -> Halves:
    """Two independent halves of development scores of one kind."""
    out = []
    for _ in range(2):
        if kind == "shift":  # a smooth ratio: the best cut is in the bulk
            s0, s1 = rng.normal(0.0, 1.0, n), rng.normal(0.3, 1.0, n)
        elif kind == "tail":  # a rare window far in the tail carries the effect
            k = max(n // 300, 1)
            s0 = rng.normal(0.0, 1.0, n)
            s1 = np.concatenate([rng.normal(0.0, 1.0, n - k), rng.normal(4.0, 0.1, k)])
        elif kind == "ties":  # discrete scores: few distinct values, heavy ties
            s0, s1 = rng.poisson(20.0, n) * 1.0, rng.poisson(20.5, n) * 1.0
        elif kind == "few":  # a handful of values: the relaxed level for few cuts
            s0, s1 = rng.integers(0, 5, n) * 1.0, rng.integers(0, 6, n) * 1.0
        elif kind == "reversed":  # class 1 low: the orientation -1 wins
            s0, s1 = rng.laplace(0.0, 1.0, n), rng.laplace(-0.2, 1.0, n)
        else:  # "null": no effect, every pessimistic value is 0
            s0, s1 = rng.normal(0.0, 1.0, n // 10), rng.normal(0.0, 1.0, n // 10)
        out.append((s0, s1))
    return out


KINDS = ("shift", "tail", "ties", "few", "reversed", "null")


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reserved", [(10**5, 10**5), (3 * 10**7, 10**7)])
def test_pruned_search_matches_every_cut(kind: str, reserved: tuple[int, int]) -> None:
    """Same orientation, threshold and values as evaluating every cut, on varied scores."""
    rng = np.random.default_rng(sum(map(ord, kind)) + reserved[0])
    for _ in range(3):
        halves = _halves(kind, rng)
        pruned = robust_cut(halves, *reserved, 0.0125, 0.0)
        assert pruned == every_cut_robust(halves, *reserved, 0.0125, 0.0)
        if kind == "null":
            assert pruned[2] == 0.0
        elif kind not in ("ties", "few"):
            assert pruned[2] > 0.0


def test_searches_match_every_cut_on_random_cases(rng: np.random.Generator) -> None:
    """robust_cut and best_cut choose as a search over every cut, over varied random settings."""
    differ = []
    for case in range(24):
        kind = KINDS[case % len(KINDS)]
        halves = _halves(kind, rng, int(rng.integers(50, 3000)))
        n0 = int(np.exp(rng.uniform(np.log(50), np.log(3e7))))
        n1 = n0 if case % 2 else int(np.exp(rng.uniform(np.log(50), np.log(3e7))))
        alpha = float(rng.choice([0.0152, 0.00125, 1e-6]))
        delta = float(rng.choice([0.0, 1e-6, 0.01]))
        target = TARGETS[case % len(TARGETS)]
        level = float(rng.choice([0.05, 0.25, 0.01]))
        candidates = int(rng.choice([1, 10]))
        got = robust_cut(halves, n0, n1, alpha, delta, dev_level=level, candidates=candidates,
                         target=target)
        want = every_cut_robust(halves, n0, n1, alpha, delta, dev_level=level,
                                candidates=candidates, target=target)
        s0, s1 = halves[0]
        got_best = best_cut(s0, s1, n0, n1, alpha, delta, dev_level=level, target=target)
        want_best = every_cut_best(s0, s1, n0, n1, alpha, delta, dev_level=level, target=target)
        differ += [case] * ((got != want) + (got_best != want_best))
    assert differ == []


def test_scores_searched_together_are_each_searched_alone(rng: np.random.Generator) -> None:
    """robust_cuts gives, per score, robust_cut's result to the last bit, in any company.

    Scores of every kind and of sizes from 40 to 3,000 calls, searched together: a strong score
    beside weak ones (a shared best would prune the weak ones' cuts away and return 0), a few
    values beside thousands (the relaxed level is each score's own), and a null beside all.
    """
    for candidates in (1, 6):
        for reserved in ((10**5, 10**5), (3 * 10**7, 10**7)):
            groups = [_halves(kind, rng, int(rng.integers(40, 3000))) for kind in KINDS]
            kwargs = dict(dev_level=0.25, candidates=candidates)
            together = robust_cuts(groups, *reserved, 0.0125, 0.0, **kwargs)  # type: ignore[arg-type]
            alone = [robust_cut(h, *reserved, 0.0125, 0.0, **kwargs) for h in groups]  # type: ignore[arg-type]
            assert together == alone
            assert sum(value > 0.0 for _, _, value, _ in alone) >= 3


@pytest.mark.parametrize("reserved", [(10**4, 10**4), (3 * 10**6, 10**6)])
def test_expected_bound_search_matches_every_cut(reserved: tuple[int, int], rng: np.random.Generator) -> None:
    """best_cut and max_bound_cut by expected bound (its quadrature) choose as every cut does."""
    for kind in ("shift", "tail", "reversed", "null"):
        (s0, s1), _ = _halves(kind, rng, 1500)
        assert best_cut(s0, s1, *reserved, 0.0152) == every_cut_best(s0, s1, *reserved, 0.0152)
        cut, value = max_bound_cut(s0, s1, *reserved, 0.0152)
        cuts, below = criterion._thinned_cuts(np.unique(np.concatenate([s0, s1])))
        fp = s0.size - np.searchsorted(np.sort(s0), cuts, side="left")
        fn = np.searchsorted(np.sort(s1), cuts, side="left")
        every = expected_bound(fp * 1.0, s0.size, fn * 1.0, s1.size, *reserved, 0.0152)
        if every.max() > 0.0:
            k = int(np.argmax(every))
            assert (cut, value) == (float(0.5 * (cuts[k] + below[k])), float(every[k]))


def test_max_worst_takes_the_first_of_equal_best_cuts() -> None:
    """Among cuts of equal value the first is returned, as ``numpy.argmax`` would."""
    # the same counts at every cut: every cut ties, the first must be returned
    e = np.full(500, 10, dtype=np.int64)
    found = criterion._max_worst([[(e, 1000, e, 1000)]], 10**5, 10**5, 0.01, 0.0, (0.05,))
    value = float(pessimistic_bound(e[:1] * 1.0, 1000, e[:1] * 1.0, 1000, 10**5, 10**5, 0.01)[0])
    assert found == [(value, 0, 0)]


def test_max_worst_prefers_the_first_block_on_ties() -> None:
    """Two blocks with the same best value: the first block's cut, as robust_cut's orientation +1."""
    e = np.arange(300, 0, -1, dtype=np.int64)
    f = np.arange(0, 300, dtype=np.int64)
    side = (e, 1000, f, 1000)
    found = criterion._max_worst([[side], [side]], 10**5, 10**5, 0.01, 0.0, (0.05, 0.5))
    for level, (value, block, cut) in zip((0.05, 0.5), found, strict=True):
        every = pessimistic_bound(e * 1.0, 1000, f * 1.0, 1000, 10**5, 10**5, 0.01, 0.0, level)
        assert (value, block, cut) == (float(every.max()), 0, int(np.argmax(every)))


def test_pessimistic_bound_is_the_clopper_pearson_composition(rng: np.random.Generator) -> None:
    """pessimistic_bound equals the composition of scipy.stats.beta.isf bounds, to the last bit."""
    m, n = 2000, 4_500_008
    e0, e1 = rng.integers(0, m + 1, 300) * 1.0, rng.integers(0, m + 1, 300) * 1.0

    def upper(k: NDArray[np.float64], size: int, level: float) -> NDArray[np.float64]:
        out = np.ones_like(k)
        out[k < size] = beta_dist.isf(level, k[k < size] + 1.0, size - k[k < size])
        return out

    u0 = upper(upper(e0, m, 0.05) * n, n, 0.0152)
    u1 = upper(upper(e1, m, 0.05) * n, n, 0.0152)
    want = criterion._eq16(u0, u1, 0.0)
    assert np.array_equal(pessimistic_bound(e0, m, e1, m, n, n, 0.0152), want)


def test_zero_rates_take_a_zero_count_as_a_rate_of_zero(rng: np.random.Generator) -> None:
    """With zero_rates, a zero development count is a reserved count of zero; other counts as before.

    The reserved bound of a zero rate is the Clopper-Pearson bound of zero among the reserved
    rows, where the upper bound of a zero count among the development rows (level 0.05: 3 over
    the rows) would be a reserved rate that the bound could not reach without it.
    """
    m, n = 2000, 4_500_008
    e0, e1 = rng.integers(0, 4, 300) * 1.0, rng.integers(0, m + 1, 300) * 1.0
    e0[:100] = 0.0
    got = pessimistic_bound(e0, m, e1, m, n, n, 0.0152, zero_rates=True)
    plain = pessimistic_bound(e0, m, e1, m, n, n, 0.0152)
    zero = e0 == 0.0
    np.testing.assert_array_equal(got[~zero], plain[~zero])
    u0 = beta_dist.isf(0.0152, 1.0, n)
    u1 = criterion._upper_real(criterion._upper_real(e1[zero], m, 0.05) * n, n, 0.0152)
    np.testing.assert_array_equal(got[zero], criterion._eq16(np.full(u1.shape, u0), u1, 0.0))
    assert np.all(got[zero] > plain[zero])


def _shapes(rng: np.random.Generator, size: int, low: float) -> tuple[NDArray[np.float64], ...]:
    """Random beta shapes from ``low`` to 1e8 (log-uniform), half of them whole numbers."""
    a = np.exp(rng.uniform(np.log(low), np.log(1e8), size))
    b = np.exp(rng.uniform(np.log(low), np.log(1e8), size))
    whole = rng.random(size) < 0.5
    a[whole], b[whole] = np.round(a[whole]), np.round(b[whole])
    return a, b


@pytest.mark.parametrize("tail", [1e-16, 1e-10, 1e-6, 1.25e-3, 0.0152, 0.05, 0.25, 0.5, 0.75, 0.99])
def test_approximate_quantile_within_half_its_error_bound(tail: float, rng: np.random.Generator) -> None:
    """The Cornish-Fisher logit quantile misses betainccinv by less than half the stated bound."""
    a, b = _shapes(rng, 20_000, criterion._APPROX_SHAPE)
    keep = (a != 1000.0) & (b != 1000.0)  # boost's own miss there is bounded by computing it
    a, b = a[keep], b[keep]
    z = np.asarray(-ndtri(tail))
    exact = betainccinv(a, b, tail)
    error = np.abs(criterion._logit_quantile(a, b, z) - logit(exact))
    bound = criterion._APPROX_ERROR * (1.0 + abs(float(z))) ** 3 / np.minimum(a, b) ** 3 + 1e-9
    assert np.all(error <= 0.5 * bound)


def test_quantile_bounds_hold_the_exact_quantile(rng: np.random.Generator) -> None:
    """_isf_bounds brackets betainccinv, small shapes, a shape of 1000 and extreme tails included."""
    a, b = _shapes(rng, 40_000, 0.5)
    a[:200] = 1000.0  # where boost's inverse is off by 1e-4 when the other shape is huge
    tail = rng.choice([1e-18, 1e-12, 1e-6, 0.0152, 0.05, 0.5, 0.9, 0.999], a.size)
    exact = betainccinv(a, b, tail)
    lo, hi = criterion._isf_bounds(a, b, tail)
    assert np.all((lo <= exact) & (exact <= hi))
    assert np.median((hi - lo) / exact) < 1e-6


def test_rate_bounds_hold_the_rates(rng: np.random.Generator) -> None:
    """Bounded pessimistic rates bracket the exact ones, for many sizes, levels and counts."""
    requests = []
    for _ in range(30):
        m = int(rng.integers(10, 300_000))
        n = int(rng.integers(20, 30_000_000))
        level = float(rng.choice([0.05, 0.25, 0.5, 0.01]))
        requests.append((m, n, level, rng.integers(0, m + 1, int(rng.integers(1, 2000)))))
    for alpha in (0.0152, 0.00125, 1e-9):
        bounds = criterion._pessimistic_rates(requests, alpha, exact=False)
        exact = criterion._pessimistic_rates(requests, alpha, exact=True)
        for (lo, hi), (value, _) in zip(bounds, exact, strict=True):
            assert np.all((lo <= value) & (value <= hi))


@pytest.mark.parametrize("exact", [False, True])
def test_kept_rates_are_the_rates_computed_afresh(
    exact: bool, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rates answered from the kept tables are, to the bit, those computed with none kept.

    Overlapping requests are asked in turn (sizes on both sides of the largest kept, levels
    shared and not, counts asked twice in one request), through tables small enough to be
    dropped and made again; each answer is compared with a cold computation of its request.
    """
    monkeypatch.setattr(criterion, "_RATE_TABLES", criterion._RateTables(3 * 2_000))
    sizes = [1_000, 1_999, criterion._RATE_TABLE_ROWS + 1, 37]
    for _ in range(12):
        requests = []
        for _ in range(int(rng.integers(1, 5))):
            m = int(rng.choice(sizes))
            level = float(rng.choice([0.25, 0.5]))
            requests.append((m, 10**6, level, rng.integers(0, m + 1, int(rng.integers(1, 300)))))
        warm = criterion._pessimistic_rates(requests, 0.0152, exact=exact)
        for request, (lo, hi) in zip(requests, warm, strict=True):
            with monkeypatch.context() as cold:
                cold.setattr(criterion, "_RATE_TABLES", criterion._RateTables(0))
                (lo0, hi0), = criterion._pessimistic_rates([request], 0.0152, exact=exact)
            assert lo.tobytes() == lo0.tobytes() and hi.tobytes() == hi0.tobytes()
    tables = criterion._RATE_TABLES._tables
    assert 1 <= len(tables) <= 6 and all(key[0] <= criterion._RATE_TABLE_ROWS for key in tables)


@pytest.mark.parametrize("target", TARGETS[:2])
def test_quadrature_bounds_hold_the_quadrature(target: Target | None, rng: np.random.Generator) -> None:
    """The bounded quadrature brackets expected_bound's quadrature at every cut."""
    m0, m1, n0, n1 = 3000, 2000, 10**6, 3 * 10**5
    e0, e1 = rng.integers(0, m0 + 1, 400) * 1.0, rng.integers(0, m1 + 1, 400) * 1.0
    exact = criterion._expected_bound_quadrature(e0, m0, e1, m1, n0, n1, 0.0152, 0.0, target)
    lo0, hi0, lo1, hi1 = criterion._quadrature_rates(e0, m0, e1, m1, n0, n1, 0.0152)
    lower = criterion._quadrature_value(hi0, hi1, 0.0, target)
    upper = criterion._quadrature_value(lo0, lo1, 0.0, target)
    assert np.all((lower <= exact) & (exact <= upper))


def test_quadrature_of_distinct_counts_is_unchanged(rng: np.random.Generator) -> None:
    """Each distinct count computed once gives the values of computing every cut on its own."""
    e0, e1 = rng.integers(0, 50, 60) * 1.0, rng.integers(0, 50, 60) * 1.0

    def one(i: int) -> float:
        return float(criterion._expected_bound_quadrature(
            e0[i:i + 1], 500, e1[i:i + 1], 500, 10**6, 10**6, 0.01, 0.0)[0])

    together = criterion._expected_bound_quadrature(e0, 500, e1, 500, 10**6, 10**6, 0.01, 0.0)
    assert together.tolist() == [one(i) for i in range(e0.size)]


def test_cut_ranks_and_grids_are_numpys_sorted_distinct_indices(rng: np.random.Generator) -> None:
    """The searches' index helpers give what ``np.unique`` and ``np.union1d`` give, dtype too."""
    for size in (1, 2, 5, 100, criterion.MAX_CUTS, criterion.MAX_CUTS + 1, 65_537, 3_000_001):
        ranks = criterion._thinned_ranks(size)
        last = size - 1
        if size > criterion.MAX_CUTS:
            tail = np.unique(np.geomspace(1, size / 2, criterion.MAX_CUTS // 3).astype(np.int64))
            middle = np.linspace(0, last, criterion.MAX_CUTS // 3).astype(np.int64)
            expected = np.unique(np.concatenate([tail - 1, last - (tail - 1), middle]))
        else:
            expected = np.arange(size, dtype=np.int64)
        assert ranks.dtype == expected.dtype and np.array_equal(ranks, expected)
        for stride in (1, 2, 7, 64, 1_000):
            grid = criterion._grid(size, stride)
            union = np.union1d(np.arange(0, size, stride), [last])
            assert grid.dtype == union.dtype and np.array_equal(grid, union)
    for n in (0, 1, 2, 50):
        ordered = np.sort(rng.integers(0, 20, size=n))
        assert np.array_equal(criterion._distinct(ordered), np.unique(ordered))
