"""Tests of the candidate test families, the expected-bound criterion and FixedTest.select."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from typeguard import suppress_type_checks

from certify import EmbeddingTable, Ledger, Pair, Protocol
from certify.errors import ParameterError
from certify.plan import ceiling
from certify.protocol import FixedTest, LinearScore
from certify.protocol.families import (
    BoundPlan,
    LinearDiscriminant,
    candidate_estimator,
    expected_bound,
    max_bound_cut,
    pooled_variances,
)
from certify.protocol.scores import ClippedScore, LaplaceScore


def _table(seed: int, n: int = 60, d: int = 20, shift: float = 1.5) -> EmbeddingTable:
    """Three identities in d dimensions; b and c differ from a by ``shift`` along axis 0."""
    rng = np.random.default_rng(seed)
    rows = [rng.standard_normal((n, d)) for _ in range(3)]
    rows[1][:, 0] += shift
    rows[2][:, 1] += shift
    labels = ["a"] * n + ["b"] * n + ["c"] * n
    return EmbeddingTable.from_arrays(labels, np.vstack(rows), normalize=False)


def test_expected_bound_prefers_fewer_errors_and_stays_below_ceiling() -> None:
    """The expected bound falls with development errors and never exceeds the zero-error ceiling."""
    e = expected_bound(np.array([0.0, 2.0, 10.0]), 50, np.array([0.0, 2.0, 10.0]), 50, 50, 50, 0.000625)
    assert e[0] > e[1] > e[2] >= 0.0
    assert e[0] <= ceiling(50, 40, 0.95) + 1e-12


def test_expected_bound_is_zero_for_chance_errors() -> None:
    """Half errors in both classes give (almost) no expected bound."""
    e = expected_bound(25.0, 50, 25.0, 50, 50, 50, 0.000625)
    # Only the posterior tail near p = 0.15 (Beta(25.5, 25.5)) can give a positive bound:
    # its weight is ~1e-5 here (measured 2.5e-5), so 1e-3 is far above it and far below e(0 errors).
    assert float(e[0]) < 1e-3


def test_expected_bound_rejects_bad_alpha() -> None:
    """An alpha_per_rate outside (0, 1) raises ParameterError naming the fix."""
    with pytest.raises(ParameterError, match="alpha_per_rate must be a number in"):
        expected_bound(0.0, 10, 0.0, 10, 10, 10, 1.5)


def test_max_bound_cut_separates_separable_scores() -> None:
    """On separable scores the cut lies between the classes."""
    cut, value = max_bound_cut(np.arange(10.0), np.arange(20.0, 30.0), 30, 30, 0.01)
    assert 9.0 < cut <= 20.0 and value > 0.0


def test_linear_discriminant_identity_matches_sklearn_mean_difference() -> None:
    """The identity covariance gives sklearn LDA(lsqr, shrinkage=1.0)'s direction."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 30)) * np.linspace(0.5, 2.0, 30)
    y = np.r_[np.zeros(40), np.ones(40)]
    X[y == 1] += 0.4
    a = LinearDiscriminant("identity").fit(X, y).coef_.ravel()
    b = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=1.0).fit(X, y).coef_.ravel()
    cos = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    assert cos > 1 - 1e-9  # same direction up to rounding


def test_linear_discriminant_ledoit_wolf_matches_sklearn_auto() -> None:
    """The Ledoit-Wolf option points where sklearn LDA(lsqr, shrinkage='auto') points."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    rng = np.random.default_rng(4)
    X = rng.standard_normal((100, 60)) * np.linspace(0.3, 3.0, 60)
    y = np.r_[np.zeros(50), np.ones(50)]
    X[y == 1] += 0.3
    a = LinearDiscriminant("ledoit_wolf").fit(X, y).coef_.ravel()
    b = LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto").fit(X, y).coef_.ravel()
    # sklearn shrinks each class separately and pools; ours pools first: close, not equal.
    assert a @ b / np.linalg.norm(a) / np.linalg.norm(b) > 0.99


def test_pooled_variances_exclude_pair() -> None:
    """Pooled variances use only the identities not excluded."""
    t = EmbeddingTable.from_arrays(["a", "a", "b", "b"], np.array([[1.0], [3.0], [1.0], [11.0]]),
                                   normalize=False)
    assert pooled_variances(t, exclude=("b",)).tolist() == [2.0]


def test_unknown_family_raises() -> None:
    """An unknown family name raises ParameterError listing the names."""
    with suppress_type_checks(), pytest.raises(ParameterError, match="name must be one of"):
        candidate_estimator("forest")  # type: ignore[arg-type]


def test_select_stores_linear_and_certifies_through_protocol(tmp_path: object) -> None:
    """Selection picks a family on development data; the test stores as plain arrays and certifies."""
    table = _table(0)
    split = table.split(0.5, seed=1)
    pair = Pair("a", "b")
    plan = BoundPlan.for_pair(split.reserved, pair, family_size=1)
    test = FixedTest.select("certify", split.development, pair, plan=plan)
    assert isinstance(test.model, LinearScore | LaplaceScore | ClippedScore)
    assert test.name.startswith("certify:")
    protocol = Protocol("families", confidence_level=0.95)
    protocol.register(test)
    family = protocol.seal(split.reserved, ledger=Ledger(f"{tmp_path}/l.ledger")).evaluate()
    # shift 1.5 along one axis, 30 reserved rows per class: power is high but not 1.
    assert family.certificates[0].epsilon_lower >= 0.0


def test_max_bound_threshold_requires_plan() -> None:
    """threshold='max_bound' without a plan raises ParameterError pointing to BoundPlan."""
    split = _table(1).split(0.5, seed=0)
    with pytest.raises(ParameterError, match="plan must be a BoundPlan"):
        FixedTest.fit(None, split.development, Pair("a", "b"), threshold="max_bound")


def test_max_bound_threshold_with_plan_fits() -> None:
    """threshold='max_bound' with a plan gives a finite threshold."""
    split = _table(2).split(0.5, seed=0)
    plan = BoundPlan(30, 30, 0.025)
    test = FixedTest.fit(candidate_estimator("mean_difference"), split.development, Pair("a", "b"),
                         threshold="max_bound", plan=plan)
    assert np.isfinite(test.threshold)


def test_select_prefers_informative_family_over_paper_on_anisotropic_noise() -> None:
    """With strongly unequal noise across coordinates a variance-aware family is chosen."""
    rng = np.random.default_rng(5)
    d, n = 40, 80
    scale = np.where(np.arange(d) < 20, 0.1, 3.0)
    blocks = [rng.standard_normal((n, d)) * scale for _ in range(3)]
    blocks[1][:, :20] += 0.08
    table = EmbeddingTable.from_arrays(["a"] * n + ["b"] * n + ["c"] * n, np.vstack(blocks),
                                       normalize=False)
    split = table.split(0.5, seed=0)
    plan = BoundPlan.for_pair(split.reserved, Pair("a", "b"), family_size=1)
    test = FixedTest.select(["mean_difference", "pooled_diagonal_lda"], split.development,
                            Pair("a", "b"), plan=plan)
    assert test.name == "certify:pooled_diagonal_lda"


def test_bound_plan_rejects_zero_rows() -> None:
    """A plan with zero reserved rows raises ParameterError."""
    with pytest.raises(ParameterError, match="reserved n of class 0 must be an integer >= 1"):
        BoundPlan(0, 5, 0.01)


def _laplace_pair(seed: int, n: int, d: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows of two product-Laplace identities with unequal scales; returns x0, x1, centre shift, scales."""
    rng = np.random.default_rng(seed)
    scale = np.linspace(0.5, 2.0, d)
    shift = np.where(np.arange(d) % 2 == 0, 0.4, -0.4) * scale
    x0 = rng.laplace(0.0, scale, (n, d))
    x1 = rng.laplace(shift, scale, (n, d))
    return x0, x1, shift, scale


def test_laplace_lr_tracks_the_exact_product_laplace_ratio() -> None:
    """Fitted on 2,000 rows per class, the plug-in Laplace score is the exact log ratio up to scale.

    The exact log ratio is sum_j (|x_j| - |x_j - shift_j|) / scale_j. With 2,000 rows per class
    the medians and scales are estimated to a few percent, so on fresh rows the two scores
    correlate above 0.98 (a linear score correlates about 0.9: the ratio is clipped).
    """
    x0, x1, shift, scale = _laplace_pair(0, 2000)
    est = candidate_estimator("laplace_lr").fit(np.vstack([x0, x1]), np.r_[np.zeros(2000), np.ones(2000)])
    f0, f1, _, _ = _laplace_pair(1, 2000)
    fresh = np.vstack([f0, f1])
    exact = ((np.abs(fresh) - np.abs(fresh - shift)) / scale).sum(axis=1)
    linear = fresh @ (shift / scale**2)
    fitted = est.decision_function(fresh)
    assert np.corrcoef(fitted, exact)[0, 1] > 0.98
    assert np.corrcoef(fitted, exact)[0, 1] > np.corrcoef(linear, exact)[0, 1] + 0.03


def test_gaussian_lr_direction_follows_unequal_variances() -> None:
    """Under diagonal Gaussian noise the fitted direction is close to diff / variance (cosine > 0.97)."""
    rng = np.random.default_rng(3)
    d, n = 12, 3000
    sd = np.linspace(0.3, 3.0, d)
    diff = np.full(d, 0.5)
    x0 = rng.standard_normal((n, d)) * sd
    x1 = rng.standard_normal((n, d)) * sd + diff
    est = candidate_estimator("gaussian_lr").fit(np.vstack([x0, x1]), np.r_[np.zeros(n), np.ones(n)])
    w = est.coef_.reshape(-1)
    truth = diff / sd**2
    assert float(w @ truth / np.linalg.norm(w) / np.linalg.norm(truth)) > 0.97


def test_plug_in_families_store_as_data_and_round_trip_through_the_record() -> None:
    """Each plug-in ratio is stored as arrays; the record entry rebuilds a test with the same scores."""
    table = _table(4, n=60, d=6)
    split = table.split(0.5, seed=0)
    pair = Pair("a", "b")
    plan = BoundPlan.for_pair(split.reserved, pair, family_size=1)
    rows = split.development.rows("a")
    for name, kind in (("gaussian_lr", "linear"), ("laplace_lr", "laplace"), ("clipped_lr", "clipped")):
        test = FixedTest.select([name], split.development, pair, plan=plan)
        entry = test.to_json()
        assert entry["model"]["kind"] == kind
        again = FixedTest.from_json(entry)
        assert np.array_equal(again.model.score(rows), test.model.score(rows))


def test_certify_default_works_on_a_table_of_two_identities(tmp_path: object) -> None:
    """With no other identity to pool from, the pooled families fall back to the pair's own rows."""
    rng = np.random.default_rng(6)
    n, d = 80, 8
    rows = np.vstack([rng.laplace(0.0, 1.0, (n, d)), rng.laplace(1.0, 1.0, (n, d))])
    table = EmbeddingTable.from_arrays(["a"] * n + ["b"] * n, rows, normalize=False)
    split = table.split(0.5, seed=0)
    pair = Pair("a", "b")
    plan = BoundPlan.for_pair(split.reserved, pair, family_size=1)
    test = FixedTest.select("certify", split.development, pair, plan=plan)
    protocol = Protocol("two", confidence_level=0.95)
    protocol.register(test)
    family = protocol.seal(split.reserved, ledger=Ledger(f"{tmp_path}/l.ledger")).evaluate()
    # a shift of one scale in each of 8 coordinates separates 40 reserved rows per class almost
    # perfectly: the bound is positive with overwhelming probability
    assert family.certificates[0].epsilon_lower > 0.0


def test_clipped_score_rejects_malformed_arrays() -> None:
    """Mismatched lengths, a non-positive half-width or a non-list record field raise RecordError."""
    from certify.errors import RecordError
    from certify.protocol.scores import ClippedScore, score_model_from_json

    with pytest.raises(RecordError, match="one length"):
        ClippedScore((0.0,), (1.0, 2.0), (1.0,))
    with pytest.raises(RecordError, match="half-widths"):
        ClippedScore((0.0,), (1.0,), (0.0,))
    with pytest.raises(RecordError, match="list of numbers"):
        score_model_from_json({"kind": "clipped", "center": "0", "weight": [1.0], "half_width": [1.0]})


def test_pooled_families_reject_malformed_pooled_spreads() -> None:
    """Pooled spreads of the wrong length or with a non-positive entry raise ParameterError."""
    x = np.vstack([np.zeros((3, 2)), np.ones((3, 2))]) + np.arange(6).reshape(6, 1) * 0.1
    y = np.r_[np.zeros(3), np.ones(3)]
    with pytest.raises(ParameterError, match="pooled spreads"):
        candidate_estimator("laplace_lr", deviations=np.array([1.0, 1.0, 1.0]), dof=4).fit(x, y)
    with pytest.raises(ParameterError, match="pooled spreads"):
        candidate_estimator("gaussian_lr", variances=np.array([1.0, -1.0]), dof=4).fit(x, y)


def test_linear_discriminant_with_a_constant_coordinate_and_no_shrinkage() -> None:
    """A coordinate constant in both classes beside one whose Ledoit-Wolf shrinkage is 0.

    A 0/1 coordinate, half of each value in each class, makes every centred outer product equal
    the sample covariance, so the estimated shrinkage is 0; the constant coordinate then leaves
    the unshrunk covariance singular. The fit must solve on the varying coordinate alone.
    """
    from certify.protocol.families import LinearDiscriminant

    n = 2000
    X = np.c_[np.tile([0.0, 1.0], n // 2), np.full(n, 3.0)]
    y = np.r_[np.zeros(n // 2), np.ones(n // 2)].astype(int)
    X[y == 1, 0] += 0.5
    model = LinearDiscriminant("ledoit_wolf").fit(X, y)
    assert model.coef_[0, 1] == 0.0
    # one varying coordinate: weight = mean difference / within-class variance = 0.5 / 0.25,
    # whose within-class spread sqrt(2^2 x 0.25) is already 1
    assert model.coef_[0, 0] == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("X", "y"),
    [
        # every coordinate constant within its class, fewer rows than coordinates (Woodbury)
        (np.r_[np.zeros((2, 6)), np.ones((2, 6))], np.r_[0, 0, 1, 1]),
        # rank-one within-class scatter, more rows than coordinates: shrinkage estimate 0
        (np.r_[np.tile([[0.0, 0.0], [1.0, 1.0]], (2, 1)), np.tile([[2.0, 2.0], [3.0, 3.0]], (2, 1))],
         np.r_[0, 0, 0, 0, 1, 1, 1, 1]),
    ],
)
@pytest.mark.parametrize("covariance", ["ledoit_wolf", "diagonal", "identity"])
def test_linear_discriminant_without_within_class_spread_separates(
    X: np.ndarray, y: np.ndarray, covariance: str
) -> None:
    """Degenerate within-class covariances (Ledoit-Wolf shrinkage 0, or no spread at all).

    The fit must not fail on a singular system or overflow; the classes are separable, so the
    fitted score must separate them.
    """
    import warnings

    from certify.protocol.families import LinearDiscriminant

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = LinearDiscriminant(covariance).fit(X, y)
    score = X @ model.coef_[0] + model.intercept_[0]
    assert np.all(np.isfinite(model.coef_))
    assert score[y == 0].max() < score[y == 1].min()


@pytest.mark.parametrize(
    "X",
    [
        np.r_[np.zeros((5, 3)), np.ones((5, 3))],  # every coordinate constant within its class
        np.r_[np.zeros((5, 3)), np.tile([1.0, 0.0, 0.0], (5, 1))],  # and two equal across classes
    ],
)
@pytest.mark.parametrize("family", ["GaussianLR", "LaplaceLR", "ClippedLR"])
def test_spread_families_without_within_class_spread_separate(X: np.ndarray, family: str) -> None:
    """No within-class spread at all: a finite score that separates the classes, no NaN."""
    import warnings

    from certify.protocol import families

    y = np.r_[np.zeros(5), np.ones(5)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = getattr(families, family)().fit(X, y)
        score = model.decision_function(X)
    assert np.all(np.isfinite(score))
    assert score[y == 0].max() < score[y == 1].min()


def test_claim_steers_the_max_bound_threshold_toward_its_own_target() -> None:
    """A GDP claim's max_bound cut certifies more mu than Eq. 16's cut, judged at the exact error rates."""
    import certify as cf
    from certify.stats.binomial import clopper_pearson_upper
    from certify.stats.tradeoff import gdp_mu_lower

    rng = np.random.default_rng(11)
    n = 4000
    rows = np.vstack([rng.standard_normal((n, 1)), rng.standard_normal((n, 1)) + 1.0])
    table = EmbeddingTable.from_arrays(["a"] * n + ["b"] * n, rows, normalize=False)
    split = table.split(0.5, seed=0)
    pair = Pair("a", "b")
    plan = BoundPlan.for_pair(split.reserved, pair, family_size=1)
    est = candidate_estimator("mean_difference")
    eps = FixedTest.fit(est, split.development, pair, threshold="max_bound", plan=plan)
    gdp = FixedTest.fit(
        est, split.development, pair, threshold="max_bound", plan=plan, claim=cf.GDPClaim(1.0)
    )
    # each test's true rates from 10^6 fresh rows of each law, then the mu it certifies at the
    # planned 2,000 reserved rows per class (expected counts)
    fresh = np.random.default_rng(12).standard_normal((10**6, 1))
    certified = {}
    for name, test in (("eps", eps), ("gdp", gdp)):
        fpr, fnr = float(np.mean(test.predict(fresh))), 1.0 - float(np.mean(test.predict(fresh + 1.0)))
        u0 = clopper_pearson_upper(round(fpr * plan.n_class0), plan.n_class0, plan.alpha_per_rate)
        u1 = clopper_pearson_upper(round(fnr * plan.n_class1), plan.n_class1, plan.alpha_per_rate)
        certified[name] = float(gdp_mu_lower(u0, u1))
    assert certified["gdp"] > certified["eps"] + 0.05
    assert certified["gdp"] > 0.7  # the ceiling at 2,000 rows per class is about 0.87


def test_a_claim_without_a_plan_is_refused() -> None:
    """claim= steers only the planned criterion: without a plan it is a ParameterError naming the fix."""
    import certify as cf

    split = _table(3).split(0.5, seed=0)
    with pytest.raises(ParameterError, match="needs plan=BoundPlan"):
        FixedTest.fit(None, split.development, Pair("a", "b"), claim=cf.GDPClaim(1.0))


def test_select_returns_the_test_fit_gives_for_the_chosen_family() -> None:
    """FixedTest.select reuses the chosen family's out-of-fold scores: fit gives the same test."""
    from typing import cast

    from certify.protocol.families import FamilyName, estimator_for

    split = _table(5, n=80, d=10).split(0.5, seed=0)
    pair = Pair("a", "b")
    plan = BoundPlan.for_pair(split.reserved, pair, family_size=1)
    chosen = FixedTest.select("certify", split.development, pair, plan=plan, threshold="max_bound")
    family = cast(FamilyName, chosen.name.removeprefix("certify:"))
    refit = FixedTest.fit(estimator_for(family, split.development, pair), split.development, pair,
                          threshold="max_bound", plan=plan, name=chosen.name)
    assert chosen == refit


def test_max_bound_threshold_is_the_pessimistic_best_cut() -> None:
    """Threshold 'max_bound' is best_cut at the pessimistic development level MAX_BOUND_LEVEL."""
    from certify.protocol.criterion import best_cut
    from certify.protocol.fixed import MAX_BOUND_LEVEL

    split = _table(6, n=400, d=3).split(0.5, seed=0)
    pair = Pair("a", "b")
    plan = BoundPlan(200, 200, 0.0125)

    def score(x: np.ndarray) -> np.ndarray:
        return np.asarray(x[:, 0], dtype=np.float64)

    test = FixedTest.from_score(score, split.development, pair, name="first", threshold="max_bound",
                                plan=plan)
    s0, s1 = score(split.development.rows("a")), score(split.development.rows("b"))
    orientation, threshold, _ = best_cut(s0, s1, 200, 200, 0.0125, dev_level=MAX_BOUND_LEVEL)
    assert (test.orientation, test.threshold) == (orientation, threshold)


def test_select_auto_folds_are_five_below_the_row_count_and_two_above() -> None:
    """Auto folds give the test of folds=5 on few rows and of folds=2 on AUTO_FOLDS_ROWS rows."""
    from certify.protocol.fixed import AUTO_FOLDS_ROWS

    pair = Pair("a", "b")
    small = _table(7, n=60, d=4).split(0.5, seed=0)
    plan = BoundPlan.for_pair(small.reserved, pair, family_size=1)
    auto = FixedTest.select("certify", small.development, pair, plan=plan)
    assert auto == FixedTest.select("certify", small.development, pair, plan=plan, folds=5)
    large = _table(8, n=2 * AUTO_FOLDS_ROWS, d=2, shift=0.2).split(0.5, seed=0)
    plan = BoundPlan.for_pair(large.reserved, pair, family_size=1)
    candidates = ("mean_difference", "laplace_lr")
    auto = FixedTest.select(candidates, large.development, pair, plan=plan, threshold="max_bound")
    two = FixedTest.select(candidates, large.development, pair, plan=plan, threshold="max_bound", folds=2)
    five = FixedTest.select(candidates, large.development, pair, plan=plan, threshold="max_bound", folds=5)
    assert auto == two
    assert auto.development_auc != five.development_auc


def test_select_rejects_folds_that_are_not_an_integer_or_auto() -> None:
    """FixedTest.select takes folds as an integer >= 2 or 'auto'; anything else is a ParameterError."""
    split = _table(9).split(0.5, seed=0)
    pair = Pair("a", "b")
    plan = BoundPlan.for_pair(split.reserved, pair, family_size=1)
    for folds in ("five", 1):
        with suppress_type_checks(), pytest.raises(ParameterError, match="folds must be an integer >= 2"):
            FixedTest.select("certify", split.development, pair, plan=plan, folds=folds)  # type: ignore[arg-type]


def test_difference_and_laplace_scores_equal_their_formulas_bit_for_bit() -> None:
    """The in-place forms give the formulas' exact bits (zeros of both signs, ties at the centres)."""
    from certify.protocol.scores import DifferenceScore

    rng = np.random.default_rng(3)
    X = rng.laplace(size=(2000, 6))
    X[::7, 2] = -0.0
    X[::11, 0] = 0.0
    X[::13, 4] = X[::13, 3]
    steps = DifferenceScore.steps(X)
    assert steps.tobytes() == np.diff(X, axis=1, prepend=0.0).tobytes()
    a, b, s = rng.normal(size=6), rng.normal(size=6), rng.uniform(0.5, 2.0, size=6)
    X[::5, 1] = a[1]  # rows on a clipping edge
    model = LaplaceScore(a, b, s)
    low, high = np.minimum(a, b), np.maximum(a, b)
    formula = (np.sign(b - a) * (2.0 * np.clip(X, low, high) - (low + high))) @ (1.0 / s)
    assert model.score(X).tobytes() == formula.tobytes()
    # the differences scored in their own place: the Laplace score of a copy of them, the rows
    # left as they were
    before = X.copy()
    assert DifferenceScore(model).score(X).tobytes() == model.score(DifferenceScore.steps(X)).tobytes()
    assert X.tobytes() == before.tobytes()
    one = X[:, :1]
    assert DifferenceScore.steps(one).tobytes() == one.tobytes()


@pytest.mark.parametrize("inner", ["laplace", "product"])
def test_differences_of_more_rows_than_one_block_score_as_all_rows_at_once(inner: str) -> None:
    """DifferenceScore scores _HASH_ROWS rows at a time: the same bits as its inner score of all steps."""
    from certify.protocol.scores import _HASH_ROWS, BinnedScore, DifferenceScore, ProductScore

    rng = np.random.default_rng(4)
    X = rng.laplace(size=(2 * _HASH_ROWS + 3, 4))
    model: Any = (
        LaplaceScore(rng.normal(size=4), rng.normal(size=4), np.full(4, 1.5)) if inner == "laplace"
        else ProductScore(tuple(BinnedScore(j, (-1.0, 0.0, 1.0), (0.1, -0.2, 0.3, 0.5), 4)
                                for j in range(4)))
    )
    before = X.copy()
    expected = model.score(DifferenceScore.steps(X))
    assert DifferenceScore(model).score(X).tobytes() == expected.tobytes()
    assert DifferenceScore(model).score(X[:5]).tobytes() == expected[:5].tobytes()
    assert X.tobytes() == before.tobytes()


@pytest.mark.parametrize("rows", [1, 2, 1001])
def test_laplace_of_differences_fits_as_on_the_steps_of_all_rows(rows: int) -> None:
    """The Laplace fit to the steps, a step column at a time: the fit to all steps, bit for bit.

    Odd and even counts (one middle value or the mean of two), ties and zeros of both signs; the
    rows are left as they were.
    """
    from certify.blackbox._fits import _laplace
    from certify.protocol.scores import DifferenceScore

    rng = np.random.default_rng(rows)
    a, b = rng.laplace(size=(rows, 5)), rng.laplace(1.0, 2.0, size=(rows + 1, 5))
    a[::3, 2] = a[::3, 1]
    b[::4, 0] = -0.0
    before = a.copy(), b.copy()
    columns = _laplace(a, b, differences=True)
    whole = _laplace(DifferenceScore.steps(a), DifferenceScore.steps(b))
    assert columns is not None and whole is not None
    model, expected = columns[0], whole[0]
    assert isinstance(model, LaplaceScore) and isinstance(expected, LaplaceScore)
    for got, want in [(model.center_a, expected.center_a), (model.center_b, expected.center_b),
                      (model.scale, expected.scale)]:
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    assert a.tobytes() == before[0].tobytes() and b.tobytes() == before[1].tobytes()


@pytest.mark.parametrize("rows", [0, 1, 511, 512, 1537])
@pytest.mark.parametrize("layout", ["C", "F", "strided", "int"])
def test_scores_taken_as_tiled_lines_give_the_row_by_row_bits(rows: int, layout: str) -> None:
    """Rows run together (steps) or tiled 512 at a time (Laplace): numpy's row-by-row bits.

    Below, at and beyond one tile, with rows left over; rows in Fortran order, a strided view
    and integers: each is scored as its C-ordered float64 copy is, whatever its layout (a
    matrix product of Fortran-ordered terms may sum in another order), and left as it was.
    """
    from certify.protocol.scores import DifferenceScore

    rng = np.random.default_rng(rows)
    base = rng.laplace(size=(rows, 12)) * 10.0 ** rng.integers(-5, 5, size=(rows, 12))
    X: NDArray[Any] = {
        "C": base[:, :5].copy(), "F": np.asfortranarray(base[:, :5]), "strided": base[:, ::3][:, :4],
        "int": np.round(base[:, :5] * 10).astype(np.int64),
    }[layout]
    before = X.copy()
    rows64 = np.ascontiguousarray(X, dtype=np.float64)
    d = rows64.shape[1]
    expected = np.empty_like(rows64)
    expected[:, :1] = rows64[:, :1]
    expected[:, 1:] = rows64[:, 1:] - rows64[:, :-1]
    assert DifferenceScore.steps(X).tobytes() == expected.tobytes()
    a, b, s = rng.normal(size=d), rng.normal(size=d), rng.uniform(0.5, 2.0, size=d)
    low, high = np.minimum(a, b), np.maximum(a, b)
    terms = np.sign(b - a) * (2.0 * np.clip(rows64, low, high) - (low + high))
    assert LaplaceScore(a, b, s).score(X).tobytes() == (terms @ (1.0 / s)).tobytes()
    assert X.tobytes() == before.tobytes() and X.dtype == before.dtype


def test_scores_refuse_rows_that_are_not_a_matrix() -> None:
    """A 1-D array of outputs gets a DataError naming its shape, not numpy's IndexError."""
    from certify.errors import DataError
    from certify.protocol.scores import DifferenceScore

    for model in (LinearScore([1.0, 2.0], 0.0), DifferenceScore(LaplaceScore([0, 0], [1, 1], [1, 1]))):
        with pytest.raises(DataError, match=r"got shape \(2,\)"):
            model.score(np.zeros(2))


def test_a_linear_score_of_one_coordinate_is_that_coordinate_to_the_bit() -> None:
    """The one-coordinate path gives the product's numbers: signed zeros, tiny and huge values."""
    rng = np.random.default_rng(0)
    X = np.column_stack([
        rng.laplace(size=1000) * 10.0 ** rng.integers(-300, 300, size=1000) / 4.0,
        np.where(rng.random(1000) < 0.3, -0.0, rng.normal(size=1000)),
        rng.normal(size=1000),
    ])
    X[:5, 1] = [0.0, -0.0, 5e-324, -5e-324, 1.7e307]
    strided = np.asfortranarray(X)[::2]
    for coef, intercept in (([0.0, 1.0, 0.0], 0.0), ([1.0, 0.0, 0.0], 0.0), ([0.0, 0.0, 1.0], 0.0),
                            ([0.0, 2.0, 0.0], 0.0), ([0.0, 1.0, 0.0], 0.5), ([1.0, -0.0, 0.0], 0.0)):
        model = LinearScore(coef, intercept)
        for rows in (X, strided, np.clip(X, -1e30, 1e30).astype(np.float32), (X > 0).astype(np.int64)):
            expected = rows @ np.asarray(coef) + intercept
            assert model.score(rows).tobytes() == expected.tobytes()


def test_a_histogram_scores_more_rows_than_one_block_as_each_row_alone() -> None:
    """Rows are scored a block at a time; the blocks' edges change no row's score."""
    from certify.protocol.scores import _HASH_ROWS, HistogramScore

    rng = np.random.default_rng(2)
    n = 2 * _HASH_ROWS + 7
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 3, size=n)]).astype(np.float64)
    model = HistogramScore([[0.0, 1.0], [2.0, 2.0], [1.0, 0.0]], [-1.0, 2.0, 0.5], 0.25,
                           [(0, [-0.5, 0.5])])
    cells = model.cells(X)
    lookup = {(0.0, 1.0): -1.0, (2.0, 2.0): 2.0, (1.0, 0.0): 0.5}
    expected = np.array([lookup.get((a, b), 0.25) for a, b in cells.tolist()])
    assert len(set(expected.tolist())) == 4  # every key and the default are met
    np.testing.assert_array_equal(model.score(X), expected)
    np.testing.assert_array_equal(model.score(X[_HASH_ROWS - 3 : _HASH_ROWS + 3]),
                                  expected[_HASH_ROWS - 3 : _HASH_ROWS + 3])


def test_a_histogram_scores_binned_rows_as_their_cells() -> None:
    """Binned coordinates are replaced by their bin numbers, other coordinates kept, in any layout."""
    from certify.protocol.scores import HistogramScore

    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=3000), rng.integers(0, 3, size=3000), rng.laplace(size=3000)])
    edges = [(0, [-1.0, 0.0, 1.0]), (2, [0.5])]
    model = HistogramScore([[0.0, 1.0, 0.0], [3.0, 2.0, 1.0]], [-1.0, 2.0], 0.25, edges)
    for rows in (X, np.asfortranarray(X), X[::-3], X.astype(np.float32)):
        expected = np.array(rows, dtype=np.float64)
        for j, e in edges:
            expected[:, j] = np.searchsorted(np.asarray(e), rows[:, j].astype(np.float64), side="right")
        before = rows.copy(order="K")
        cells = model.cells(rows)
        assert cells.dtype == np.float64
        np.testing.assert_array_equal(rows, before)  # the caller's rows are never written
        np.testing.assert_array_equal(cells, expected)
        first = (expected == [0.0, 1.0, 0.0]).all(axis=1)
        second = (expected == [3.0, 2.0, 1.0]).all(axis=1)
        assert first.any() and second.any()
        np.testing.assert_array_equal(model.score(rows), np.where(first, -1.0, np.where(second, 2.0, 0.25)))
