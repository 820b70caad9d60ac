"""Status-typed audit routes: statuses, recorded inputs, agreement with the numerics, validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict

import certify as cf
from certify.methods import gauss_mech, kde_lr, mmd_permutation_test, mmd_tv, roc_oof
from certify.stats import gaussmech, kde, mmd


@pytest.fixture
def samples() -> tuple[np.ndarray, np.ndarray]:
    """Two shifted Gaussian samples in 16 dimensions."""
    rng = np.random.default_rng(7)
    return rng.normal(size=(40, 16)), rng.normal(size=(45, 16)) + 0.4


def test_gauss_mech_is_a_diagnostic_matching_eq9(samples: tuple[np.ndarray, np.ndarray]) -> None:
    """gauss_mech returns a Diagnostic whose score is Eq. 9 computed by straight loops."""
    a, b = samples
    res = gauss_mech(a, b, delta=1e-5, pair=cf.Pair("a", "b"))
    assert isinstance(res, cf.Diagnostic)
    mu_a, mu_b = a.mean(0), b.mean(0)
    s_a = math.sqrt(sum(float(((r - mu_a) ** 2).sum()) for r in a) / (a.size))
    s_b = math.sqrt(sum(float(((r - mu_b) ** 2).sum()) for r in b) / (b.size))
    expected = float(np.linalg.norm(mu_a - mu_b)) * math.sqrt(2 * math.log(1.25 / 1e-5)) / max(s_a, s_b)
    assert res.score == pytest.approx(expected, rel=1e-9)
    assert res.n_samples == (40, 45)
    assert res.equation == "Eq. 9"
    assert res.pair == cf.Pair("a", "b")
    assert res.assumptions


def test_kde_lr_is_a_diagnostic_matching_the_numerics(samples: tuple[np.ndarray, np.ndarray]) -> None:
    """kde_lr returns a Diagnostic equal to the stats-level sum over coordinates."""
    a, b = samples
    res = kde_lr(a, b, alpha=0.01)
    assert isinstance(res, cf.Diagnostic)
    assert res.score == pytest.approx(kde.kde_lr_score(a, b, alpha=0.01), rel=1e-12)
    assert res.parameters["alpha"] == 0.01


def test_mmd_tv_is_a_population_estimate_with_both_formulas(samples: tuple[np.ndarray, np.ndarray]) -> None:
    """mmd_tv returns Eq. 12 and the hockey-stick value of the same clipped sample MMD."""
    a, b = samples
    res = mmd_tv(a, b)
    assert isinstance(res, cf.PopulationEstimate)
    m = math.sqrt(max(mmd.mmd2_unbiased(a, b), 0.0))
    assert res.epsilon_estimate == pytest.approx(math.log((1 + m / 2) / (1 - m / 2)), rel=1e-12)
    assert res.epsilon_hockey_stick == pytest.approx(2 * math.atanh(m / math.sqrt(2)), rel=1e-12)
    assert res.epsilon_hockey_stick is not None and res.epsilon_hockey_stick >= res.epsilon_estimate


def test_roc_oof_matches_cross_val_predict_exactly(samples: tuple[np.ndarray, np.ndarray]) -> None:
    """roc_oof's AUC equals sklearn's on cross_val_predict scores with the same folds."""
    a, b = samples
    res = roc_oof(a, b, seed=3)
    X = np.vstack([a, b])
    y = np.r_[np.zeros(len(a)), np.ones(len(b))]
    cv = StratifiedKFold(5, shuffle=True, random_state=3)
    p = cross_val_predict(
        LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000), X, y, cv=cv, method="predict_proba"
    )[:, 1]
    assert isinstance(res, cf.PopulationEstimate)
    assert res.auc == pytest.approx(roc_auc_score(y, p), abs=1e-15)
    assert res.parameters["folds"] == 5


def test_roc_oof_perfect_separation_reports_the_exact_corner() -> None:
    """Well separated samples give +inf with the exact (0, 1) corner observed."""
    rng = np.random.default_rng(0)
    res = roc_oof(rng.normal(size=(30, 4)), rng.normal(size=(30, 4)) + 10, response="decision_function")
    assert res.epsilon_estimate == math.inf
    assert res.exact_corner is True
    assert res.infinite_by_endpoint is False


def test_permutation_test_is_a_diagnostic_with_phipson_smyth_p_value() -> None:
    """Strong separation gives p = 1/(B+1), and the p-value is reproducible from the seed."""
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(20, 3)), rng.normal(size=(20, 3)) + 4
    res = mmd_permutation_test(a, b, permutations=199, seed=5)
    assert isinstance(res, cf.Diagnostic)
    assert res.p_value == pytest.approx(1 / 200)
    assert mmd_permutation_test(a, b, permutations=199, seed=5) == res


@pytest.mark.parametrize(
    ("x_a", "x_b", "fragment"),
    [
        (np.zeros(5), np.zeros((5, 2)), "2-D array"),
        (np.ones((5, 2)), np.ones((5, 3)), "same number of columns"),
        (np.ones((1, 2)), np.ones((5, 2)), "at least 2 rows"),
        (np.full((5, 2), np.nan), np.ones((5, 2)), "finite"),
    ],
)
def test_routes_reject_bad_samples(x_a: np.ndarray, x_b: np.ndarray, fragment: str) -> None:
    """Malformed samples raise DataError naming the problem."""
    with pytest.raises(cf.DataError, match=fragment):
        gauss_mech(x_a, x_b)


def test_gauss_mech_needs_positive_delta() -> None:
    """GaussMech with delta = 0 is refused (ln(1.25/0) is infinite)."""
    rng = np.random.default_rng(0)
    with pytest.raises(cf.ParameterError, match="delta"):
        gauss_mech(rng.normal(size=(5, 2)), rng.normal(size=(5, 2)), delta=0.0)


def test_gaussmech_stats_and_route_share_moments(samples: tuple[np.ndarray, np.ndarray]) -> None:
    """The per-identity moment path gives the same score as the two-sample path."""
    a, b = samples
    (ma, sa), (mb, sb) = gaussmech.identity_moments(a), gaussmech.identity_moments(b)
    assert gaussmech.gauss_mech_from_moments(ma, sa, mb, sb, 1e-5) == pytest.approx(
        gauss_mech(a, b).score, rel=1e-12
    )
