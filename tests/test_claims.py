"""Tests for claims and the two verdicts of refute."""

from __future__ import annotations

import math
import pickle
from typing import Any

import pytest

import certify as cf
from certify.errors import ImmutableResultError, ParameterError, StatusError


@pytest.mark.parametrize(
    ("epsilon", "delta", "fragment"),
    [
        (-1.0, 0.0, "Claim.epsilon must be a finite number >= 0"),
        (math.inf, 0.0, "Claim.epsilon must be a finite number >= 0"),
        (math.nan, 0.0, "Claim.epsilon must be a finite number >= 0"),
        (1.0, 1.0, "Claim.delta must be a number in [0, 1)"),
        (1.0, -0.1, "Claim.delta must be a number in [0, 1)"),
    ],
)
def test_invalid_claims_raise(epsilon: float, delta: float, fragment: str) -> None:
    """A claim needs a finite epsilon >= 0 and a delta in [0, 1)."""
    with pytest.raises(ParameterError) as info:
        cf.Claim(epsilon=epsilon, delta=delta)
    assert fragment in str(info.value)


def test_claim_is_immutable() -> None:
    """A claim's epsilon cannot be reassigned."""
    claim = cf.Claim(epsilon=1.0, delta=1e-5)
    with pytest.raises(AttributeError):
        claim.epsilon = 2.0  # type: ignore[misc]
    assert claim == cf.Claim(epsilon=1.0, delta=1e-5)


@pytest.mark.parametrize(
    "evidence",
    [
        cf.Diagnostic(method="gauss_mech", score=50.0),
        cf.PopulationEstimate(method="roc_oof", epsilon_estimate=math.inf),
        3.0,
        None,
    ],
)
def test_refute_refuses_uncertified_evidence(evidence: Any) -> None:
    """Diagnostics, population estimates and plain numbers cannot refute a claim (StatusError)."""
    with pytest.raises(StatusError, match="evidence must be a Certificate or CertificateFamily"):
        cf.refute(cf.Claim(epsilon=0.0), evidence)


def test_refute_refuses_a_non_claim(family: cf.CertificateFamily) -> None:
    """The claim argument must be a Claim."""
    with pytest.raises(StatusError, match="claim must be a Claim"):
        cf.refute(1.0, family)  # type: ignore[arg-type]


def test_family_refutes_a_claim_below_its_bound(family: cf.CertificateFamily) -> None:
    """A claim below the zero-error pair's 1.277 bound is refuted by that pair alone."""
    verdict = cf.refute(cf.Claim(epsilon=1.0, delta=0.0), family)
    assert isinstance(verdict, cf.Refuted)
    assert verdict.certificates == (family.certificates[0],)
    assert verdict.epsilon_lower == (family.certificates[0].epsilon_lower,)
    assert verdict.confidence_level == 0.95
    assert "Refuted" in str(verdict) and "1.277 > 1" in str(verdict) and "id0~id1" in str(verdict)


def test_claim_above_every_bound_is_inconclusive(family: cf.CertificateFamily) -> None:
    """A claim at or above every bound gives Inconclusive with the largest bound, never 'private'."""
    best = family.certificates[0].epsilon_lower
    for epsilon in (best, 2.0):
        verdict = cf.refute(cf.Claim(epsilon=epsilon), family)
        assert isinstance(verdict, cf.Inconclusive)
        assert verdict.best_epsilon_lower == best and verdict.n_certificates == 2
        assert "has not shown the mechanism private" in str(verdict)


def test_refute_reads_bounds_at_the_claims_delta(family: cf.CertificateFamily) -> None:
    """The bound is recomputed at the claim's delta: a large delta turns Refuted into Inconclusive."""
    cert = family.certificates[0]
    at_small = cf.refute(cf.Claim(epsilon=1.2, delta=1e-5), cert)
    at_large = cf.refute(cf.Claim(epsilon=1.2, delta=0.2), cert)
    assert isinstance(at_small, cf.Refuted)
    assert at_small.epsilon_lower == (cert.epsilon_lower_at(1e-5),)
    assert isinstance(at_large, cf.Inconclusive)
    assert at_large.best_epsilon_lower == pytest.approx(cert.epsilon_lower_at(0.2), rel=1e-12)


def test_single_certificate_is_evidence(family: cf.CertificateFamily) -> None:
    """One certificate refutes at its family's confidence level."""
    verdict = cf.refute(cf.Claim(epsilon=0.5), family.certificates[0])
    assert isinstance(verdict, cf.Refuted) and verdict.confidence_level == 0.95
    zero = cf.refute(cf.Claim(epsilon=0.0), family.certificates[1])
    assert isinstance(zero, cf.Inconclusive) and zero.best_epsilon_lower == 0.0


def test_verdicts_are_not_truth_values(family: cf.CertificateFamily) -> None:
    """A verdict cannot be used in an if statement or as a number (StatusError)."""
    verdict = cf.refute(cf.Claim(epsilon=5.0), family)
    with pytest.raises(StatusError, match="truth value"):
        bool(verdict)
    with pytest.raises(ImmutableResultError):
        verdict.claim = cf.Claim(epsilon=0.0)  # type: ignore[misc]


def test_verdicts_survive_pickle(family: cf.CertificateFamily) -> None:
    """Both verdicts round-trip through pickle as equal objects."""
    for claim in (cf.Claim(epsilon=0.1), cf.Claim(epsilon=9.0)):
        verdict = cf.refute(claim, family)
        back = pickle.loads(pickle.dumps(verdict))
        assert type(back) is type(verdict) and back == verdict
