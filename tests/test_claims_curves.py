"""Tests for curve claims (GDP, zCDP, privacy profiles): validation, certified parameters, refute."""

from __future__ import annotations

import math
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

import certify as cf
from certify.errors import ParameterError, StatusError
from certify.stats.tradeoff import gdp_delta, gdp_mu_lower, zcdp_rho_lower


def gaussian(x: Any, n: int, rng: np.random.Generator) -> Any:
    """The Gaussian mechanism with sensitivity 1 and sigma 1 (1-GDP, 0.5-zCDP), on the grid 2**-32.

    The noise is rounded to a multiple of 2**-32, so adding it to the input 0 or 1 is exact and
    the doubles' bits carry nothing the values do not (``x + rng.normal()`` computed in doubles
    is refuted through them: docs/bugs.md).
    """
    return x[0] + np.round(rng.normal(0.0, 1.0, size=n) * 2.0**32) / 2.0**32


def gdp_one_profile(epsilon: float) -> float:
    """The privacy profile of 1-GDP (a module-level function, so a claim on it pickles)."""
    return float(gdp_delta(epsilon, 1.0))


@pytest.fixture(scope="module")
def gaussian_audit(tmp_path_factory: pytest.TempPathFactory) -> cf.MechanismAudit:
    """A GDP-targeted audit of the Gaussian mechanism at 1e5 calls (seed 0, its own ledger)."""
    ledger = cf.Ledger(tmp_path_factory.mktemp("curves") / "m.ledger")
    return cf.audit_mechanism(
        gaussian, 0.0, 1.0, calls=100_000, ledger=ledger, progress=False, claim=cf.GDPClaim(1.0)
    )


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: cf.GDPClaim(0.0), "GDPClaim.mu must be a finite number > 0"),
        (lambda: cf.GDPClaim(math.inf), "GDPClaim.mu must be a finite number > 0"),
        (lambda: cf.GDPClaim(True), "GDPClaim.mu must be a finite number > 0"),
        (lambda: cf.ZCDPClaim(-0.5), "ZCDPClaim.rho must be a finite number > 0"),
        (lambda: cf.ZCDPClaim(math.nan), "ZCDPClaim.rho must be a finite number > 0"),
        (lambda: cf.ProfileClaim(0.5), "must be a callable epsilon -> delta"),  # type: ignore[arg-type]
        (lambda: cf.ProfileClaim(lambda e: 1.5), "must return a delta in [0, 1]"),
        (lambda: cf.ProfileClaim(gdp_one_profile, name=""), "name must be a non-empty string"),
        (lambda: cf.ProfileClaim(gdp_one_profile, epsilon_max=-1.0), "epsilon_max must be a finite number"),
        (lambda: cf.ProfileClaim.from_pld(object()), "pld must have get_delta_for_epsilon"),
    ],
)
def test_invalid_curve_claims_raise(make: Any, fragment: str) -> None:
    """A curve claim with a bad parameter is a ParameterError naming it."""
    with pytest.raises(ParameterError) as info:
        make()
    assert fragment in str(info.value)


def test_curve_claims_are_frozen_and_pickle() -> None:
    """Claims cannot be reassigned and survive a pickle round trip."""
    for claim in (cf.GDPClaim(1.0), cf.ZCDPClaim(0.5)):
        with pytest.raises(AttributeError):
            claim.mu = 2.0  # type: ignore[misc,union-attr]
        assert pickle.loads(pickle.dumps(claim)) == claim
    profile = cf.ProfileClaim(gdp_one_profile, name="1-GDP")
    back = pickle.loads(pickle.dumps(profile))
    assert back.name == "1-GDP" and back.deltas == profile.deltas


def test_implied_points_follow_the_curves() -> None:
    """The (epsilon, delta) point a curve implies sits on its profile: 1-GDP is (4.8866, 1e-6)-DP."""
    point = cf.GDPClaim(1.0).implied_point(1e-6)
    assert point.delta == 1e-6 and point.epsilon == pytest.approx(4.88655, abs=1e-4)
    assert gdp_delta(point.epsilon, 1.0) == pytest.approx(1e-6, rel=1e-6)
    zcdp = cf.ZCDPClaim(0.5).implied_point(1e-6)
    # the zCDP conversion is weaker than the exact GDP profile of the same Gaussian
    assert zcdp.epsilon > point.epsilon
    assert cf.ZCDPClaim(0.5).delta_of_epsilon(zcdp.epsilon) == pytest.approx(1e-6, rel=1e-6)


def test_profile_from_a_privacy_loss_distribution() -> None:
    """ProfileClaim.from_pld reads dp_accounting's deltas at every grid point."""
    pld_module = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    pld = pld_module.from_gaussian_mechanism(1.0, sensitivity=1.0, value_discretization_interval=1e-3)
    claim = cf.ProfileClaim.from_pld(pld)
    assert claim.name == "dp_accounting privacy loss distribution"
    k = claim.epsilons.index(min(claim.epsilons, key=lambda e: abs(e - 1.0)))
    assert claim.deltas[k] == pytest.approx(float(pld.get_delta_for_epsilon(claim.epsilons[k])))


def test_certified_parameters_follow_the_certificate_bounds(gaussian_audit: cf.MechanismAudit) -> None:
    """mu_lower and rho_lower are the trade-off and Renyi bounds of the certificate's two error bounds."""
    cert = gaussian_audit.certificate
    assert cert.mu_lower == pytest.approx(float(gdp_mu_lower(cert.u_fpr, cert.u_fnr)), rel=1e-12)
    rho = float(zcdp_rho_lower(cert.u_fpr, cert.u_fnr, refine=True))
    assert cert.rho_lower == pytest.approx(rho, rel=1e-12)
    # at 1e5 calls a GDP-targeted audit of the 1-GDP Gaussian certifies close to, and not above, 1
    assert 0.9 < cert.mu_lower <= 1.0
    assert 0.0 < cert.rho_lower <= 0.5


def test_refute_reads_each_claim_in_its_own_terms(gaussian_audit: cf.MechanismAudit) -> None:
    """A claim just below the certified parameter is Refuted, one just above it Inconclusive."""
    cert = gaussian_audit.certificate
    mu, rho = cert.mu_lower, cert.rho_lower
    refuted = cf.refute(cf.GDPClaim(mu - 0.01), cert)
    assert isinstance(refuted, cf.Refuted) and refuted.values == (mu,)
    assert "not mu-GDP for any mu below" in str(refuted)
    kept = cf.refute(cf.GDPClaim(mu + 0.01), gaussian_audit.family)
    assert isinstance(kept, cf.Inconclusive) and kept.best_value == mu
    assert isinstance(cf.refute(cf.ZCDPClaim(rho * 0.99), cert), cf.Refuted)
    inconclusive = cf.refute(cf.ZCDPClaim(rho * 1.01), cert)
    assert isinstance(inconclusive, cf.Inconclusive) and "rho_lower" in str(inconclusive)


def test_a_profile_claim_agrees_with_the_gdp_claim_it_tabulates(gaussian_audit: cf.MechanismAudit) -> None:
    """GDP is its own profile (Dong et al., Cor. 2.13): both claims get one verdict away from mu_lower."""
    cert = gaussian_audit.certificate
    for mu, expected in ((cert.mu_lower - 0.05, cf.Refuted), (cert.mu_lower + 0.05, cf.Inconclusive)):
        claim = cf.ProfileClaim(lambda e, m=mu: float(gdp_delta(e, m)), name=f"{mu:.3f}-GDP")
        assert isinstance(cf.refute(claim, cert), expected)
        assert isinstance(cf.refute(cf.GDPClaim(mu), cert), expected)
    weak = cf.ProfileClaim(lambda e: float(gdp_delta(e, cert.mu_lower - 0.05)), name="weak")
    verdict = cf.refute(weak, cert)
    margin, epsilon, delta = weak.excess(cert)
    assert isinstance(verdict, cf.Refuted) and verdict.values == (margin,)
    assert cert.epsilon_lower_at(delta) > epsilon  # the witness point is genuinely exceeded
    assert "fails at epsilon" in str(verdict)


def test_point_fields_are_refused_for_curve_verdicts(gaussian_audit: cf.MechanismAudit) -> None:
    """A curve verdict holds mu or rho values: reading epsilon_lower from it is a StatusError."""
    refuted = cf.refute(cf.GDPClaim(0.1), gaussian_audit.certificate)
    with pytest.raises(StatusError, match="holds mu_lower values"):
        _ = refuted.epsilon_lower  # type: ignore[union-attr]
    kept = cf.refute(cf.ZCDPClaim(10.0), gaussian_audit.certificate)
    with pytest.raises(StatusError, match=r"read verdict\.best_value"):
        _ = kept.best_epsilon_lower  # type: ignore[union-attr]
    point = cf.refute(cf.Claim(epsilon=0.1), gaussian_audit.certificate)
    assert isinstance(point, cf.Refuted) and point.epsilon_lower == point.values


def test_refute_refuses_a_number_as_claim(gaussian_audit: cf.MechanismAudit) -> None:
    """Refute needs a claim object; a bare mu is a StatusError naming the claim types."""
    with pytest.raises(StatusError, match="Claim, GDPClaim, ZCDPClaim or ProfileClaim"):
        cf.refute(1.0, gaussian_audit.certificate)  # type: ignore[arg-type]


def test_audit_records_the_targeted_claim(gaussian_audit: cf.MechanismAudit) -> None:
    """The pre-registration record names the claim and the target, and the audit keeps its verdict."""
    annotations = gaussian_audit.record.content["annotations"]
    assert annotations["claim"] == "mu-GDP with mu = 1"
    assert annotations["target"] == "mu"
    assert gaussian_audit.claim == cf.GDPClaim(1.0)
    assert isinstance(gaussian_audit.verdict, cf.Inconclusive)


def test_the_gdp_target_certifies_more_mu_than_the_epsilon_target(tmp_path: Path) -> None:
    """On the same calls, targeting the GDP claim certifies a larger mu than targeting Eq. 16's epsilon."""
    ledger = cf.Ledger(tmp_path / "m.ledger")
    kw: dict[str, Any] = {"calls": 200_000, "progress": False, "ledger": ledger}
    targeted = cf.audit_mechanism(gaussian, 0.0, 1.0, seed=1, claim=cf.GDPClaim(1.0), **kw)
    plain = cf.audit_mechanism(gaussian, 0.0, 1.0, seed=2, **kw)
    assert targeted.certificate.mu_lower > plain.certificate.mu_lower + 0.02


def _small_noise(x: Any, n: int, rng: np.random.Generator) -> Any:
    """A planted bug: the Gaussian mechanism with sigma 0.8 instead of 1, on the grid 2**-32."""
    return x[0] + np.round(rng.normal(0.0, 0.8, size=n) * 2.0**32) / 2.0**32


@pytest.mark.parametrize("seed", [3005, 3007])
def test_the_race_keeps_the_pair_that_refutes_a_gdp_claim(tmp_path: Path, seed: int) -> None:
    """0 ~ 1 at sigma 0.8 is 1.25-GDP, 0 ~ 0.75 is 0.94-GDP: the race judges pairs in mu.

    At these seeds the race judged showings by their events' log ratios, and the weaker pair's
    tail-ward cut put the stronger pair out (mu 0.92 and 0.90 certified: not refuted).
    """
    claim = cf.GDPClaim(1.0)
    audit = cf.audit_mechanism(
        _small_noise, inputs=[([0.0], [1.0]), ([0.0], [0.75])], calls=100_000, seed=seed,
        ledger=cf.Ledger(tmp_path / "m.ledger"), progress=False, claim=claim,
    )
    assert (audit.certificate.pair.a, audit.certificate.pair.b) == ("[0.0]", "[1.0]")
    assert isinstance(cf.refute(claim, audit.family), cf.Refuted)


def test_mmd_certificates_state_curve_parameters_from_total_variation(
    make_table: Any, ledger: cf.Ledger
) -> None:
    """An MMD certificate's mu and rho come from its total-variation bound mmd_lower / sqrt 2."""
    table = make_table((300, 300))
    split = table.split(0.5, seed=0)
    draft = cf.Protocol(name="mmd-curves")
    draft.register(cf.MMDTest.fit(split.development, cf.Pair("id0", "id1")))
    cert = draft.seal(split.reserved, ledger=ledger).evaluate().certificates[0]
    assert isinstance(cert.evidence, cf.MMDEvidence)
    tv = cert.evidence.mmd_lower / math.sqrt(2.0)
    assert cert.mu_lower == pytest.approx(2.0 * norm.ppf((1.0 + tv) / 2.0), rel=1e-12)
    assert cert.rho_lower == pytest.approx(2.0 * tv * tv, rel=1e-12)


def test_mechanism_report_shows_curves_beside_the_claim(
    gaussian_audit: cf.MechanismAudit, tmp_path: Path
) -> None:
    """The report states mu_lower and rho_lower with their status beside the claim, and draws the region."""
    from certify.report.mechanism import write_mechanism_report

    ledger = cf.Ledger(tmp_path / "unused.ledger")
    md, _ = write_mechanism_report(
        gaussian_audit, tmp_path / "r", ledger=ledger, seed=0, claim=cf.GDPClaim(1.0)
    )
    text = md.read_text()
    cert = gaussian_audit.certificate
    assert "| mu_lower (Certificate) | rho_lower (Certificate) |" in text
    assert f"{cert.mu_lower:.3f}"[:4] in text and "Claimed: mu-GDP with mu = 1" in text
    assert "predicted mu (Diagnostic)" in text  # the development table names the target's units
    png = (tmp_path / "r" / "certified-region-and-claimed-curve.png").read_bytes()
    assert png.startswith(b"\x89PNG")


def test_tradeoff_curves_of_each_claim_kind() -> None:
    """Each claim's trade-off curve: exact for points and GDP, and a GDP profile traces the GDP curve."""
    from certify.claims import forbids, tradeoff_curve

    alpha = np.array([1e-3, 0.05, 0.3, 0.6])
    gdp = tradeoff_curve(cf.GDPClaim(1.0), alpha)
    assert gdp == pytest.approx(norm.cdf(norm.isf(alpha) - 1.0), rel=1e-12)
    profile = tradeoff_curve(cf.ProfileClaim(gdp_one_profile), alpha)
    assert profile == pytest.approx(gdp, abs=2e-3)  # mu-GDP is its own profile, up to the grid
    point = tradeoff_curve(cf.Claim(1.0, 0.01), alpha)
    exact = np.maximum.reduce([0 * alpha, 0.99 - math.e * alpha, (0.99 - alpha) / math.e])
    assert point == pytest.approx(exact)
    zcdp = tradeoff_curve(cf.ZCDPClaim(0.5), alpha)
    assert np.all(zcdp <= gdp + 1e-9)  # 1-GDP implies 0.5-zCDP: zCDP allows at least as much
    assert not forbids(cf.ZCDPClaim(0.5), alpha, zcdp + 1e-6).any()
    assert forbids(cf.ZCDPClaim(0.5), alpha, np.maximum(zcdp - 1e-3, 0.0))[zcdp > 1e-3].all()
