"""Property-based fuzzing of the three readers of untrusted files: CSV tables, protocol TOML, records.

Each reader, given anything, either returns a valid object or raises a CertifyError subclass; it
never raises another exception, never hangs (hypothesis deadline) and never accepts garbage (a
mutated record is accepted only when its content is unchanged).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import math
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conftest import clustered_table, stable_seed

if TYPE_CHECKING:
    import certify as cf

FUZZ = settings(
    max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", "60")),
    deadline=3000,  # milliseconds per example (imports are warmed up first); a hang fails
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)


@pytest.fixture(scope="module", autouse=True)
def _warm_up() -> None:
    """Import and exercise every reader once, so the first example's timing is not import time."""
    _read_csv_bytes(b"identity,x\na,1\nb,2\n")
    from certify.protocol.files import parse_protocol

    parse_protocol({"protocol": {"name": "w"}, "data": {}, "pairs": {}})
    _real_record()


def _read_csv_bytes(data: bytes) -> cf.EmbeddingTable | None:
    """Load bytes as a CSV table; None when refused with a DataError (anything else propagates)."""
    import certify as cf

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        path.write_bytes(data)
        try:
            return cf.EmbeddingTable.from_csv(path, normalize=True)
        except cf.DataError:
            return None


def _check_table(table: cf.EmbeddingTable | None) -> None:
    """A table that was accepted is usable: >= 2 identities, finite unit rows, an honest report."""
    if table is None:
        return
    assert len(table.identities) >= 2
    assert table.cleaning.rows_kept == table.n_rows <= table.cleaning.rows_read
    assert table.cleaning.rows_read - table.cleaning.rows_kept == len(table.cleaning.dropped)
    for ident in table.identities:
        rows = table.rows(ident)
        assert np.all(np.isfinite(rows))
        np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, rtol=1e-9)


@FUZZ
@given(st.binary(max_size=400))
def test_csv_loader_on_random_bytes(data: bytes) -> None:
    """Random bytes: the CSV loader returns a usable table or raises DataError, nothing else."""
    _check_table(_read_csv_bytes(data))


CELLS = st.sampled_from(
    [
        "1",
        "-2.5",
        "0",
        "0.0",
        "",
        "nan",
        "NA",
        "inf",
        "-inf",
        "1e400",
        "x",
        '"',
        '"1,2"',
        " 3 ",
        "1_0",
        "\x00",
        "é",
    ]
)
LABELS = st.sampled_from(["a", "b", "c", "", " ", "a,b", '"q"'])


@FUZZ
@given(
    header=st.lists(st.sampled_from(["identity", "x0", "x1", "x2", "", "identity"]), min_size=0, max_size=4),
    rows=st.lists(st.tuples(LABELS, st.lists(CELLS, min_size=0, max_size=4)), max_size=12),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_csv_loader_on_csv_like_text(
    header: list[str], rows: list[tuple[str, list[str]]], newline: str
) -> None:
    """CSV-ish text (ragged rows, bad numbers, quotes, NUL, odd newlines) loads or raises DataError."""
    lines = [",".join(header)] + [",".join([label, *cells]) for label, cells in rows]
    _check_table(_read_csv_bytes(newline.join(lines).encode("utf-8")))


@FUZZ
@given(
    counts=st.lists(st.integers(1, 4), min_size=2, max_size=4),
    cells=st.data(),
)
def test_csv_loader_on_well_formed_tables_with_bad_cells(counts: list[int], cells: st.DataObject) -> None:
    """Well-formed tables with random numeric, missing and bad cells: loaded (report exact) or DataError."""
    lines = ["identity,x0,x1"]
    missing = 0
    for i, n in enumerate(counts):
        for _ in range(n):
            pair = cells.draw(
                st.lists(
                    st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.just("")),
                    min_size=2,
                    max_size=2,
                )
            )
            missing += any(v == "" for v in pair)
            lines.append(",".join([f"id{i}", *[repr(v) if v != "" else "" for v in pair]]))
    table = _read_csv_bytes("\n".join(lines).encode())
    _check_table(table)
    if table is not None:
        assert table.cleaning.n_dropped_missing == missing


# -- protocol TOML --------------------------------------------------------------------------------

KEYS = st.sampled_from(
    [
        "kind",
        "protocol",
        "data",
        "pairs",
        "test",
        "claim",
        "benchmark",
        "name",
        "description",
        "confidence_level",
        "delta",
        "family_size",
        "label_column",
        "normalize",
        "dev_fraction",
        "split_seed",
        "candidates",
        "seed",
        "select",
        "disjoint",
        "classifier",
        "C",
        "max_iter",
        "threshold",
        "folds",
        "epsilon",
        "preset",
        "typo",
    ]
)
SCALARS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.booleans(),
    st.text(max_size=8),
    st.sampled_from(["audit", "benchmark", "youden", "logistic", "quick", "x"]),
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 1, 1)),
    st.dates(),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.slow
@FUZZ
@given(st.dictionaries(KEYS, VALUES, max_size=7))
def test_protocol_parser_on_random_documents(doc: dict[str, Any]) -> None:
    """Random TOML-shaped documents: a valid plan or ProtocolFileError, nothing else."""
    from certify.protocol.files import AuditPlan, ProtocolFileError, parse_protocol

    try:
        plan = parse_protocol(doc)
    except ProtocolFileError:
        return
    if isinstance(plan, AuditPlan):
        assert 0.0 < plan.confidence_level < 1.0 and 0.0 <= plan.delta < 1.0
        assert 0.0 < plan.dev_fraction < 1.0 and 1 <= plan.select <= plan.candidates
        assert plan.threshold == "youden" or math.isfinite(plan.threshold)
        assert min(plan.split_seed, plan.pair_seed, plan.cv_seed) >= 0


@FUZZ
@given(st.one_of(st.text(max_size=300), st.binary(max_size=300)))
def test_protocol_file_loader_on_random_text(content: str | bytes) -> None:
    """Random text or bytes as a protocol file: a plan or ProtocolFileError, nothing else."""
    from certify.protocol.files import ProtocolFileError, load_protocol_file

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.toml"
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        else:
            path.write_bytes(content)
        try:
            load_protocol_file(path)
        except ProtocolFileError:
            pass


# -- records ------------------------------------------------------------------------------------------


@functools.cache
def _real_record() -> tuple[str, Any, str]:
    """A real sealed record (logistic test), its table and ledger path; built once per session."""
    import certify as cf

    table = clustered_table(np.random.default_rng(stable_seed("fuzz record")), (16, 16), dimension=3)
    folder = tempfile.mkdtemp(prefix="certify-fuzz-")
    ledger = cf.Ledger(Path(folder) / "audit.ledger")
    split = table.split(0.5, seed=0)
    protocol = cf.Protocol(name="fuzzed")
    protocol.register(cf.FixedTest.fit(None, split.development, cf.Pair("id0", "id1"), folds=2))
    sealed = protocol.seal(split.reserved, ledger=ledger)
    return sealed.record.to_json(), table, str(ledger.path)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=15,
)


@FUZZ
@given(st.one_of(JSON.map(json.dumps), st.text(max_size=200)))
def test_record_reader_on_random_json_and_text(text: str) -> None:
    """Random JSON and text are refused with RecordError (nothing random passes the hash check)."""
    import certify as cf

    try:
        cf.PreregistrationRecord.from_json(text)
    except cf.RecordError:
        return
    raise AssertionError(f"accepted garbage: {text[:80]!r}")


@FUZZ
@given(
    position=st.floats(0.0, 1.0, exclude_max=True),
    action=st.sampled_from(["replace", "insert", "delete"]),
    char=st.characters(codec="utf-8"),
)
def test_mutated_record_is_accepted_only_with_identical_content(
    position: float, action: str, char: str
) -> None:
    """A record edited at one character is accepted only if its content is unchanged (e.g. whitespace)."""
    import certify as cf
    from certify.protocol.record import _canonical

    original, _, _ = _real_record()
    i = int(position * len(original))
    if action == "replace":
        text = original[:i] + char + original[i + 1 :]
    elif action == "insert":
        text = original[:i] + char + original[i:]
    else:
        text = original[:i] + original[i + 1 :]
    try:
        record = cf.PreregistrationRecord.from_json(text)
    except cf.RecordError:
        return
    reference = cf.PreregistrationRecord.from_json(original)
    assert record.sha256 == reference.sha256
    assert _canonical(record.content) == _canonical(reference.content)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a leaf or container inside a JSON value."""
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for k, v in enumerate(node):
            out += _paths(v, (*prefix, k))
    return out


@settings(FUZZ, max_examples=40)
@given(choice=st.integers(min_value=0), value=JSON)
def test_rehashed_forged_record_never_crashes_evaluation_setup(choice: int, value: Any) -> None:
    """A record with one field replaced and its hash recomputed (a forgery) fails only with CertifyError.

    The forged record is put in the ledger too, so the hash and ledger checks pass and only the
    structural and type checks stand between it and evaluation.
    """
    import certify as cf
    from certify.protocol.record import _canonical

    original, table, ledger_path = _real_record()
    content = json.loads(original)
    content.pop("sha256")
    paths = [p for p in _paths(content) if p]
    path = paths[choice % len(paths)]
    node = content
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        text = _canonical(content)
    except ValueError:  # NaN or infinity cannot be hashed into a record at all
        return
    digest = hashlib.sha256(text.encode()).hexdigest()
    forged = json.dumps({**content, "sha256": digest})
    ledger = cf.Ledger(ledger_path)
    ledger.record_preregistration(digest, "forged", "f" * 64, forged)
    try:
        sealed = cf.SealedProtocol.from_record(forged, table, ledger)
    except cf.CertifyError:
        return
    # accepted: the forgery left everything evaluation needs well formed
    assert len(sealed.tests) >= 1 and sealed.record.sha256 == digest
