"""Tests for certify.stats.mmd against straightforward loop implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom
from typeguard import TypeCheckError

import certify.stats._mmd_permutation as permutation_module
from certify.errors import DataError, ParameterError
from certify.stats.mmd import (
    clipped_mmd,
    hockey_stick_epsilon,
    median_bandwidth,
    mmd2_unbiased,
    mmd_permutation_pvalue,
    mmd_tv_epsilon,
    rbf_kernel_matrix,
)

# Agreement with the loop references: both sides are float64 sums of O(n^2) terms of size <= 1,
# so rounding differences are ~1e-14 relative; 1e-9 leaves ample room while still catching any
# wrong term, normalization or bandwidth (those change results at the 1e-3 level or more).
RTOL = 1e-9


# ------------------------------------------------------------------------- loop references


def _ref_sq_dist(u: np.ndarray, v: np.ndarray) -> float:
    """Squared Euclidean distance from the explicit difference, one coordinate at a time."""
    return math.fsum((float(p) - float(q)) ** 2 for p, q in zip(u, v, strict=True))


def _ref_median_bandwidth(z: np.ndarray) -> float:
    """Median of pairwise distances (i < j) by a double loop."""
    dists = [math.sqrt(_ref_sq_dist(z[i], z[j])) for i in range(len(z)) for j in range(i + 1, len(z))]
    return float(np.median(dists))


def _ref_kernel(u: np.ndarray, v: np.ndarray, bw: float) -> float:
    """RBF kernel value of two rows."""
    return math.exp(-_ref_sq_dist(u, v) / (2.0 * bw * bw))


def _ref_mmd2(x: np.ndarray, y: np.ndarray, bw: float | None = None) -> float:
    """Eq. 7 by explicit loops over all index pairs."""
    if bw is None:
        bw = _ref_median_bandwidth(np.vstack([x, y]))
    n, m = len(x), len(y)
    s_xx = math.fsum(_ref_kernel(x[i], x[j], bw) for i in range(n) for j in range(n) if i != j)
    s_yy = math.fsum(_ref_kernel(y[i], y[j], bw) for i in range(m) for j in range(m) if i != j)
    s_xy = math.fsum(_ref_kernel(x[i], y[j], bw) for i in range(n) for j in range(m))
    return s_xx / (n * (n - 1)) + s_yy / (m * (m - 1)) - 2.0 * s_xy / (n * m)


def _ref_stat_from_kernel(k: np.ndarray, idx_a: np.ndarray, idx_b: np.ndarray) -> float:
    """Eq. 7 from a full pooled kernel matrix and two index sets, by loops."""
    n, m = len(idx_a), len(idx_b)
    s_aa = math.fsum(k[i, j] for i in idx_a for j in idx_a if i != j)
    s_bb = math.fsum(k[i, j] for i in idx_b for j in idx_b if i != j)
    s_ab = math.fsum(k[i, j] for i in idx_a for j in idx_b)
    return s_aa / (n * (n - 1)) + s_bb / (m * (m - 1)) - 2.0 * s_ab / (n * m)


# -------------------------------------------------------------------------------- fixtures


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator for each test."""
    return np.random.default_rng(20240611)


# ------------------------------------------------------------------- distances and kernels


def test_median_bandwidth_matches_loop(rng: np.random.Generator) -> None:
    """The median bandwidth equals the double-loop median of pairwise distances."""
    z = rng.normal(size=(31, 7))  # 465 pairs: odd count, a single middle value
    assert median_bandwidth(z) == pytest.approx(_ref_median_bandwidth(z), rel=RTOL)
    z2 = rng.normal(size=(32, 7))  # 496 pairs: even count, mean of the two middle values
    assert median_bandwidth(z2) == pytest.approx(_ref_median_bandwidth(z2), rel=RTOL)


def test_median_bandwidth_accurate_far_from_origin(rng: np.random.Generator) -> None:
    """Distances stay accurate for a tight cloud far from the origin (no Gram-form cancellation)."""
    z = 1e6 + 1e-3 * rng.normal(size=(25, 16))
    assert median_bandwidth(z) == pytest.approx(_ref_median_bandwidth(z), rel=RTOL)


def test_median_bandwidth_near_duplicates_exact() -> None:
    """Near-duplicate rows get their tiny distance from the explicit difference, not noise."""
    base = np.full(64, 0.125)
    z = np.vstack([base, base + np.eye(64)[0] * 1e-9, base + np.eye(64)[0] * 3e-9])
    # pairwise distances 1e-9, 2e-9, 3e-9 up to the rounding of the coordinates themselves
    assert median_bandwidth(z) == pytest.approx(_ref_median_bandwidth(z), rel=1e-6)
    assert median_bandwidth(z) == pytest.approx(2e-9, rel=1e-6)


def test_median_bandwidth_zero_median_raises() -> None:
    """A pooled sample that is mostly exact duplicates raises DataError with the fix."""
    z = np.vstack([np.ones((8, 3)), np.zeros((1, 3))])
    with pytest.raises(DataError, match=r"median pairwise distance .* must be > 0; got 0\.0") as e:
        median_bandwidth(z)
    assert "28 of 36 pairs are exact duplicates" in str(e.value)
    assert "pass an explicit bandwidth" in str(e.value)


def test_rbf_kernel_matrix_matches_loop(rng: np.random.Generator) -> None:
    """Each kernel entry equals exp(-||u - v||^2 / (2 sigma^2)) computed by hand."""
    x, y = rng.normal(size=(9, 5)), rng.normal(size=(6, 5))
    k = rbf_kernel_matrix(x, y, bandwidth=1.7)
    ref = np.array([[_ref_kernel(u, v, 1.7) for v in y] for u in x])
    np.testing.assert_allclose(k, ref, rtol=RTOL, atol=0)
    assert k.shape == (9, 6)


def test_rbf_kernel_matrix_identical_rows_give_one(rng: np.random.Generator) -> None:
    """Identical rows have kernel value exactly 1 (distance exactly 0)."""
    x = rng.normal(size=(4, 300)) * 1e3
    assert np.all(np.diag(rbf_kernel_matrix(x, x.copy(), bandwidth=0.5)) == 1.0)


# ------------------------------------------------------------------------------------ Eq. 7


@pytest.mark.parametrize(("n", "m", "shift"), [(12, 12, 0.0), (10, 17, 0.4), (5, 3, 2.0)])
def test_mmd2_unbiased_matches_loop_median_bandwidth(
    rng: np.random.Generator, n: int, m: int, shift: float
) -> None:
    """Eq. 7 with the pooled median bandwidth equals the loop reference (also for n != m)."""
    x, y = rng.normal(size=(n, 6)), rng.normal(size=(m, 6)) + shift
    assert mmd2_unbiased(x, y) == pytest.approx(_ref_mmd2(x, y), rel=RTOL, abs=1e-15)


def test_mmd2_unbiased_matches_loop_fixed_bandwidth(rng: np.random.Generator) -> None:
    """Eq. 7 at a given bandwidth equals the loop reference at that bandwidth."""
    x, y = rng.laplace(size=(14, 8)), rng.laplace(size=(11, 8))
    assert mmd2_unbiased(x, y, bandwidth=2.5) == pytest.approx(_ref_mmd2(x, y, 2.5), rel=RTOL, abs=1e-15)


def test_mmd2_unbiased_high_dimension_matches_loop(rng: np.random.Generator) -> None:
    """Eq. 7 at d = 512 (the paper's embedding size) matches the loop reference."""
    x, y = rng.normal(size=(6, 512)), rng.normal(size=(5, 512)) + 0.05
    assert mmd2_unbiased(x, y) == pytest.approx(_ref_mmd2(x, y), rel=RTOL, abs=1e-15)


def test_mmd2_unbiased_separated_samples_large(rng: np.random.Generator) -> None:
    """Far-apart samples give MMD^2 close to its maximum for the median bandwidth."""
    x = rng.normal(size=(20, 3))
    value = mmd2_unbiased(x, x + 100.0)
    # cross kernel ~ exp(-(100^2*3)/(2*sigma^2)) with sigma ~ 173 gives ~0.9 within classes only
    assert value > 0.1
    assert value <= 2.0


# ---------------------------------------------------------------------- epsilon conversions


@pytest.mark.parametrize("m", [0.0, 1e-12, 0.01, 0.3, 1.0, 1.5, 1.999])
def test_mmd_tv_epsilon_formula(m: float) -> None:
    """Eq. 12 equals ln((1 + m/2) / (1 - m/2)) across the range."""
    expected = math.log1p(m / 2) - math.log1p(-m / 2)  # accurate form of the same expression
    assert mmd_tv_epsilon(m) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_mmd_tv_epsilon_infinite_at_two() -> None:
    """Eq. 12 is +inf exactly at MMD = 2."""
    assert mmd_tv_epsilon(2.0) == math.inf
    assert math.isfinite(mmd_tv_epsilon(math.nextafter(2.0, 0.0)))


@pytest.mark.parametrize("m", [0.0, 0.01, 0.3, 1.0, 1.4])
def test_hockey_stick_epsilon_formula_and_tighter(m: float) -> None:
    """The hockey-stick value is 2 artanh(m / sqrt 2) and never below Eq. 12."""
    assert hockey_stick_epsilon(m) == pytest.approx(2 * math.atanh(m / math.sqrt(2)), rel=1e-12)
    assert hockey_stick_epsilon(m) >= mmd_tv_epsilon(m)


@pytest.mark.parametrize("m", [math.sqrt(2.0), 1.5, 2.0])
def test_hockey_stick_epsilon_infinite_from_sqrt2(m: float) -> None:
    """The hockey-stick value is +inf for MMD >= sqrt 2."""
    assert hockey_stick_epsilon(m) == math.inf


@pytest.mark.parametrize("func", [mmd_tv_epsilon, hockey_stick_epsilon])
@pytest.mark.parametrize("bad", [-0.1, 2.0001, math.nan, math.inf, True])
def test_epsilon_conversions_reject_bad_mmd(func: object, bad: object) -> None:
    """MMD outside [0, 2], NaN and bools raise ParameterError naming the fix."""
    assert callable(func)
    with pytest.raises(ParameterError, match=r"mmd must be a number in \[0, 2\]") as e:
        func(bad)
    assert "clipped_mmd(mmd2)" in str(e.value)


@pytest.mark.parametrize("func", [mmd_tv_epsilon, hockey_stick_epsilon])
def test_epsilon_conversions_reject_strings(func: object) -> None:
    """A string MMD is refused (by typeguard when active, else with ParameterError)."""
    assert callable(func)
    pattern = r"mmd must be a number|argument \"mmd\" \(str\)"
    with pytest.raises((ParameterError, TypeCheckError), match=pattern):
        func("0.5")


def test_clipped_mmd() -> None:
    """Negative squared estimates clip to 0; positive ones take the square root."""
    assert clipped_mmd(-0.3) == 0.0
    assert clipped_mmd(0.0) == 0.0
    assert clipped_mmd(0.09) == pytest.approx(0.3, rel=1e-15)
    with pytest.raises(ParameterError, match=r"mmd2 must be a finite real number; got nan\."):
        clipped_mmd(math.nan)


# ------------------------------------------------------------------------ permutation test


def test_permutation_matches_loop_reference(rng: np.random.Generator) -> None:
    """Statistic, every permuted statistic and the p-value agree with a per-permutation loop."""
    x, y = rng.normal(size=(9, 4)), rng.normal(size=(7, 4)) + 0.3
    stat, p, b = mmd_permutation_pvalue(x, y, permutations=150, seed=3)
    assert stat == pytest.approx(_ref_mmd2(x, y), rel=RTOL, abs=1e-15)
    assert stat == mmd2_unbiased(x, y)
    pooled = np.vstack([x, y])
    bw = _ref_median_bandwidth(pooled)
    k = np.array([[_ref_kernel(u, v, bw) for v in pooled] for u in pooled])
    # documented relabelling: 16 uniform keys per permutation, the 9 smallest form class 0
    loop_rng = np.random.default_rng(3)
    keys = np.array([loop_rng.random(16) for _ in range(150)])
    orders = [np.argsort(row, kind="stable") for row in keys]
    ref_stats = np.array([_ref_stat_from_kernel(k, q[:9], q[9:]) for q in orders])
    fast_k0 = rbf_kernel_matrix(pooled, pooled, bw)
    np.fill_diagonal(fast_k0, 0.0)
    fast_stats = permutation_module._permutation_stats(fast_k0, 9, keys)
    np.testing.assert_allclose(fast_stats, ref_stats, rtol=RTOL, atol=1e-15)
    ref_b = int(np.sum(ref_stats >= stat - 1e-11))
    assert b == ref_b
    assert p == (ref_b + 1) / 151


def test_permutation_reproducible_and_block_independent(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same seed gives the same result, whatever the block size; a Generator seed works too."""
    x, y = rng.normal(size=(12, 3)), rng.normal(size=(10, 3)) + 0.2
    first = mmd_permutation_pvalue(x, y, permutations=500, seed=11)
    assert mmd_permutation_pvalue(x, y, permutations=500, seed=11) == first
    assert mmd_permutation_pvalue(x, y, permutations=500, seed=np.random.default_rng(11)) == first
    monkeypatch.setattr(permutation_module, "_PERMUTATION_BLOCK_ELEMENTS", 22 * 7)  # 7 per block
    assert mmd_permutation_pvalue(x, y, permutations=500, seed=11) == first


def test_permutation_relabel_ties_resolved_like_argsort() -> None:
    """Rows of equal keys still get exactly n labels, chosen as a stable argsort would."""
    keys = np.array([[0.5, 0.5, 0.5, 0.1], [0.3, 0.2, 0.9, 0.4]])
    labels = permutation_module._relabel(keys, 2, np.empty_like(keys))
    assert labels.tolist() == [[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]]


def test_permutation_strong_separation_minimum_pvalue(rng: np.random.Generator) -> None:
    """Clearly different distributions give b = 0 and p = 1 / (B + 1)."""
    x, y = rng.normal(size=(25, 6)), rng.normal(size=(25, 6)) + 4.0
    stat, p, b = mmd_permutation_pvalue(x, y, permutations=999, seed=0)
    assert (b, p) == (0, 1 / 1000)
    assert stat > 0.1


@pytest.mark.slow
def test_permutation_valid_under_null() -> None:
    """On 200 null datasets (B = 199) the rejection count at 0.05 lies in its binomial interval."""
    seeds = np.random.SeedSequence(7).spawn(200)
    rejections = 0
    for child in seeds:
        gen = np.random.default_rng(child)
        x, y = gen.normal(size=(15, 5)), gen.normal(size=(15, 5))
        _, p, _ = mmd_permutation_pvalue(x, y, permutations=199, seed=gen)
        rejections += p <= 0.05
    # With 0.05 * 200 = 10 an integer, P(p <= 0.05) = 0.05 exactly under H0, so the count is
    # Binomial(200, 0.05); accept its central 99.9% interval ([2, 21]).
    lo, hi = binom.ppf(0.0005, 200, 0.05), binom.ppf(0.9995, 200, 0.05)
    assert lo <= rejections <= hi


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"permutations": 0}, r"permutations must be an integer >= 1; got 0\."),
        ({"permutations": True}, r"permutations must be an integer >= 1; got True\."),
        ({"seed": -1}, r"seed must be a nonnegative integer or a numpy.random.Generator; got -1"),
        ({"bandwidth": 0.0}, r"bandwidth must be a finite number > 0; got 0\.0\. Pass None"),
        ({"bandwidth": math.nan}, r"bandwidth must be a finite number > 0; got nan"),
    ],
)
def test_permutation_parameter_errors(kwargs: dict[str, object], message: str) -> None:
    """Invalid permutation counts, seeds and bandwidths raise ParameterError with the message."""
    x = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ParameterError, match=message):
        mmd_permutation_pvalue(x, x + 1.0, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"permutations": 10.0}, r"permutations must be an integer >= 1; got 10\.0\."),
        ({"seed": "0"}, r"seed must be a nonnegative integer or a numpy.random.Generator"),
    ],
)
def test_permutation_parameter_wrong_types(kwargs: dict[str, object], message: str) -> None:
    """Wrong-type arguments are refused (by typeguard when active, else with ParameterError)."""
    x = np.arange(12.0).reshape(6, 2)
    with pytest.raises((ParameterError, TypeCheckError), match=rf"{message}|is not"):
        mmd_permutation_pvalue(x, x + 1.0, **kwargs)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("x_a", "x_b", "message"),
    [
        (
            np.zeros(5),
            np.zeros((5, 1)),
            r"x_a must be a 2-D array \(one row per sample\); got "
            r"shape \(5,\)\. Reshape your data with x\.reshape\(-1, 1\)",
        ),
        (np.zeros((1, 3)), np.zeros((4, 3)), r"x_a must have at least 2 rows; got shape \(1, 3\)\."),
        (
            np.ones((4, 3)),
            np.full((4, 3), np.nan),
            r"x_b must contain only finite values; got a NaN or infinity in row 0",
        ),
        (
            np.ones((4, 3)),
            np.ones((4, 2)),
            r"x_b must have the same number of columns as x_a "
            r"\(3\); got 2\.",
        ),
        (np.ones((4, 0)), np.ones((4, 0)), r"x_a must have at least 1 column"),
        ([["a", "b"], ["c", "d"]], np.ones((2, 2)), r"x_a must be a real numeric array"),
    ],
)
def test_mmd2_unbiased_data_errors(x_a: object, x_b: object, message: str) -> None:
    """Malformed samples raise DataError with a message naming the sample and the fix."""
    with pytest.raises(DataError, match=message):
        mmd2_unbiased(x_a, x_b)  # type: ignore[arg-type]


def test_rbf_kernel_matrix_errors() -> None:
    """A bad bandwidth raises ParameterError and mismatched columns raise DataError."""
    with pytest.raises(ParameterError, match=r"bandwidth must be a finite number > 0; got -1\.0"):
        rbf_kernel_matrix(np.ones((2, 2)), np.ones((2, 2)), bandwidth=-1.0)
    with pytest.raises(DataError, match=r"y must have the same number of columns as x \(2\)"):
        rbf_kernel_matrix(np.ones((2, 2)), np.ones((2, 3)), bandwidth=1.0)


def test_errors_are_value_errors() -> None:
    """DataError and ParameterError are caught by except ValueError."""
    with pytest.raises(ValueError, match="at least 2 rows"):
        median_bandwidth(np.ones((1, 2)))
    with pytest.raises(ValueError, match="mmd must be"):
        mmd_tv_epsilon(3.0)


# -------------------------------------------------------------- null behaviour (paper Tab. 4)


@pytest.mark.slow
def test_mmd_tv_null_behaviour_paper_table4() -> None:
    """At an exact null (d = 512, n = 100) MMD-TV medians are near 0 and about half are positive."""
    medians, positive = [], 0
    for rep in range(3):
        gen = np.random.default_rng([4, rep])
        values = []
        for _ in range(40):
            x, y = gen.normal(size=(100, 512)), gen.normal(size=(100, 512))
            values.append(mmd_tv_epsilon(clipped_mmd(mmd2_unbiased(x, y))))
        medians.append(float(np.median(values)))
        positive += int(np.count_nonzero(np.asarray(values) > 0))
    # Paper Table 4: median .003 (averaged over repetitions). A median over 40 pairs is 0 or one
    # of the smallest positive values; 0.012 is about the 65th percentile of the positive values.
    assert all(0.0 <= med <= 0.012 for med in medians)
    # P(MMD^2_u > 0) under the null is a little below 1/2 (paper: 47.1%). With 120 values the
    # fraction has standard error 0.046, so [0.33, 0.61] is a +-3 SE band around 0.47.
    assert 0.33 <= positive / 120 <= 0.61


def test_mmd_biased_matches_a_loop() -> None:
    """The biased statistic equals the V-statistic computed with straight loops."""
    from certify.stats.mmd import mmd_biased

    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(7, 3)), rng.normal(size=(9, 3)) + 0.5

    def k(u: np.ndarray, v: np.ndarray) -> float:
        return math.exp(-float(((u - v) ** 2).sum()) / (2 * 1.3**2))

    v = (
        sum(k(a, b) for a in x for b in x) / 49
        + sum(k(a, b) for a in y for b in y) / 81
        - 2 * sum(k(a, b) for a in x for b in y) / 63
    )
    assert mmd_biased(x, y, 1.3) == pytest.approx(math.sqrt(v), rel=1e-12)


@pytest.mark.slow
def test_mmd_lower_bound_covers_the_population_value() -> None:
    """Over 400 draws the lower bound exceeds the population MMD at most at rate alpha (it is conservative).

    The population MMD of N(0, I) vs N(mu, I) in 2-D with sigma = 1 is known in closed form:
    MMD^2 = 2 (1/3) (1 - exp(-||mu||^2 / 6)). With alpha = 0.2 the observed miss rate must stay
    below 0.2 + 3 standard errors (0.06); the bound is worst-case, so misses are far rarer.
    """
    from certify.stats.mmd import mmd_lower_confidence_bound

    rng = np.random.default_rng(5)
    mu = np.array([1.0, 0.5])
    population = math.sqrt(2.0 / 3.0 * (1.0 - math.exp(-float(mu @ mu) / 6.0)))
    misses = 0
    for _ in range(400):
        b = mmd_lower_confidence_bound(rng.normal(size=(60, 2)), rng.normal(size=(60, 2)) + mu, 1.0, 0.2)
        misses += b.lower > population
    assert misses / 400 <= 0.26


def test_mmd_epsilon_lower_is_monotone_and_matches_both_formulas() -> None:
    """At delta = 0 the bound is the larger of Eq. 14 and the hockey-stick value; it grows with the MMD."""
    from certify.stats.mmd import hockey_stick_epsilon, mmd_pure_dp_epsilon_lower, mmd_tv_epsilon

    values = [mmd_pure_dp_epsilon_lower(m) for m in (0.0, 0.2, 0.6, 1.0, 1.4)]
    assert values == sorted(values) and values[0] == 0.0
    assert mmd_pure_dp_epsilon_lower(0.6) == max(mmd_tv_epsilon(0.6), hockey_stick_epsilon(0.6))
    assert mmd_pure_dp_epsilon_lower(0.6, delta=1e-5) < mmd_pure_dp_epsilon_lower(0.6)
    assert mmd_pure_dp_epsilon_lower(math.sqrt(2)) == math.inf
