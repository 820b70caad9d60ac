"""Coverage self-test: certificate families must fail no more often than their level allows.

Two parts. The tight cases (:func:`run_tight_cases`) are known-epsilon pairs whose certified
bound is tight, so a correct certify fails with probability near the nominal 0.05, computed
exactly from binomial sums through certify's public statistics; a known bug can be injected to
see it flagged. The mechanism route's tight cases (:func:`run_mechanism_cases`) run randomized
response through a mechanism audit's seal and evaluation and judge each issued certificate at the
level it was issued. The route Monte Carlo runs every certificate route (the paper's logistic test,
certify's default test, the exact likelihood-ratio oracle, the certified MMD route) through
``FixedTest`` -> ``Protocol.seal`` -> ``evaluate`` on the known-epsilon benchmark at settings
where a violation is numerically possible. :func:`run_selftest` runs both.
"""

from certify.selftest._mechanism import (
    MECHANISM_CASE,
    MECHANISM_EVALUATIONS,
    expected_rate_level,
    run_mechanism_cases,
)
from certify.selftest._routes import NOMINAL, ROUTES, RouteCoverage
from certify.selftest._run import SelftestReport, run_selftest
from certify.selftest._tight import (
    CONFIDENCE_LEVEL,
    INJECTIONS,
    MECHANISM_BUGS,
    SELECTION_THRESHOLDS,
    TIGHT_CASES,
    Injection,
    MechanismName,
    TightCase,
    TightCoverage,
    check_injection,
    power_to_flag,
    run_tight_cases,
)

__all__ = [
    "CONFIDENCE_LEVEL",
    "INJECTIONS",
    "MECHANISM_BUGS",
    "MECHANISM_CASE",
    "MECHANISM_EVALUATIONS",
    "NOMINAL",
    "ROUTES",
    "SELECTION_THRESHOLDS",
    "TIGHT_CASES",
    "Injection",
    "MechanismName",
    "RouteCoverage",
    "SelftestReport",
    "TightCase",
    "TightCoverage",
    "check_injection",
    "expected_rate_level",
    "power_to_flag",
    "run_mechanism_cases",
    "run_selftest",
    "run_tight_cases",
]
