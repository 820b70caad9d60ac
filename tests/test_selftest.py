"""Tests of the coverage self-test."""

from __future__ import annotations

import pytest

from certify.selftest import RouteCoverage, run_selftest


def test_route_coverage_consistency_rule() -> None:
    """A route is consistent exactly when its interval's lower limit is at most the nominal level."""
    ok = RouteCoverage("r", 100, 3, 100, 0.03, 0.006, 0.085, 0.05)
    bad = RouteCoverage("r", 100, 20, 100, 0.2, 0.127, 0.29, 0.05)
    assert ok.consistent and not bad.consistent


@pytest.mark.slow
def test_quick_selftest_is_consistent() -> None:
    """The quick self-test runs every route through seal/evaluate and finds no excess failures."""
    report = run_selftest(quick=True)
    assert {r.route for r in report.routes} == {
        "certificate_learned", "certificate_default", "certificate_oracle", "certificate_mmd"}
    assert all(r.families == 80 for r in report.routes)
    # Every family is built so a violation is numerically possible (ceiling > reference).
    assert all(r.failure_possible == r.families for r in report.routes)
    assert report.consistent
