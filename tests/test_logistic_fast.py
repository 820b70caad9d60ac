"""The lean L2 logistic regression path reproduces scikit-learn's lbfgs LogisticRegression."""

from __future__ import annotations

import warnings

import numpy as np
import pytest


def _data(seed: int, n: int, d: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n, d)), rng.normal(size=(n, d)) + shift])
    y = np.r_[np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)]
    order = rng.permutation(2 * n)
    return X[order], y[order]


@pytest.mark.parametrize(
    ("n", "d", "shift", "C"),
    [(12, 512, 0.05, 1.0), (80, 512, 0.1, 1.0), (240, 512, 0.0, 1.0), (150, 16, 0.3, 0.1),
     (500, 8, 1.0, 10.0)],
)
def test_same_optimum_and_iterations_as_sklearn(n: int, d: int, shift: float, C: float) -> None:
    """Coefficients agree with LogisticRegression(lbfgs) to 1e-10 relative, in the same iterations.

    Both run L-BFGS-B from zero with the same options on the same objective; they differ only in
    floating-point summation order, so agreement is near machine precision (observed ~1e-15).
    The bound 1e-10 leaves room for BLAS differences and still fails for any change of the
    objective (a penalty off by a factor n moves the coefficients by O(1)).
    """
    from sklearn.linear_model import LogisticRegression

    from certify._sklearn import fit_labeled

    X, y = _data(n + d, n, d, shift)
    ours = fit_labeled(LogisticRegression(C=C, solver="lbfgs", max_iter=1000), X, y)
    ref = LogisticRegression(C=C, solver="lbfgs", max_iter=1000).fit(X, y)
    a = np.r_[ours.coef_.ravel(), ours.intercept_]  # type: ignore[attr-defined]
    b = np.r_[ref.coef_.ravel(), ref.intercept_]
    assert np.max(np.abs(a - b)) <= 1e-10 * np.max(np.abs(b))
    assert int(ours.n_iter_[0]) == int(ref.n_iter_[0])  # type: ignore[attr-defined]
    assert list(ours.classes_) == [0, 1]  # type: ignore[attr-defined]


def test_scores_equal_sklearn_methods() -> None:
    """score_binary's direct formulas give sklearn's decision_function and predict_proba[:, 1]."""
    from sklearn.linear_model import LogisticRegression

    from certify._sklearn import score_binary

    X, y = _data(3, 60, 20, 0.4)
    model = LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(score_binary(model, X, "decision_function"), model.decision_function(X))
    np.testing.assert_array_equal(score_binary(model, X, "predict_proba"), model.predict_proba(X)[:, 1])


def test_other_estimators_use_their_own_fit() -> None:
    """An L1 penalty, class weights or a subclass are fitted by scikit-learn itself."""
    from sklearn.linear_model import LogisticRegression

    from certify._sklearn import _l2_logistic_settings, fit_labeled

    class Sub(LogisticRegression):  # type: ignore[misc]
        pass

    assert _l2_logistic_settings(LogisticRegression()) == (1.0, 1e-4, 100)
    assert _l2_logistic_settings(LogisticRegression(class_weight="balanced")) is None
    assert _l2_logistic_settings(LogisticRegression(solver="liblinear")) is None
    assert _l2_logistic_settings(LogisticRegression(l1_ratio=1.0, solver="saga")) is None
    assert _l2_logistic_settings(LogisticRegression(C=np.inf)) is None
    assert _l2_logistic_settings(Sub()) is None
    X, y = _data(4, 40, 5, 0.5)
    weighted = fit_labeled(LogisticRegression(class_weight={0: 1.0, 1: 5.0}), X, y)
    ref = LogisticRegression(class_weight={0: 1.0, 1: 5.0}).fit(X, y)
    np.testing.assert_array_equal(weighted.coef_, ref.coef_)  # type: ignore[attr-defined]


def test_non_convergence_warns_like_sklearn() -> None:
    """Hitting max_iter raises sklearn's ConvergenceWarning instead of passing silently."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    from certify._sklearn import fit_labeled

    X, y = _data(5, 100, 50, 0.2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_labeled(LogisticRegression(max_iter=2), X, y)
    assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


def test_out_of_fold_scores_match_cross_val_predict() -> None:
    """The out-of-fold route keeps matching sklearn's cross_val_predict with the default classifier."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    from certify.stats.roc import out_of_fold_scores

    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(40, 30)), rng.normal(size=(40, 30)) + 0.3
    ours = out_of_fold_scores(a, b, folds=5, seed=7)
    X = np.vstack([a, b])
    y = np.r_[np.zeros(40, dtype=np.int64), np.ones(40, dtype=np.int64)]
    ref = cross_val_predict(
        LogisticRegression(C=1.0, solver="lbfgs", max_iter=1000), X, y,
        cv=StratifiedKFold(5, shuffle=True, random_state=7), method="predict_proba",
    )[:, 1]
    np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    ("n", "d", "max_iter"), [(40, 512, 1000), (200, 30, 1000), (100, 50, 3), (300, 8, 1000)]
)
def test_fit_equals_minimize_on_the_plain_objective(n: int, d: int, max_iter: int) -> None:
    """fit_logistic_l2 returns minimize's point on the plainly written objective, bit for bit."""
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit
    from sklearn.exceptions import ConvergenceWarning

    from certify._sklearn import fit_logistic_l2

    X, y = _data(n * d + max_iter, n // 2, d, 0.3)
    sign, target = 2.0 * y - 1.0, y.astype(float)

    def fun(wb: np.ndarray) -> tuple[float, np.ndarray]:
        z = X @ wb[:d] + wb[d]
        g = (expit(z) - target) / n
        loss = -float(log_expit(sign * z).sum()) / n + 0.5 * (1.0 / n) * float(wb[:d] @ wb[:d])
        return loss, np.r_[X.T @ g + (1.0 / n) * wb[:d], g.sum()]

    ref = minimize(fun, np.zeros(d + 1), method="L-BFGS-B", jac=True,
                   options={"maxiter": max_iter, "maxls": 50, "gtol": 1e-4,
                            "ftol": 64 * np.finfo(float).eps, "maxcor": 10, "maxfun": 15_000})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        coef, intercept, nit = fit_logistic_l2(X, y, 1.0, 1e-4, max_iter)
    np.testing.assert_array_equal(np.r_[coef, intercept], ref.x)
    assert nit == ref.nit
    assert (ref.status == 0) is (max_iter > 3)


def test_no_private_interface_of_another_package() -> None:
    """No certify module reaches a private SciPy interface (L-BFGS-B goes through minimize)."""
    from pathlib import Path

    import certify

    root = Path(certify.__file__).parent
    users = sorted(
        str(p.relative_to(root)) for p in root.rglob("*.py")
        if any(s in p.read_text(encoding="utf-8") for s in ("scipy.optimize._", "import _lbfgsb", "setulb("))
    )
    assert users == []


def test_stratified_folds_cache_returns_equal_read_only_folds() -> None:
    """Repeated calls give the computed folds again, read-only, and keys keep seeds and labels apart."""
    from certify._sklearn import _stratified_folds, stratified_folds

    y = np.r_[np.zeros(23, dtype=np.int64), np.ones(31, dtype=np.int64)]
    first = stratified_folds(y, 5, 11)
    first.pop()  # changing the returned list leaves the cache alone
    again = stratified_folds(y, 5, 11)
    assert len(again) == 5
    for (tr, te), (rtr, rte) in zip(again, _stratified_folds(y, 5, 11), strict=True):
        np.testing.assert_array_equal(tr, rtr)
        np.testing.assert_array_equal(te, rte)
        assert not tr.flags.writeable and not te.flags.writeable
    other_seed = stratified_folds(y, 5, 12)
    assert any(not np.array_equal(a[1], b[1]) for a, b in zip(again, other_seed, strict=True))
    flipped = stratified_folds(1 - y, 5, 11)
    np.testing.assert_array_equal(flipped[0][1], _stratified_folds(1 - y, 5, 11)[0][1])


@pytest.mark.parametrize(("n0", "n1", "folds", "seed"), [(50, 50, 5, 0), (17, 33, 5, 123), (5, 9, 5, 7),
                                                         (150, 150, 5, 2**32 - 1), (40, 41, 3, 9)])
def test_stratified_folds_equal_sklearn(n0: int, n1: int, folds: int, seed: int) -> None:
    """The lean fold assignment is StratifiedKFold(shuffle=True)'s, fold by fold, in any label order."""
    from sklearn.model_selection import StratifiedKFold

    from certify._sklearn import stratified_folds

    rng = np.random.default_rng(n0 * n1 + seed % 1000)
    ordered = np.r_[np.zeros(n0, dtype=np.int64), np.ones(n1, dtype=np.int64)]
    for y in (ordered, rng.permutation(ordered), 1 - ordered):
        ours = stratified_folds(y, folds, seed)
        ref = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros((len(y), 1)), y))
        assert len(ours) == len(ref) == folds
        for (tr, te), (rtr, rte) in zip(ours, ref, strict=True):
            np.testing.assert_array_equal(tr, rtr)
            np.testing.assert_array_equal(te, rte)
