"""Tests for the three result statuses, certificate families and summaries."""

from __future__ import annotations

import copy
import math
import operator
import pickle
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typeguard import suppress_type_checks

import certify as cf
from certify._core import FrozenMap
from certify._token import ISSUER, IssueToken
from certify.errors import (
    ImmutableResultError,
    ParameterError,
    StatusError,
)
from certify.plan import rate_level


def diagnostic(score: float = 12.5, method: str = "gauss_mech") -> cf.Diagnostic:
    """A diagnostic about one pair."""
    return cf.Diagnostic(
        method=method,
        score=score,
        pair=cf.Pair("id1", "id2"),
        delta=1e-5,
        assumptions=("Gaussian outputs",),
        equation="Eq. 9",
        n_samples=(10, 12),
        parameters={"kernel": "rbf"},
        details={"p_value": 0.03},
    )


def estimate(value: float = 1.5, method: str = "roc_oof") -> cf.PopulationEstimate:
    """A population estimate with ROC details."""
    return cf.PopulationEstimate(
        method=method,
        epsilon_estimate=value,
        details={"auc": 0.9, "exact_corner": False, "infinite_by_endpoint": False},
    )


# -- construction and validation ---------------------------------------------------------------


def test_results_keep_their_inputs_and_status() -> None:
    """Each result keeps method, pair, delta, assumptions and details, and names its status."""
    d = diagnostic()
    assert (d.status, d.method, d.pair, d.delta) == ("Diagnostic", "gauss_mech", cf.Pair("id1", "id2"), 1e-5)
    assert d.assumptions == ("Gaussian outputs",) and d.n_samples == (10, 12)
    assert d.p_value == 0.03 and d.parameters["kernel"] == "rbf"
    e = estimate()
    assert (e.status, e.auc, e.exact_corner, e.infinite_by_endpoint) == (
        "PopulationEstimate", 0.9, False, False
    )
    assert e.epsilon_hockey_stick is None


def test_numpy_scalars_become_python_numbers() -> None:
    """NumPy scalars in numeric fields are stored as Python floats and ints."""
    d = cf.Diagnostic(method="m", score=np.float64(2.0), n_samples=(np.int64(3),))
    assert type(d.score) is float and type(d.n_samples[0]) is int


def test_infinite_population_estimate_is_allowed() -> None:
    """+inf is a legitimate PopulationEstimate value (Eq. 15 endpoint rule)."""
    assert estimate(math.inf).epsilon_estimate == math.inf


@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (lambda: cf.Diagnostic(method="m", score=math.nan), "Diagnostic.score must be a real"),
        (lambda: cf.Diagnostic(method="m", score="1"), "Diagnostic.score must be a real"),
        (lambda: cf.Diagnostic(method="m", score=1.0, delta=1.0), "Diagnostic.delta must be a number"),
        (
            lambda: cf.Diagnostic(method="m", score=1.0, pair=("a", "b")),  # type: ignore[arg-type]
            "Diagnostic.pair must be a Pair",
        ),
        (lambda: cf.Diagnostic(method="m", score=1.0, n_samples=(-1,)), "n_samples must be a tuple"),
        (lambda: cf.PopulationEstimate(method="m", epsilon_estimate=-0.5), "must be >= 0"),
        (
            lambda: cf.PopulationEstimate(method="m", epsilon_estimate=1.0, details={"x": math.nan}),
            "must not be NaN",
        ),
        (
            lambda: cf.PopulationEstimate(
                method="m", epsilon_estimate=1.0, details={"x": [1]}  # type: ignore[dict-item]
            ),
            "must be a float, int",
        ),
    ],
)
def test_invalid_fields_raise(build: Callable[[], object], fragment: str) -> None:
    """Attrs validators refuse NaN, negative estimates, bad deltas, pairs, sizes and details."""
    with suppress_type_checks(), pytest.raises(ParameterError) as info:
        build()
    assert fragment in str(info.value)


def test_pair_validation() -> None:
    """A Pair needs two different non-empty labels and prints as a~b."""
    assert str(cf.Pair("x", "y")) == "x~y" and cf.Pair("x", "y").as_tuple() == ("x", "y")
    with pytest.raises(ParameterError, match="two different identities"):
        cf.Pair("x", "x")
    with pytest.raises(ParameterError, match="non-empty identity label"):
        cf.Pair("", "y")


def test_equality_is_class_exact() -> None:
    """Two statuses carrying the same number never compare equal."""
    d = cf.Diagnostic(method="m", score=1.0)
    e = cf.PopulationEstimate(method="m", epsilon_estimate=1.0)
    assert d != e and d == cf.Diagnostic(method="m", score=1.0)  # type: ignore[comparison-overlap]


# -- numeric misuse at run time ----------------------------------------------------------------


def all_results(family: cf.CertificateFamily) -> list[Any]:
    """One object of every status, plus a family."""
    return [diagnostic(), estimate(), family.certificates[0], family]


@pytest.mark.parametrize(
    "use",
    [float, int, bool, complex, round, abs, operator.neg, lambda r: r + 1.0, lambda r: 1.0 * r,
     lambda r: r / 2, lambda r: r ** 2, lambda r: r < 1.0, lambda r: r >= r],
)
def test_results_refuse_numeric_use(family: cf.CertificateFamily, use: Callable[[Any], object]) -> None:
    """Conversion, arithmetic, truth tests and ordering of any result raise StatusError."""
    for result in all_results(family):
        with pytest.raises(StatusError, match="status-typed result, not a number"):
            use(result)


def test_ordering_across_statuses_raises(family: cf.CertificateFamily) -> None:
    """Ordering a Diagnostic against a Certificate (either way) raises StatusError."""
    cert = family.certificates[0]
    with pytest.raises(StatusError, match="cannot be ordered"):
        _ = diagnostic() < cert  # type: ignore[operator]
    with pytest.raises(StatusError, match="cannot be ordered"):
        _ = cert > diagnostic()  # type: ignore[operator]


def test_float_message_names_the_field(family: cf.CertificateFamily) -> None:
    """The refusal tells the user which field to read instead."""
    with pytest.raises(StatusError, match=r"Certificate\.epsilon_lower"):
        float(family.certificates[0])  # type: ignore[arg-type]
    with pytest.raises(StatusError, match=r"Diagnostic\.score"):
        float(diagnostic())  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["score", "method", "details", "new_field"])
def test_diagnostic_fields_cannot_be_assigned(field: str) -> None:
    """Assigning or deleting any attribute of a result raises ImmutableResultError."""
    d = diagnostic()
    with pytest.raises(ImmutableResultError, match="immutable"):
        setattr(d, field, 0.0)
    with pytest.raises(ImmutableResultError):
        delattr(d, field)
    assert d == diagnostic()


def test_certificate_and_family_fields_cannot_be_assigned(family: cf.CertificateFamily) -> None:
    """A certificate's bound and a family's level cannot be changed after issue."""
    cert = family.certificates[0]
    with pytest.raises(ImmutableResultError):
        cert.epsilon_lower = 99.0  # type: ignore[misc]
    with pytest.raises(ImmutableResultError):
        family.confidence_level = 0.999  # type: ignore[misc]
    assert cert.epsilon_lower == pytest.approx(1.277, abs=5e-4)


def test_immutable_error_is_also_frozen_instance_error() -> None:
    """ImmutableResultError subclasses attrs' FrozenInstanceError (and so AttributeError)."""
    assert issubclass(ImmutableResultError, attrs.exceptions.FrozenInstanceError)
    assert issubclass(ImmutableResultError, AttributeError)


@settings(max_examples=60, deadline=None)
@given(
    score=st.floats(allow_nan=False),
    value=st.floats(min_value=0.0, allow_nan=False),
    new=st.floats(allow_nan=False),
)
def test_results_are_immutable_property(score: float, value: float, new: float) -> None:
    """For any valid numbers, result fields cannot be overwritten and keep their values."""
    d = cf.Diagnostic(method="m", score=score)
    e = cf.PopulationEstimate(method="m", epsilon_estimate=value)
    with pytest.raises(ImmutableResultError):
        d.score = new  # type: ignore[misc]
    with pytest.raises(ImmutableResultError):
        e.epsilon_estimate = new  # type: ignore[misc]
    assert d.score == score and e.epsilon_estimate == value
    assert hash(d) == hash(cf.Diagnostic(method="m", score=score))


# -- certificates can only be issued -----------------------------------------------------------


def certificate_fields(cert: cf.Certificate) -> dict[str, Any]:
    """The public fields of a certificate as keyword arguments."""
    return {
        str(a.alias): getattr(cert, a.name)
        for a in attrs.fields(cf.Certificate)
        if not a.name.startswith("_")
    }


@pytest.mark.parametrize("issuer", [None, IssueToken(), "ISSUER"])
def test_certificate_cannot_be_constructed(family: cf.CertificateFamily, issuer: object) -> None:
    """Building a Certificate without the library's own token raises StatusError."""
    kwargs = certificate_fields(family.certificates[0])
    if issuer is not None:
        kwargs["_issuer"] = issuer
    with pytest.raises(StatusError, match=r"issued only by SealedProtocol.evaluate"):
        cf.Certificate(**kwargs)


def test_family_cannot_be_constructed(family: cf.CertificateFamily) -> None:
    """Building a CertificateFamily directly raises StatusError."""
    with pytest.raises(StatusError, match=r"issued only by SealedProtocol.evaluate"):
        cf.CertificateFamily(  # type: ignore[call-arg]
            certificates=family.certificates,
            confidence_level=0.95,
            family_id=family.family_id,
            sources=family.sources,
            protocol_name="forged",
        )


def test_evolve_cannot_change_a_bound(family: cf.CertificateFamily) -> None:
    """A certificate's bound must equal Eq. 16 of its error bounds, so evolve cannot inflate it."""
    with pytest.raises(ParameterError, match=r"must follow from its evidence"):
        attrs.evolve(family.certificates[0], epsilon_lower=5.0)


def test_certificate_fields_and_recomputation(family: cf.CertificateFamily) -> None:
    """Certificate rates, zero-error flag and epsilon_lower_at follow Eq. 16 of its bounds."""
    good, overlapping = family.certificates
    assert good.zero_errors and good.fpr == 0.0 and good.fnr == 0.0
    assert not overlapping.zero_errors and overlapping.epsilon_lower == 0.0
    assert overlapping.fpr == overlapping.false_positives / overlapping.n_class0
    assert good.epsilon_lower_at(0.0) == good.epsilon_lower
    assert good.epsilon_lower_at(1e-5) < good.epsilon_lower
    assert good.epsilon_lower_at(0.1) == pytest.approx(
        math.log((0.9 - good.u_fnr) / good.u_fpr), rel=1e-12
    )
    with pytest.raises(ParameterError, match="delta must be a number in"):
        good.epsilon_lower_at(1.0)


def test_certificates_carry_their_provenance(family: cf.CertificateFamily) -> None:
    """Every certificate states its family, level, alpha share, fingerprints and assumptions."""
    for c in family:
        assert c.family_id == family.family_id and c.confidence_level == 0.95
        assert c.alpha_per_rate == pytest.approx(rate_level(0.05 / 40), rel=1e-12)
        assert c.protocol_fingerprint == family.sources[0] and len(c.data_fingerprint) == 64
        assert c.method == "roc_reserved" and c.equation == "Eq. 16"
        assert any("iid" in a for a in c.assumptions)
    assert len(family) == 2 and family.n_positive == 1
    assert family.alpha_total == pytest.approx(2 * 0.05 / 40, rel=1e-12)


# -- merging families --------------------------------------------------------------------------


def test_merge_uses_the_union_bound(
    family: cf.CertificateFamily, other_family: cf.CertificateFamily
) -> None:
    """Merging families at 95% and 90% gives confidence 1 - (0.05 + 0.10) = 0.85."""
    merged = family.merge(other_family)
    assert merged.confidence_level == pytest.approx(0.85, abs=1e-12)
    assert len(merged) == 3
    assert all(c.confidence_level == merged.confidence_level for c in merged)
    assert all(c.family_id == merged.family_id for c in merged)
    assert merged.sources == (*family.sources, *other_family.sources)
    assert merged.protocol_name == "family + other"
    # The merged members keep their bounds; the originals are unchanged.
    assert [c.epsilon_lower for c in merged] == [
        c.epsilon_lower for c in (*family, *other_family)
    ]
    assert family.confidence_level == 0.95


def test_merge_refuses_double_counting(family: cf.CertificateFamily) -> None:
    """A family merged with itself (a shared record) raises StatusError."""
    with pytest.raises(StatusError, match="share a pre-registration record"):
        family.merge(family)


def test_merge_refuses_alpha_above_one(
    family: cf.CertificateFamily, other_family: cf.CertificateFamily
) -> None:
    """Merging families whose alphas sum to at least 1 raises StatusError."""
    weak = attrs.evolve(family, confidence_level=0.4, certificates=tuple(
        attrs.evolve(c, confidence_level=0.4, _issuer=ISSUER) for c in family
    ), _issuer=ISSUER)
    weaker = attrs.evolve(other_family, confidence_level=0.5, certificates=tuple(
        attrs.evolve(c, confidence_level=0.5, _issuer=ISSUER) for c in other_family
    ), _issuer=ISSUER)
    with pytest.raises(StatusError, match="nothing could be claimed"):
        weak.merge(weaker)


# -- summaries ---------------------------------------------------------------------------------


def test_summarize_one_status() -> None:
    """The summary reports the median of the status's own field, infinities and positives."""
    s = cf.summarize([estimate(0.0), estimate(2.0), estimate(math.inf)])
    assert (s.status, s.method, s.value_name, s.count) == (
        "PopulationEstimate", "roc_oof", "epsilon_estimate", 3
    )
    assert (s.median, s.n_infinite, s.n_positive) == (2.0, 1, 2)


def test_summarize_certificates(family: cf.CertificateFamily) -> None:
    """Certificates summarize over epsilon_lower."""
    s = cf.summarize(list(family.certificates))
    assert s.value_name == "epsilon_lower" and s.n_positive == 1
    assert s.median == pytest.approx(family.certificates[0].epsilon_lower / 2, rel=1e-12)


def test_summarize_refuses_mixed_statuses(family: cf.CertificateFamily) -> None:
    """Aggregating results of different statuses raises StatusError."""
    mixed: list[Any] = [diagnostic(), estimate()]
    with pytest.raises(StatusError, match="different statuses"):
        cf.summarize(mixed)
    reversed_mix: list[Any] = [family.certificates[0], diagnostic()]
    with pytest.raises(StatusError, match="different statuses"):
        cf.summarize(reversed_mix)


def test_summarize_refuses_mixed_methods() -> None:
    """Aggregating one status across different methods raises StatusError."""
    with pytest.raises(StatusError, match="different methods"):
        cf.summarize([diagnostic(method="gauss_mech"), diagnostic(method="kde_lr")])


def test_summarize_refuses_empty_input() -> None:
    """An empty sequence raises ParameterError."""
    with pytest.raises(ParameterError, match="non-empty"):
        cf.summarize([])


# -- pickling and copying ----------------------------------------------------------------------


def test_results_survive_pickle(family: cf.CertificateFamily) -> None:
    """Every status and a family round-trip through pickle as equal objects of the same class."""
    for obj in [diagnostic(), estimate(math.inf), family.certificates[0], family]:
        back = pickle.loads(pickle.dumps(obj))
        assert type(back) is type(obj) and back == obj
        assert copy.deepcopy(obj) == obj


def test_pickled_certificate_is_still_a_certificate(family: cf.CertificateFamily) -> None:
    """A pickled certificate refutes exactly like the original."""
    cert = pickle.loads(pickle.dumps(family.certificates[0]))
    assert isinstance(cert, cf.Certificate)
    verdict = cf.refute(cf.Claim(epsilon=1.0), cert)
    assert isinstance(verdict, cf.Refuted) and verdict.certificates == (family.certificates[0],)


def test_unpickling_a_tampered_certificate_is_refused(family: cf.CertificateFamily) -> None:
    """Loading re-runs the certificate's checks: a bound that does not follow from its counts fails."""
    rebuild, (cls, fields) = family.certificates[0].__reduce__()
    tampered = dict(fields, epsilon_lower=fields["epsilon_lower"] + 1.0)

    class Forged:
        """Pickles as the certificate's own rebuild call with one field changed."""

        def __reduce__(self) -> tuple[object, ...]:
            return (rebuild, (cls, tampered))

    with pytest.raises(cf.ParameterError, match="must follow from its evidence"):
        pickle.loads(pickle.dumps(Forged()))
    assert pickle.loads(pickle.dumps(family)) == family


@pytest.mark.parametrize(
    "error",
    [cf.CertifyError, cf.DataError, cf.ParameterError, cf.EstimatorError, cf.StatusError,
     cf.ImmutableResultError, cf.ProtocolError, cf.ProtocolSealedError,
     cf.ReservedSplitReusedError, cf.RecordError, cf.LedgerError],
)
def test_errors_survive_pickle(error: type[Exception]) -> None:
    """Each error class keeps its message in args and round-trips through pickle with it."""
    original = error("x must be y; got 'z'.")
    assert original.args == ("x must be y; got 'z'.",)
    back = pickle.loads(pickle.dumps(original))
    assert type(back) is error and str(back) == "x must be y; got 'z'."
    assert back.args == original.args


# -- FrozenMap ---------------------------------------------------------------------------------


def test_frozen_map_hash_agrees_with_equality() -> None:
    """Equal maps (any insertion order) have equal hashes, so equal results hash equal."""
    m1, m2 = FrozenMap({"a": 1, "b": 2.0}), FrozenMap({"b": 2.0, "a": 1})
    assert m1 == m2 and hash(m1) == hash(m2)
    d1 = cf.Diagnostic(method="m", score=1.0, details={"a": 1, "b": 2.0})
    d2 = cf.Diagnostic(method="m", score=1.0, details={"b": 2.0, "a": 1})
    assert d1 == d2 and len({d1, d2}) == 1


def test_frozen_map_is_immutable_and_picklable() -> None:
    """A FrozenMap refuses assignment and survives pickle."""
    m = FrozenMap({"k": "v", "n": None})
    with pytest.raises(ImmutableResultError):
        m.x = 1
    assert pickle.loads(pickle.dumps(m)) == m and dict(m) == {"k": "v", "n": None}
