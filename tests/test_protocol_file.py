"""Protocol files: every shipped file validates; errors name the key, the constraint and the value."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from certify.protocol.files import (
    AuditPlan,
    BenchmarkPlan,
    ProtocolFileError,
    load_protocol_file,
    parse_protocol,
)

PROTOCOLS = sorted((Path(__file__).resolve().parents[1] / "protocols").glob("*.toml"))
MINIMAL = '[protocol]\nname = "a"\n[data]\n[pairs]\n'


def test_protocol_folder_is_not_empty() -> None:
    """The repository ships protocol files for the paper's audits and benchmark."""
    names = {p.name for p in PROTOCOLS}
    assert {"face-audit.toml", "random-donor-cascade.toml", "benchmark-paper.toml"} <= names


@pytest.mark.parametrize("path", PROTOCOLS, ids=lambda p: p.name)
def test_every_shipped_protocol_validates(path: Path) -> None:
    """Each file in protocols/ parses into a plan."""
    assert isinstance(load_protocol_file(path), AuditPlan | BenchmarkPlan)


def test_face_audit_matches_section_5_3() -> None:
    """The face audit protocol encodes the paper's 70/30, 100 candidates, 5 disjoint pairs, 0.05/80."""
    plan = load_protocol_file(Path(__file__).resolve().parents[1] / "protocols" / "face-audit.toml")
    assert isinstance(plan, AuditPlan)
    assert (plan.dev_fraction, plan.candidates, plan.select, plan.disjoint) == (0.7, 100, 5, True)
    assert (1 - plan.confidence_level) / (2 * (plan.family_size or 0)) == pytest.approx(0.05 / 80)


def test_defaults_fill_a_minimal_file() -> None:
    """A minimal audit file gets the documented defaults."""
    plan = parse_protocol(tomllib.loads(MINIMAL))
    assert isinstance(plan, AuditPlan)
    assert (plan.confidence_level, plan.delta, plan.threshold, plan.folds) == (0.95, 0.0, "youden", 5)


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (
            {"protocol": {"name": "a", "confidence_level": 1.5}},
            "protocol.confidence_level must be in (0, 1); got 1.5",
        ),
        ({"protocol": {"name": "a", "delta": -0.1}}, "protocol.delta must be in [0, 1); got -0.1"),
        ({"protocol": {"name": "a", "colour": 1}}, "protocol.colour is not a known key"),
        ({"protocol": {}}, "protocol.name is required"),
        ({"protocol": {"name": 3}}, "protocol.name must be of type str; got 3"),
        ({"pairs": {"select": 0}}, "pairs.select must be an integer >= 1; got 0"),
        ({"pairs": {"select": 10, "candidates": 5}}, "pairs.select must be at most pairs.candidates"),
        ({"data": {"normalize": "yes"}}, "data.normalize must be of type bool; got 'yes'"),
        ({"data": {"dev_fraction": 1}}, "data.dev_fraction must be in (0, 1); got 1"),
        ({"test": {"classifier": "forest"}}, "test.classifier must be one of logistic; got 'forest'"),
        ({"test": {"threshold": "best"}}, "test.threshold must be 'youden', 'max_bound' or a number"),
        ({"claim": {"gdp_mu": 0}}, "claim.gdp_mu must be in (0, inf); got 0"),
        ({"claim": {"zcdp_rho": -1.0}}, "claim.zcdp_rho must be in (0, inf); got -1.0"),
        ({"claim": {"epsilon": 1.0, "gdp_mu": 1.0}}, "states one claim; got claim.epsilon, claim.gdp_mu"),
        ({"claim": {"delta": 1e-6, "zcdp_rho": 0.5}}, "claim.delta belongs to a point claim"),
        ({"claim": {"profile": []}}, "claim.profile must be a non-empty list of [epsilon, delta] points"),
        ({"claim": {"profile": [[1.0]]}}, "claim.profile[0] must be a pair [epsilon, delta] of numbers"),
        ({"claim": {"profile": [[1.0, 2.0]]}}, "claim.profile[0][1] (delta) must be in [0, 1]; got 2.0"),
        ({"test": {"folds": True}}, "test.folds must be of type int; got True"),
        ({"kind": "other"}, "kind must be one of audit, benchmark; got 'other'"),
        ({"extra": {}}, "extra is not a known key"),
    ],
)
def test_schema_errors_name_key_constraint_and_value(edit: dict[str, Any], fragment: str) -> None:
    """Each violation raises ProtocolFileError with the key, the constraint and the value."""
    doc: dict[str, Any] = tomllib.loads(MINIMAL)
    for key, value in edit.items():
        if isinstance(value, dict) and isinstance(doc.get(key), dict):
            doc[key] = {**doc[key], **value} if value else {}
        else:
            doc[key] = value
    with pytest.raises(ProtocolFileError) as info:
        parse_protocol(doc)
    assert fragment in str(info.value)


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    """A missing file and invalid TOML are ProtocolFileErrors, not tracebacks."""
    with pytest.raises(ProtocolFileError, match="cannot read protocol file"):
        load_protocol_file(tmp_path / "none.toml")
    (tmp_path / "bad.toml").write_text("[protocol\nname=")
    with pytest.raises(ProtocolFileError, match="not valid TOML"):
        load_protocol_file(tmp_path / "bad.toml")


@pytest.mark.parametrize(
    ("section", "kind", "parameter"),
    [
        ({"epsilon": 1.0, "delta": 1e-6}, "Claim", 1.0),
        ({"gdp_mu": 1.5}, "GDPClaim", 1.5),
        ({"zcdp_rho": 0.25}, "ZCDPClaim", 0.25),
        ({"profile": [[0.5, 1e-3], [2.0, 1e-6]]}, "ProfileClaim", None),
    ],
)
def test_claim_section_states_each_claim_kind(
    section: dict[str, Any], kind: str, parameter: float | None
) -> None:
    """[claim] gives a point, a GDP, a zCDP or a stepwise profile claim, and the plan rebuilds it."""
    from certify.claims import claim_parameter

    doc: dict[str, Any] = tomllib.loads(MINIMAL)
    doc["claim"] = section
    doc.setdefault("test", {})["threshold"] = "max_bound"
    plan = parse_protocol(doc)
    assert isinstance(plan, AuditPlan) and plan.threshold == "max_bound"
    claim = plan.claim()
    assert type(claim).__name__ == kind
    assert claim is not None and claim_parameter(claim)[1] == parameter
    if kind == "ProfileClaim":
        assert claim.delta_of_epsilon(1.0) == 1e-3 and claim.delta_of_epsilon(2.5) == 1e-6  # type: ignore[union-attr]
