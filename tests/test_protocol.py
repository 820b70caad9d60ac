"""Tests for the sealed pre-registration protocol: typestate, certificates, once-only evaluation."""

from __future__ import annotations

import copy
import json
import multiprocessing as mp
import os
import pickle
import signal
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from typeguard import suppress_type_checks

import certify as cf
from certify.errors import (
    DataError,
    ProtocolError,
    ProtocolSealedError,
    RecordError,
    ReservedSplitReusedError,
)
from certify.plan import rate_level

from .conftest import TableFactory, seal_tests

PAIR = cf.Pair("id0", "id1")


def context() -> Any:
    """A multiprocessing context: fork where available (fast), else spawn."""
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def difference_score(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """A fixed score separating id0 (first axis) from id1 (second axis)."""
    out: NDArray[np.float64] = x[:, 1] - x[:, 0]
    return out


def blocking_score(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The same score, but it blocks as if the evaluation hung."""
    time.sleep(120)
    return difference_score(x)


def reserved_rows(table: cf.EmbeddingTable, split: cf.DevTestSplit, ident: str) -> NDArray[np.float64]:
    """The reserved rows of one identity, rebuilt from public data (table rows minus dev rows)."""
    dev = {r.tobytes() for r in split.development.rows(ident)}
    return np.array([r for r in table.rows(ident) if r.tobytes() not in dev])


# -- known values end to end -------------------------------------------------------------------


@pytest.mark.parametrize(("per_class", "expected"), [(10, 0.0), (15, 0.454), (30, 1.277)])
def test_zero_error_certificates_match_section_5_3(
    make_table: TableFactory, ledger: cf.Ledger, per_class: int, expected: float
) -> None:
    """A sealed zero-error test at 95% over a family of 40 certifies 0, 0.454, 1.277 at 10, 15, 30."""
    table = make_table((2 * per_class, 2 * per_class))
    _, sealed = seal_tests(table, ledger, (PAIR,), family_size=40)
    # each test's share 0.05 / 40 is split between its two independent rates: (1 - a)^2 = 1 - 0.05 / 40
    # (the paper's Bonferroni a = 0.05 / 80 is 3e-4 smaller, the same bounds to three decimals)
    a = sealed.record.content["protocol"]["alpha_per_rate"]
    assert (1 - a) ** 2 == pytest.approx(1 - 0.05 / 40, rel=1e-14) and a > 0.05 / 80
    (cert,) = sealed.evaluate().certificates
    assert (cert.false_positives, cert.false_negatives) == (0, 0)
    assert (cert.n_class0, cert.n_class1) == (per_class, per_class)
    assert round(cert.epsilon_lower, 3) == expected
    if per_class == 10:
        assert round(cert.u_fpr, 4) == round(cert.u_fnr, 4) == 0.5218


def test_nine_and_ten_per_class_give_section_5_3_upper_bounds(
    make_table: TableFactory, ledger: cf.Ledger
) -> None:
    """With 9 and 10 reserved rows the zero-error bounds are 0.5594 and 0.5218 and epsilon is 0.

    The paper's 0.5595 for 9 rows is at the Bonferroni level 0.05 / 80; the independent split
    ``(1 - a)^2 = 1 - 0.05 / 40`` gives a slightly larger ``a``, hence a slightly smaller bound.
    """
    _, sealed = seal_tests(make_table((18, 20)), ledger, (PAIR,), family_size=40)
    (cert,) = sealed.evaluate().certificates
    assert (cert.n_class0, cert.n_class1) == (9, 10)
    assert (round(cert.u_fpr, 4), round(cert.u_fnr, 4), cert.epsilon_lower) == (0.5594, 0.5218, 0.0)


def test_censored_certificate_matches_appendix_e(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """At 95% over 250 tests (alpha about 1e-4), delta 1e-5 and 100 per class, zero errors give 2.338."""
    table = make_table((200, 200))
    _, sealed = seal_tests(table, ledger, (PAIR,), family_size=250, delta=1e-5)
    (cert,) = sealed.evaluate().certificates
    assert (1 - cert.alpha_per_rate) ** 2 == pytest.approx(1 - 0.05 / 250, rel=1e-14) and cert.delta == 1e-5
    assert cert.zero_errors and round(cert.epsilon_lower, 3) == 2.338


def test_family_size_defaults_to_the_number_of_tests(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Without family_size each test's share is (1 - level) / number of tests, split between two rates."""
    pairs = (cf.Pair("id0", "id1"), cf.Pair("id2", "id3"))
    _, sealed = seal_tests(make_table(), ledger, pairs, confidence_level=0.9)
    family = sealed.evaluate()
    assert family.confidence_level == 0.9
    assert all(c.alpha_per_rate == pytest.approx(rate_level(0.1 / 2), rel=1e-12) for c in family)
    assert family.alpha_total == pytest.approx(0.1, rel=1e-12)


# -- typestate ---------------------------------------------------------------------------------


def test_sealed_protocol_has_no_register(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Only the draft has register: SealedProtocol.register is an AttributeError."""
    _, sealed = seal_tests(make_table((20, 20)), ledger, (PAIR,))
    with pytest.raises(AttributeError):
        sealed.register  # type: ignore[attr-defined]  # noqa: B018


def test_sealed_draft_refuses_changes(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """After seal the draft refuses register and a second seal with ProtocolSealedError."""
    table = make_table((20, 20))
    split = table.split(0.5, seed=0)
    draft = cf.Protocol(name="draft")
    test = cf.FixedTest.fit(None, split.development, PAIR)
    draft.register(test)
    draft.seal(split.reserved, ledger=ledger)
    with pytest.raises(ProtocolSealedError, match="is sealed; it can no longer change"):
        draft.register(test)
    with pytest.raises(ProtocolSealedError, match="already sealed"):
        draft.seal(split.reserved, ledger=ledger)
    assert "sealed" in repr(draft) and len(draft.tests) == 1


def test_seal_refuses_misuse(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Sealing with no test, with the whole split, or registering a non-test raises ProtocolError."""
    split = make_table((20, 20)).split(0.5, seed=0)
    draft = cf.Protocol(name="p")
    with pytest.raises(ProtocolError, match="register at least one FixedTest"):
        draft.seal(split.reserved, ledger=ledger)
    with suppress_type_checks(), pytest.raises(ProtocolError, match="only a FixedTest or MMDTest can be"):
        draft.register("test")  # type: ignore[arg-type]
    test = cf.FixedTest.fit(None, split.development, PAIR)
    draft.register(test)
    with pytest.raises(ProtocolError, match="already registered"):
        draft.register(test)
    with suppress_type_checks(), pytest.raises(ProtocolError, match=r"pass split.reserved"):
        draft.seal(split, ledger=ledger)  # type: ignore[arg-type]
    with pytest.raises(cf.ParameterError, match="confidence_level must be a number in"):
        cf.Protocol(name="p", confidence_level=95)


def test_sealed_protocol_cannot_be_constructed() -> None:
    """SealedProtocol() raises ProtocolError: it comes from seal or from_record."""
    with pytest.raises(ProtocolError, match=r"comes from Protocol.seal"):
        cf.SealedProtocol()


def test_sealed_protocol_refuses_pickle_and_copies_to_itself(
    make_table: TableFactory, ledger: cf.Ledger
) -> None:
    """Pickling a SealedProtocol raises ProtocolError; copy and deepcopy return the same object."""
    _, sealed = seal_tests(make_table((20, 20)), ledger, (PAIR,))
    with pytest.raises(ProtocolError, match="cannot be pickled"):
        pickle.dumps(sealed)
    assert copy.copy(sealed) is sealed and copy.deepcopy(sealed) is sealed
    copy.copy(sealed).evaluate()
    with pytest.raises(ReservedSplitReusedError):
        sealed.evaluate()


# -- once, ever --------------------------------------------------------------------------------


def test_same_object_evaluates_once(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A second evaluate() on the same sealed protocol raises ReservedSplitReusedError."""
    _, sealed = seal_tests(make_table((20, 20)), ledger, (PAIR,), name="once")
    sealed.evaluate()
    with pytest.raises(ReservedSplitReusedError, match=r"\('once'\) was already evaluated"):
        sealed.evaluate()
    assert "evaluated" in repr(sealed)


def test_second_protocol_same_ledger_is_refused(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Another protocol on the same reserved split and ledger is refused, naming the first."""
    table = make_table((20, 20))
    split, first = seal_tests(table, ledger, (PAIR,), name="first")
    draft = cf.Protocol(name="second")
    draft.register(cf.FixedTest.fit(None, split.development, PAIR, name="again"))
    early = draft.seal(split.reserved, ledger=ledger)  # sealed before the first one runs
    first.evaluate()
    with pytest.raises(ReservedSplitReusedError, match="by protocol 'first'") as info:
        early.evaluate()
    assert ledger.entries()[0].spent_at in str(info.value)
    rebuilt = table.split(0.5, seed=0)  # a fresh object for the same rows
    late = cf.Protocol(name="late")
    late.register(cf.FixedTest.fit(None, rebuilt.development, PAIR))
    with pytest.raises(ReservedSplitReusedError, match="by protocol 'first'"):
        late.seal(rebuilt.reserved, ledger=ledger)


def test_second_protocol_other_ledger_same_process_is_refused(
    tmp_path: Path, make_table: TableFactory, ledger: cf.Ledger
) -> None:
    """Switching to a new ledger in the same process does not give the split a second chance."""
    table = make_table((20, 20))
    split, first = seal_tests(table, ledger, (PAIR,))
    first.evaluate()
    fresh = cf.Ledger(tmp_path / "fresh.ledger")
    for reserved in (split.reserved, table.split(0.5, seed=0).reserved):
        draft = cf.Protocol(name="elsewhere")
        draft.register(cf.FixedTest.fit(None, split.development, PAIR))
        with pytest.raises(ReservedSplitReusedError, match="already evaluated in this process"):
            draft.seal(reserved, ledger=fresh)


def _race_worker(record_json: str, table_bytes: bytes, ledger_path: str, barrier: Any, results: Any) -> None:
    """Load the record and table, wait for the others, evaluate, report the outcome."""
    table = pickle.loads(table_bytes)
    sealed = cf.SealedProtocol.from_record(record_json, table, cf.Ledger(ledger_path))
    barrier.wait(timeout=60)
    try:
        family = sealed.evaluate()
        results.put(("ok", os.getpid(), len(family)))
    except ReservedSplitReusedError as exc:
        results.put(("reused", os.getpid(), str(exc)))
    except Exception as exc:  # reported, so the test shows it
        results.put(("error", os.getpid(), repr(exc)))


@pytest.mark.timeout(120)
def test_racing_processes_exactly_one_succeeds(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Eight processes evaluating the same record at once: one succeeds, seven are refused by name."""
    table = make_table((20, 20))
    _, sealed = seal_tests(table, ledger, (PAIR,), name="raced")
    ctx = context()
    n = 8
    barrier, results = ctx.Barrier(n), ctx.Queue()
    args = (sealed.record.to_json(), pickle.dumps(table), str(ledger.path), barrier, results)
    procs = [ctx.Process(target=_race_worker, args=args) for _ in range(n)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=90) for _ in range(n)]
    for p in procs:
        p.join(timeout=30)
    kinds = sorted(o[0] for o in outcomes)
    assert kinds == ["ok"] + ["reused"] * (n - 1), outcomes
    winner = next(o[1] for o in outcomes if o[0] == "ok")
    entry = ledger.entry(sealed.reserved_fingerprint)
    assert entry is not None and entry.pid == winner and entry.status == "completed"
    for kind, _, message in outcomes:
        if kind == "reused":
            assert "'raced'" in message and entry.spent_at in message
    with pytest.raises(ReservedSplitReusedError):
        sealed.evaluate()


def _crash_worker(record_json: str, table_bytes: bytes, ledger_path: str) -> None:
    """Evaluate with a score function that blocks, so the process can be killed mid-evaluation."""
    table = pickle.loads(table_bytes)
    cf.SealedProtocol.from_record(
        record_json, table, cf.Ledger(ledger_path), score_functions={"diff": blocking_score}
    ).evaluate()


@pytest.mark.timeout(120)
def test_killed_evaluation_leaves_the_split_spent(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A process killed (SIGKILL) during evaluation leaves the split spent; a retry is refused."""
    table = make_table((20, 20))
    split = table.split(0.5, seed=0)
    draft = cf.Protocol(name="crashy")
    draft.register(cf.FixedTest.from_score(difference_score, split.development, PAIR, name="diff"))
    sealed = draft.seal(split.reserved, ledger=ledger)
    record_json = sealed.record.to_json()
    proc = context().Process(target=_crash_worker, args=(record_json, pickle.dumps(table), str(ledger.path)))
    proc.start()
    deadline = time.monotonic() + 60
    entry = None
    while entry is None and time.monotonic() < deadline and proc.is_alive():
        time.sleep(0.02)
        entry = ledger.entry(sealed.reserved_fingerprint)
    assert entry is not None and entry.status == "started" and entry.pid == proc.pid
    assert proc.pid is not None
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(timeout=30)
    assert proc.exitcode == -signal.SIGKILL
    retry = cf.SealedProtocol.from_record(
        record_json, table, ledger, score_functions={"diff": difference_score}
    )
    with pytest.raises(ReservedSplitReusedError, match="'crashy'") as info:
        retry.evaluate()
    assert f"pid {proc.pid}" in str(info.value) and "started" in str(info.value)


def test_split_is_spent_before_any_row_is_scored(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """When the reserved rows are scored, the ledger already shows the split as started."""
    table = make_table((20, 20))
    split = table.split(0.5, seed=0)
    seen: list[str | None] = []

    def watching(x: NDArray[np.float64]) -> NDArray[np.float64]:
        entry = ledger.entry(split.reserved.fingerprint)
        seen.append(None if entry is None else entry.status)
        return difference_score(x)

    draft = cf.Protocol(name="watched")
    draft.register(cf.FixedTest.from_score(watching, split.development, PAIR, name="w"))
    sealed = draft.seal(split.reserved, ledger=ledger)
    seen.clear()
    sealed.evaluate()
    assert seen == ["started", "started"]
    entry = ledger.entry(split.reserved.fingerprint)
    assert entry is not None and entry.status == "completed"
    assert json.loads(entry.outcome_json or "{}")["certificates"][0]["pair"] == ["id0", "id1"]


# -- labels cannot cross -----------------------------------------------------------------------


def test_rows_are_pulled_by_the_registered_pair(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Class 0 counts come from pair.a's reserved rows and class 1 from pair.b's, per test."""
    table = make_table((20, 30, 40), noise=10.0)  # overlapping enough to make some errors
    split = table.split(0.5, seed=0)
    pairs = (cf.Pair("id0", "id1"), cf.Pair("id1", "id0"), cf.Pair("id2", "id0"))
    draft = cf.Protocol(name="pulled")
    tests = [cf.FixedTest.fit(None, split.development, p) for p in pairs]
    for t in tests:
        draft.register(t)
    family = draft.seal(split.reserved, ledger=ledger).evaluate()
    for test, cert in zip(tests, family, strict=True):
        rows_a = reserved_rows(table, split, test.pair.a)
        rows_b = reserved_rows(table, split, test.pair.b)
        assert cert.pair == test.pair
        assert (cert.n_class0, cert.n_class1) == (len(rows_a), len(rows_b))
        assert cert.n_class0 == split.reserved.counts[test.pair.a]
        assert cert.false_positives == int(test.predict(rows_a).sum())
        assert cert.false_negatives == int((~test.predict(rows_b)).sum())
    assert sum(c.false_positives + c.false_negatives for c in family) > 0


def test_test_fitted_on_another_table_is_refused(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A test fitted on another table's development part is refused at seal."""
    split = make_table((20, 20)).split(0.5, seed=0)
    foreign = make_table((20, 20)).split(0.5, seed=0)
    draft = cf.Protocol(name="p")
    draft.register(cf.FixedTest.fit(None, foreign.development, PAIR))
    with pytest.raises(ProtocolError, match="was fitted on other data"):
        draft.seal(split.reserved, ledger=ledger)


def test_test_fitted_on_another_split_is_refused(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A test fitted on a split of the same table with another seed is refused at seal."""
    table = make_table((20, 20))
    split, other = table.split(0.5, seed=0), table.split(0.5, seed=1)
    draft = cf.Protocol(name="p")
    draft.register(cf.FixedTest.fit(None, other.development, PAIR))
    with pytest.raises(ProtocolError, match=r"Fit the test on split.development of this very split"):
        draft.seal(split.reserved, ledger=ledger)


def test_test_fitted_on_the_full_table_is_refused(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A test fitted on the whole table (which contains the reserved rows) is refused at seal."""
    table = make_table((20, 20))
    draft = cf.Protocol(name="p")
    draft.register(cf.FixedTest.fit(None, table, PAIR))
    with pytest.raises(ProtocolError, match="fitted on other data"):
        draft.seal(table.split(0.5, seed=0).reserved, ledger=ledger)


def test_unknown_identity_is_refused(make_table: TableFactory) -> None:
    """Fitting a test for an identity missing from development data raises DataError."""
    split = make_table((20, 20)).split(0.5, seed=0)
    with pytest.raises(DataError, match="identity 'id9' is not in this table"):
        cf.FixedTest.fit(None, split.development, cf.Pair("id0", "id9"))
    with pytest.raises(DataError, match="identity 'id9'"):
        cf.FixedTest.from_score(difference_score, split.development, cf.Pair("id9", "id0"), name="d")


# -- the record --------------------------------------------------------------------------------


def test_record_round_trips_through_json(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """to_json/from_json keep the content and hash; the record states what was fixed at sealing."""
    table = make_table((20, 20))
    split, sealed = seal_tests(table, ledger, (PAIR,), name="rec", family_size=3)
    text = sealed.record.to_json()
    back = cf.PreregistrationRecord.from_json(text)
    assert back.sha256 == sealed.record.sha256 and back.content == sealed.record.content
    content = back.content
    assert content["protocol"]["family_size"] == 3 and content["protocol"]["name"] == "rec"
    assert content["data"]["reserved_fingerprint"] == split.reserved.fingerprint
    assert content["data"]["table_fingerprint"] == table.fingerprint
    assert content["data"]["reserved_counts"] == {"id0": 10, "id1": 10}
    assert content["tests"][0]["pair"] == ["id0", "id1"]
    assert "certify" in content["library"] and "sealed_at" in content
    assert ledger.preregistration(sealed.record.sha256) == text
    family = cf.SealedProtocol.from_record(text, table, ledger).evaluate()
    assert family.sources == (sealed.record.sha256,)
    assert family.certificates[0].protocol_fingerprint == sealed.record.sha256
    assert family.certificates[0].data_fingerprint == split.reserved.fingerprint


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (lambda d: d["tests"][0].__setitem__("threshold", 0.0), "edited after sealing"),
        (lambda d: d["protocol"].__setitem__("alpha_per_rate", 0.4), "edited after sealing"),
        (lambda d: d.__setitem__("sha256", "0" * 64), "edited after sealing"),
        (lambda d: d.__setitem__("format", "other"), "not a certify pre-registration record"),
        (lambda d: d.__setitem__("version", 2), "record version must be 1"),
    ],
)
def test_edited_record_is_refused(
    make_table: TableFactory, ledger: cf.Ledger, edit: Any, fragment: str
) -> None:
    """Any edit to the record after sealing raises RecordError, in from_json and from_record."""
    table = make_table((20, 20))
    _, sealed = seal_tests(table, ledger, (PAIR,))
    data = json.loads(sealed.record.to_json())
    edit(data)
    text = json.dumps(data)
    with pytest.raises(RecordError, match=fragment):
        cf.PreregistrationRecord.from_json(text)
    with pytest.raises(RecordError, match=fragment):
        cf.SealedProtocol.from_record(text, table, ledger)


def test_malformed_record_text_is_refused() -> None:
    """Text that is not JSON raises RecordError."""
    with pytest.raises(RecordError, match="not valid JSON"):
        cf.PreregistrationRecord.from_json("{not json")


def test_record_for_another_table_is_refused(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """from_record with a different table raises RecordError."""
    _, sealed = seal_tests(make_table((20, 20)), ledger, (PAIR,))
    with pytest.raises(RecordError, match="belongs to another table"):
        cf.SealedProtocol.from_record(sealed.record.to_json(), make_table((20, 20)), ledger)


def test_record_needs_its_sealing_ledger(tmp_path: Path, make_table: TableFactory, ledger: cf.Ledger) -> None:
    """from_record with a ledger that did not record the seal raises RecordError."""
    table = make_table((20, 20))
    _, sealed = seal_tests(table, ledger, (PAIR,))
    with pytest.raises(RecordError, match="was not sealed in the ledger"):
        cf.SealedProtocol.from_record(sealed.record, table, cf.Ledger(tmp_path / "other.ledger"))


def test_score_function_must_be_supplied_again(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A record with a score function test needs that function passed under its name."""
    table = make_table((20, 20))
    split = table.split(0.5, seed=0)
    draft = cf.Protocol(name="fn")
    draft.register(cf.FixedTest.from_score(difference_score, split.development, PAIR, name="diff"))
    sealed = draft.seal(split.reserved, ledger=ledger)
    with pytest.raises(RecordError, match=r"pass it as score_functions=\{'diff': fn\}"):
        cf.SealedProtocol.from_record(sealed.record.to_json(), table, ledger)
    rebuilt = cf.SealedProtocol.from_record(
        sealed.record.to_json(), table, ledger, score_functions={"diff": difference_score}
    )
    assert rebuilt.tests == sealed.tests


def test_nonlinear_estimator_round_trips_through_skops(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A random forest is stored with skops and evaluates identically after from_record."""
    from sklearn.ensemble import RandomForestClassifier

    from certify.protocol import SkopsScore

    table = make_table((30, 30), noise=6.0)  # overlapping, so the forest's scores vary
    split = table.split(0.5, seed=0)
    forest = cf.FixedTest.fit(RandomForestClassifier(n_estimators=5, random_state=0), split.development, PAIR)
    assert isinstance(forest.model, SkopsScore) and forest.name == "RandomForestClassifier"
    draft = cf.Protocol(name="forest")
    draft.register(forest)
    sealed = draft.seal(split.reserved, ledger=ledger)
    rebuilt = cf.SealedProtocol.from_record(sealed.record.to_json(), table, ledger)
    (loaded,) = rebuilt.tests
    assert loaded == forest
    rows = np.vstack([table.rows("id0"), table.rows("id1")])
    np.testing.assert_array_equal(loaded.model.score(rows), forest.model.score(rows))
    np.testing.assert_array_equal(loaded.predict(rows), forest.predict(rows))
    (cert,) = rebuilt.evaluate().certificates
    rows_a, rows_b = reserved_rows(table, split, "id0"), reserved_rows(table, split, "id1")
    assert cert.false_positives == int(forest.predict(rows_a).sum())
    assert cert.false_negatives == int((~forest.predict(rows_b)).sum())


def test_a_deferred_skops_score_is_stored_when_first_needed_and_then_kept() -> None:
    """A deferred score holds no bytes until asked; then one set, the record's, round-trips."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    from certify.protocol import SkopsScore
    from certify.protocol.scores import score_model_from_json

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    trees = HistGradientBoostingClassifier(max_iter=3, random_state=0).fit(X, X[:, 0] > 0)
    deferred = SkopsScore.from_estimator(trees, "decision_function", deferred=True)
    assert deferred._stored == []
    np.testing.assert_array_equal(deferred.score(X), trees.decision_function(X))
    assert deferred._stored == []  # scoring needs no bytes
    record = deferred.to_json()
    assert deferred._stored and deferred.blob == deferred._stored[0]
    assert record["sha256"] == deferred.sha256  # the same bytes at every later use
    back = score_model_from_json(record)
    assert back == deferred and hash(back) == hash(deferred)
    np.testing.assert_array_equal(back.score(X), deferred.score(X))
    eager = SkopsScore.from_estimator(trees, "decision_function")
    assert len(eager._stored) == 1  # a user's estimator is stored at once, before it can change


def test_fixed_test_round_trips_through_json(make_table: TableFactory) -> None:
    """A linear FixedTest rebuilt from its JSON entry equals the original and predicts the same."""
    split = make_table((20, 20)).split(0.5, seed=0)
    test = cf.FixedTest.fit(None, split.development, PAIR)
    back = cf.FixedTest.from_json(json.loads(json.dumps(test.to_json())))
    assert back == test and test.orientation in (1, -1) and 0.0 <= test.development_auc <= 1.0
    rows = split.development.rows("id0")
    np.testing.assert_array_equal(back.predict(rows), test.predict(rows))


def test_record_changed_after_sealing_is_refused(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Editing a sealed protocol's record in memory (e.g. its alpha) is refused before spending."""
    _, sealed = seal_tests(make_table((20, 20)), ledger, (PAIR,), family_size=40)
    sealed.record.content["protocol"]["alpha_per_rate"] = 0.2
    sealed.record.content["protocol"]["confidence_level"] = 0.99
    with pytest.raises(RecordError, match="changed after sealing"):
        sealed.evaluate()
    assert ledger.entry(sealed.reserved_fingerprint) is None


def test_another_split_of_spent_rows_is_refused(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Re-splitting a table with another seed does not make evaluated rows fresh."""
    table = make_table((20, 20))
    split, first = seal_tests(table, ledger, (PAIR,), name="first")
    first.evaluate()
    other = table.split(0.5, seed=1)
    assert other.reserved.fingerprint != split.reserved.fingerprint
    draft = cf.Protocol(name="resplit")
    draft.register(cf.FixedTest.fit(None, other.development, PAIR))
    with pytest.raises(ReservedSplitReusedError, match="another split of the same data"):
        draft.seal(other.reserved, ledger=ledger)


def test_overlapping_rows_are_refused_at_evaluation_too(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """Two splits sealed before either runs: the second evaluation is refused for shared rows."""
    table = make_table((20, 20))
    _, sealed_a = seal_tests(table, ledger, (PAIR,), name="a")
    other = table.split(0.5, seed=1)
    draft = cf.Protocol(name="b")
    draft.register(cf.FixedTest.fit(None, other.development, PAIR))
    sealed_b = draft.seal(other.reserved, ledger=ledger)
    sealed_a.evaluate()
    with pytest.raises(ReservedSplitReusedError, match="by protocol 'a'"):
        sealed_b.evaluate()
    assert ledger.entry(other.reserved.fingerprint) is None


def test_independent_discrete_samples_are_not_mistaken_for_spent_rows(ledger: cf.Ledger, seed: int) -> None:
    """Fresh draws of a discrete mechanism repeat values but are new data; a re-split is still refused."""
    rng = np.random.default_rng(seed)
    values = np.eye(3) * 4.0

    def discrete_table() -> cf.EmbeddingTable:
        # identity i outputs its own point with probability 0.9, else another identity's point
        labels, rows = [], []
        for i in range(3):
            own = rng.random(40) < 0.9
            other = (i + rng.integers(1, 3, size=40)) % 3
            rows.append(values[np.where(own, i, other)])
            labels += [f"id{i}"] * 40
        return cf.EmbeddingTable.from_arrays(labels, np.vstack(rows))

    first, second = discrete_table(), discrete_table()
    assert first.fingerprint != second.fingerprint
    for table in (first, second):
        split = table.split(0.5, seed=0)
        draft = cf.Protocol(name=f"discrete-{table.fingerprint[:6]}")
        draft.register(cf.FixedTest.fit(None, split.development, cf.Pair("id0", "id1"), folds=3))
        draft.seal(split.reserved, ledger=ledger).evaluate()
    resplit = first.split(0.5, seed=7)
    draft = cf.Protocol(name="resplit")
    draft.register(cf.FixedTest.fit(None, resplit.development, cf.Pair("id0", "id1"), folds=3))
    with pytest.raises(ReservedSplitReusedError, match="another split of the same data"):
        draft.seal(resplit.reserved, ledger=ledger)


def test_mmd_route_issues_a_certificate_in_the_family(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """An MMDTest shares the family's budget and yields Theorem 7's bound turned into epsilon."""
    import math

    from certify.stats.mmd import mmd_lower_confidence_bound, mmd_pure_dp_epsilon_lower

    table = make_table((400, 400))
    split = table.split(0.5, seed=0)
    draft = cf.Protocol(name="mmd-route", confidence_level=0.95)
    draft.register(cf.FixedTest.fit(None, split.development, PAIR))
    draft.register(cf.MMDTest.fit(split.development, PAIR))
    family = draft.seal(split.reserved, ledger=ledger).evaluate()
    roc, mmd = family.certificates
    assert mmd.method == "mmd_reserved" and isinstance(mmd.evidence, cf.MMDEvidence)
    assert mmd.alpha_per_rate == roc.alpha_per_rate == pytest.approx(rate_level(0.05 / 2), rel=1e-12)
    ev = mmd.evidence
    rows_a, rows_b = reserved_rows(table, split, PAIR.a), reserved_rows(table, split, PAIR.b)
    bound = mmd_lower_confidence_bound(rows_a, rows_b, ev.bandwidth, 1 - (1 - mmd.alpha_per_rate) ** 2)
    assert ev.mmd_lower == pytest.approx(bound.lower, rel=1e-12)
    assert mmd.epsilon_lower == pytest.approx(mmd_pure_dp_epsilon_lower(bound.lower), rel=1e-12)
    assert mmd.epsilon_lower > 0  # well separated identities, 200 reserved rows each
    assert mmd.epsilon_lower_at(1e-5) < mmd.epsilon_lower
    assert math.isfinite(mmd.epsilon_lower)
    with pytest.raises(cf.StatusError, match="no error counts"):
        _ = mmd.false_positives


def test_mmd_test_round_trips_through_the_record(make_table: TableFactory, ledger: cf.Ledger) -> None:
    """A record with an MMD test evaluates in another process exactly as the original would."""
    table = make_table((60, 60))
    split = table.split(0.5, seed=0)
    draft = cf.Protocol(name="mmd-record")
    draft.register(cf.MMDTest.fit(split.development, PAIR))
    sealed = draft.seal(split.reserved, ledger=ledger)
    again = cf.SealedProtocol.from_record(sealed.record.to_json(), table, ledger)
    assert again.tests == sealed.tests
    family = again.evaluate()
    assert family.certificates[0].epsilon_lower == 0.0  # 30 rows per class: Theorem 7's slack exceeds sqrt 2
