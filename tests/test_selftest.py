"""Tests of the coverage self-test: tight cases, injected bugs and the route Monte Carlo."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from typeguard import suppress_type_checks

from certify.errors import ParameterError
from certify.plan import alpha_per_rate
from certify.selftest import (
    INJECTIONS,
    MECHANISM_BUGS,
    MECHANISM_CASE,
    NOMINAL,
    TIGHT_CASES,
    RouteCoverage,
    SelftestReport,
    TightCase,
    TightCoverage,
    expected_rate_level,
    power_to_flag,
    run_mechanism_cases,
    run_selftest,
    run_tight_cases,
)
from certify.stats.binomial import (
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_from_error_bounds,
)

RR, LAPLACE = TIGHT_CASES
BUGS = tuple(i for i in INJECTIONS if i != "none")
TABLE_BUGS = tuple(i for i in BUGS if i not in MECHANISM_BUGS)


def test_route_coverage_consistency_rule() -> None:
    """A route is consistent exactly when its interval's lower limit is at most the nominal level."""
    ok = RouteCoverage("r", 100, 3, 100, 0.03, 0.006, 0.085, 0.05)
    bad = RouteCoverage("r", 100, 20, 100, 0.2, 0.127, 0.29, 0.05)
    assert ok.consistent and not bad.consistent


def test_tight_cases_are_randomized_response_and_laplace() -> None:
    """The two tight cases and their closed-form error rates are the documented ones."""
    assert (RR.mechanism, RR.epsilon, RR.pairs, RR.n_class0, RR.n_class1) == (
        "randomized_response", 5.0, 4, 5700, 5700)
    assert math.isclose(RR.fpr, 1 / (1 + math.exp(5.0))) and RR.fnr == RR.fpr
    assert (LAPLACE.mechanism, LAPLACE.epsilon, LAPLACE.pairs, LAPLACE.n_class0, LAPLACE.n_class1) == (
        "laplace", 3.0, 4, 960, 100_000)
    assert math.isclose(LAPLACE.fpr, 0.5 * math.exp(-3.0)) and LAPLACE.fnr == 0.5
    # both events attain epsilon: FNR + e^eps FPR = 1 exactly (and, for RR, the mirror inequality)
    for case in TIGHT_CASES:
        assert math.isclose(case.fnr + math.exp(case.epsilon) * case.fpr, 1.0)


def test_correct_certify_fails_near_nominal_on_tight_cases() -> None:
    """Certify as it is fails at most at 0.05 on the tight cases, and not far below: the test can fail."""
    rr, laplace = run_tight_cases("none", sealed_families=0)
    assert rr.method == laplace.method == "exact"
    # Exact binomial sums: no sampling error, so the numbers are pinned to 1e-4.
    assert rr.rate == pytest.approx(0.0442, abs=1e-4)
    assert laplace.rate == pytest.approx(0.0205, abs=1e-4)
    assert 0.04 < rr.rate <= NOMINAL
    # Only the class-0 rate of a Laplace test can make it fail, so its ceiling is about
    # pairs * alpha_per_rate(4, 0.95) = 0.0251; the case reaches 80% of that.
    ceiling = 4 * alpha_per_rate(4, 0.95)
    assert 0.02 < laplace.rate < ceiling < NOMINAL
    assert not rr.flagged and not laplace.flagged
    assert rr.consistent and laplace.consistent


@pytest.mark.parametrize("bug", TABLE_BUGS)
def test_each_injected_bug_is_flagged(bug: str) -> None:
    """Every table-route bug pushes both tight cases' failure probability significantly above 0.05."""
    results = run_tight_cases(bug, sealed_families=0)  # type: ignore[arg-type]
    assert [r.inject for r in results] == [bug, bug]
    assert all(r.flagged and not r.consistent for r in results)
    for r in results:
        if r.method == "exact":  # power 1: the exact probability itself exceeds 0.05
            assert r.ci_low == r.rate > 0.075
        else:
            assert (r.case.mechanism, bug, r.families) == ("laplace", "reused_rows", 2000)
            assert r.ci_low == clopper_pearson_lower(r.failures, r.families, 0.05) > NOMINAL


def test_injected_bug_numbers() -> None:
    """The exact failure probabilities of the injected bugs are the documented ones."""
    exact = {bug: [round(r.rate, 4) for r in run_tight_cases(bug, sealed_families=0)]
             for bug in ("normal_approximation", "no_bonferroni")}
    assert exact == {"normal_approximation": [0.1171, 0.0762], "no_bonferroni": [0.2574, 0.1301]}
    assert round(run_tight_cases("reused_rows", cases=[RR])[0].rate, 4) == 0.2574


@pytest.mark.parametrize("bug", MECHANISM_BUGS)
def test_mechanism_bugs_leave_the_table_cases_alone(bug: str) -> None:
    """A mechanism-route bug changes nothing in the table cases: they stay at certify's own numbers."""
    assert [round(r.rate, 4) for r in run_tight_cases(bug, sealed_families=0)] == [0.0442, 0.0205]  # type: ignore[arg-type]


def test_mechanism_route_fails_near_its_stated_share() -> None:
    """Evaluations 1 and 2 of an audit, run through seal/evaluate, fail below but near their share of 0.05."""
    first, second = run_mechanism_cases("none", seed=2)
    assert (first.evaluation, second.evaluation) == (1, 2) and first.route == "mechanism"
    assert first.nominal == pytest.approx(0.05 * 6 / math.pi**2, rel=1e-12)
    assert second.nominal == pytest.approx(0.05 * 6 / (4 * math.pi**2), rel=1e-12)
    # exact sums at the issued levels: pinned to 1e-4, below nominal and at least 2/3 of it
    assert (round(first.rate, 4), round(second.rate, 4)) == (0.0279, 0.0052)
    assert 0.9 * first.nominal < first.rate <= first.nominal
    assert 0.66 * second.nominal < second.rate <= second.nominal
    assert [(c.sealed_certificates, c.sealed_mismatches) for c in (first, second)] == [(1, 0), (1, 0)]
    assert first.consistent and second.consistent
    assert math.isclose(expected_rate_level(1), 1 - math.sqrt(1 - 0.05 * 6 / math.pi**2))
    assert MECHANISM_CASE.pairs == 1


@pytest.mark.parametrize("bug", BUGS)
def test_every_bug_is_flagged_on_the_mechanism_route(bug: str) -> None:
    """Each injected bug, a seal spending ten times its share included, is flagged at both evaluations."""
    results = run_mechanism_cases(bug)  # type: ignore[arg-type]
    assert all(r.flagged and not r.consistent and r.rate > r.nominal for r in results)
    numbers = {"mechanism_level": [0.2779, 0.0571], "no_evaluation_share": [0.0406, 0.0406]}
    if bug in numbers:
        assert [round(r.rate, 4) for r in results] == numbers[bug]


def test_a_seal_that_spends_ten_times_its_share_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's bug, rate_level(10 * alpha) in the seal, makes the mechanism cases fail the self-test."""
    import certify.protocol.lifecycle as lifecycle

    real = lifecycle.rate_level
    monkeypatch.setattr(lifecycle, "rate_level", lambda alpha: real(10 * alpha))
    results = run_mechanism_cases("none")
    # the recomputation at evaluation refuses the record, or the issued level is judged: either way
    assert all(not r.consistent for r in results)
    assert all(r.sealed_mismatches == 1 for r in results)


def test_reused_rows_power_on_laplace() -> None:
    """The simulated Laplace bug (threshold chosen on the counted rows) is flagged with power above 0.9."""
    big = run_tight_cases("reused_rows", cases=[LAPLACE], families=10_000, seed=20_261)[0]
    assert big.method == "simulated" and big.families == 10_000
    # A two-sided 99.9% Clopper-Pearson interval of the true failure probability from 10,000
    # families (sd about 0.003); the power is computed at its lower end, so it is itself a
    # lower bound on the power, with probability 0.9995.
    low = clopper_pearson_lower(big.failures, big.families, 0.0005)
    assert 0.09 < low < big.rate < 0.13
    assert power_to_flag(low, 2000) > 0.999
    # And a correct certify is not flagged by a simulated check of the same size: its exact
    # failure probabilities give false-alarm probabilities of 0.0017 and 1e-22.
    assert power_to_flag(0.0442, 2000) < 0.002
    assert power_to_flag(0.0205, 2000) < 1e-20


def test_power_to_flag_false_alarm_at_most_five_percent() -> None:
    """At a failure probability at or below nominal, a simulated check flags with probability <= 0.05."""
    for families in (200, 2000, 10_000):
        assert power_to_flag(NOMINAL, families) <= 0.05
        below, at, above = (power_to_flag(p, families) for p in (0.04, NOMINAL, 0.06))
        assert below < at < above
    assert power_to_flag(0.0, 2000) == 0.0 and power_to_flag(1.0, 2000) == 1.0


@pytest.mark.parametrize("case", TIGHT_CASES, ids=lambda c: c.mechanism)
def test_exact_failure_agrees_with_simulation(case: TightCase) -> None:
    """The exact binomial sum matches a seeded simulation of certificates built from public statistics."""
    rng = np.random.default_rng(7)
    families = 40_000
    k0 = rng.binomial(case.n_class0, case.fpr, size=(families, case.pairs))
    k1 = rng.binomial(case.n_class1, case.fnr, size=(families, case.pairs))
    a = alpha_per_rate(case.pairs, 0.95)
    pairs, inverse = np.unique(np.stack([k0.ravel(), k1.ravel()], axis=1), axis=0, return_inverse=True)
    u0 = {k: clopper_pearson_upper(int(k), case.n_class0, a) for k in np.unique(pairs[:, 0])}
    u1 = {k: clopper_pearson_upper(int(k), case.n_class1, a) for k in np.unique(pairs[:, 1])}
    fails = np.array([epsilon_lower_from_error_bounds(u0[x], u1[y], 0.0) > case.epsilon for x, y in pairs])
    rate = fails[inverse.ravel()].reshape(families, case.pairs).any(axis=1).mean()
    exact = run_tight_cases(cases=[case], sealed_families=0)[0].rate
    # Sampling sd of the simulated rate is sqrt(p (1 - p) / 40000) <= 0.0011; allow 4.5 sd.
    assert abs(rate - exact) < 4.5 * math.sqrt(exact * (1 - exact) / families)


def test_sealed_path_issues_the_certificates_the_exact_sum_assumes() -> None:
    """Certificates from FixedTest -> seal -> evaluate equal Eq. 16 of their own counts at alpha_per_rate."""
    results = run_tight_cases("none", sealed_families=1, seed=3)
    assert [(r.sealed_certificates, r.sealed_mismatches) for r in results] == [(4, 0), (4, 0)]
    assert all(r.consistent for r in results)
    # Same seed, same process: a new run is a new experiment, not a second look at spent data.
    again = run_tight_cases("none", sealed_families=1, seed=3)
    assert [(r.sealed_certificates, r.sealed_mismatches) for r in again] == [(4, 0), (4, 0)]


def test_sealed_mismatch_makes_a_case_inconsistent() -> None:
    """A case whose sealed certificates differ from their derivation is inconsistent though not flagged."""
    bad = TightCoverage(RR, "none", "exact", 0.03, 0, 0, 0.03, 0.05, 4, 1)
    assert not bad.flagged and not bad.consistent
    report = SelftestReport((), (), 1.0, (bad,), "none")
    assert not report.consistent
    assert "SEALED PATH DIFFERS on 1 certificates" in report.to_text()


def test_report_text_and_pickle() -> None:
    """The report lists every tight case with its verdict and survives a pickle round-trip."""
    report = run_selftest(routes=False, inject="normal_approximation")
    assert report.routes == () and report.inject == "normal_approximation" and not report.consistent
    text = report.to_text()
    assert "injected bug: normal_approximation" in text
    assert text.count("FLAGGED: TOO MANY FAILURES") == 4  # two table cases, two mechanism evaluations
    assert "mechanism route, evaluation 2" in text
    again = pickle.loads(pickle.dumps(report))
    assert again == report and isinstance(again.tight[0], TightCoverage)


def test_unknown_injection_is_refused() -> None:
    """An unknown bug name raises ParameterError naming the choices and the fix."""
    # typeguard (when active) would refuse the Literal first; the library's own check is tested.
    with suppress_type_checks():
        with pytest.raises(ParameterError, match=r"inject must be one of 'none', 'normal_approximation', "
                           r"'no_bonferroni', 'reused_rows', 'mechanism_level', 'no_evaluation_share'; "
                           r"got 'wald'\. Use 'none'"):
            run_tight_cases("wald")  # type: ignore[arg-type]
        with pytest.raises(ParameterError, match="inject must be one of"):
            run_selftest(routes=False, inject="bonferroni")  # type: ignore[arg-type]


def test_tight_case_fields_are_checked() -> None:
    """A TightCase with an unknown mechanism, a non-positive epsilon or no pairs is refused."""
    with pytest.raises(ParameterError, match=r"TightCase.mechanism must be 'randomized_response' or "
                       r"'laplace'; got 'gaussian'\."):
        TightCase("gaussian", 1.0, 1, 10, 10)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match=r"TightCase.epsilon must be a finite number > 0; got 0\.0\."):
        TightCase("laplace", 0.0, 1, 10, 10)
    with pytest.raises(ParameterError, match=r"TightCase.pairs must be an integer >= 1; got 0\."):
        TightCase("laplace", 1.0, 0, 10, 10)
    with pytest.raises(ParameterError, match="cases must be a non-empty sequence of TightCase"):
        run_tight_cases(cases=[])


def test_cli_selftest_flags_an_injected_bug(capsys: pytest.CaptureFixture[str]) -> None:
    """`certify selftest --tight-only --inject no_bonferroni` prints the flag and exits 1; none exits 0."""
    from certify.cli import main

    assert main(["selftest", "--tight-only", "--quick", "--inject", "no_bonferroni"]) == 1
    assert capsys.readouterr().out.count("FLAGGED") == 4
    assert main(["selftest", "--tight-only", "--quick", "--inject", "mechanism_level"]) == 1
    assert capsys.readouterr().out.count("FLAGGED") == 2  # the two mechanism evaluations only
    assert main(["selftest", "--tight-only", "--quick"]) == 0
    assert "FLAGGED" not in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["selftest", "--inject", "wald"])
    assert exc.value.code == 2


def test_selftest_progress_names_the_tight_cases(capsys: pytest.CaptureFixture[str]) -> None:
    """With progress on, the tight cases announce their start and end on stderr."""
    run_selftest(routes=False, progress=True)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "[certify] tight cases: exact failure probabilities and sealed-path families"
    assert err[1].startswith("[certify] tight cases done (")


@pytest.mark.slow
def test_quick_selftest_is_consistent(capsys: pytest.CaptureFixture[str]) -> None:
    """The quick self-test runs every route through seal/evaluate and finds no excess failures.

    Its route Monte Carlo shows the families as they finish.
    """
    report = run_selftest(quick=True, progress=True)
    err = capsys.readouterr().err
    for shown in ("0/80 (0%)", "40/80 (50%)", "80/80 (100%)"):
        assert f"route Monte Carlo: families {shown}" in err
    assert {r.route for r in report.routes} == {
        "certificate_learned", "certificate_default", "certificate_oracle", "certificate_mmd"}
    assert all(r.families == 80 for r in report.routes)
    # Every family is built so a violation is numerically possible (ceiling > reference).
    assert all(r.failure_possible == r.families for r in report.routes)
    assert [t.case for t in report.tight] == [*TIGHT_CASES, MECHANISM_CASE, MECHANISM_CASE]
    assert report.inject == "none"
    assert report.consistent
