"""Tests that pin the public API of the certify package."""

from __future__ import annotations

import importlib

import pytest

import certify as cf

PUBLIC = [
    "AnyClaim",
    "AuditTable",
    "BoundPlan",
    "Certificate",
    "CertificateFamily",
    "CertifyError",
    "Claim",
    "CleaningReport",
    "DataError",
    "DevTestSplit",
    "Diagnostic",
    "EmbeddingTable",
    "ErrorRateEvidence",
    "EstimatorError",
    "FixedTest",
    "GDPClaim",
    "ImmutableResultError",
    "Inconclusive",
    "Ledger",
    "LedgerEntry",
    "LedgerError",
    "LedgerStamp",
    "MMDEvidence",
    "MMDTest",
    "MechanismAudit",
    "MechanismError",
    "Pair",
    "ParameterError",
    "PopulationEstimate",
    "PreregistrationRecord",
    "ProfileClaim",
    "Protocol",
    "ProtocolError",
    "ProtocolSealedError",
    "RecordError",
    "Refuted",
    "ReservedSplit",
    "ReservedSplitReusedError",
    "ReservedStream",
    "Result",
    "SealedProtocol",
    "StatusError",
    "Summary",
    "Verification",
    "ZCDPClaim",
    "audit_mechanism",
    "audit_pairs",
    "gauss_mech",
    "kde_lr",
    "mmd_permutation_test",
    "mmd_tv",
    "refute",
    "roc_oof",
    "sample_pairs",
    "select_pairs",
    "summarize",
    "verify",
]


def test_all_is_pinned_and_sorted() -> None:
    """certify.__all__ is exactly the pinned, sorted list of public names."""
    assert cf.__all__ == PUBLIC
    assert sorted(cf.__all__) == cf.__all__


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_is_importable(name: str) -> None:
    """Each public name can be imported from the package."""
    module = importlib.import_module("certify")
    assert getattr(module, name) is not None
    exec(f"from certify import {name}", {})


def test_version_is_a_string() -> None:
    """The package states its version."""
    assert cf.__version__.count(".") >= 1


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (cf.ParameterError, ValueError),
        (cf.DataError, ValueError),
        (cf.EstimatorError, TypeError),
        (cf.StatusError, TypeError),
        (cf.ImmutableResultError, AttributeError),
        (cf.ProtocolError, RuntimeError),
        (cf.ProtocolSealedError, cf.ProtocolError),
        (cf.ReservedSplitReusedError, cf.ProtocolError),
        (cf.RecordError, ValueError),
        (cf.LedgerError, RuntimeError),
        (cf.MechanismError, ValueError),
    ],
)
def test_errors_subclass_root_and_builtin(error: type[Exception], builtin: type[Exception]) -> None:
    """Every error is a CertifyError and also the built-in a caller would catch."""
    assert issubclass(error, cf.CertifyError) and issubclass(error, builtin)


def test_result_alias_is_the_union_of_three_statuses() -> None:
    """Result is exactly Diagnostic | PopulationEstimate | Certificate."""
    assert set(cf.Result.__args__) == {cf.Diagnostic, cf.PopulationEstimate, cf.Certificate}


def test_status_classes_share_no_base() -> None:
    """The three statuses have no common base besides object and are final."""
    for a in (cf.Diagnostic, cf.PopulationEstimate, cf.Certificate):
        for b in (cf.Diagnostic, cf.PopulationEstimate, cf.Certificate):
            if a is not b:
                assert set(a.__mro__) & set(b.__mro__) == {object}
