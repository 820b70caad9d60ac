"""A corpus of bad inputs: each gets a specific CertifyError, exit code 2 (3 if refused), no traceback.

Files live in ``corpus/``; calls are built on small tables unique to each test. Every case names
the error class and a fragment of its message. Through the command line the same inputs give exit
code 2 and a one-line message, never a traceback, and leave no half-written file behind.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest
from numpy.typing import NDArray
from typeguard import suppress_type_checks

from ..conftest import clustered_table

if TYPE_CHECKING:
    import certify as cf

CORPUS = Path(__file__).parent / "corpus"

# (file, message fragment): every one raises DataError from EmbeddingTable.from_csv.
CSV_CASES: list[tuple[str, str]] = [
    ("empty.csv", "is empty"),
    ("blank_lines.csv", "is empty"),
    ("header_only.csv", "has a header but no data rows"),
    ("no_label_column.csv", "label_column must name a column"),
    ("duplicate_header.csv", "must not repeat a column name"),
    ("label_only.csv", "at least one coordinate column"),
    ("text_in_numeric.csv", "'abc' is not a number"),
    ("ragged_short.csv", "line 3 has 2 fields; the header has 3"),
    ("ragged_long.csv", "line 3 has 4 fields; the header has 3"),
    ("infinite.csv", "'inf' is not finite"),
    ("overflow.csv", "'-1e400' is not finite"),
    ("one_identity.csv", "at least 2 identities"),
    ("empty_label.csv", "the 'identity' cell is empty"),
    ("not_utf8.csv", "is not UTF-8 text"),
    ("nul_byte.csv", "is not a number"),
    ("underscore_number.csv", "'1_000' is not a number"),
    ("unicode_digit.csv", "is not a number"),
    ("hex_number.csv", "'0x1f' is not a number"),
    ("all_missing.csv", "no usable rows"),
    ("all_zero_norm.csv", "no usable rows"),
    ("missing_leaves_one_identity.csv", "at least 2 identities"),
    ("unterminated_quote.csv", "is not a number"),
]

# (file, message fragment): every one raises ProtocolFileError from load_protocol_file.
TOML_CASES: list[tuple[str, str]] = [
    ("unknown_top_key.toml", "whatever is not a known key"),
    ("unknown_nested_key.toml", "pairs.selct is not a known key"),
    ("name_not_string.toml", "protocol.name must be of type str; got 3"),
    ("normalize_not_bool.toml", "data.normalize must be of type bool; got 'yes'"),
    ("level_is_bool.toml", "protocol.confidence_level must be of type int or float; got True"),
    ("candidates_float.toml", "pairs.candidates must be of type int; got 2.5"),
    ("missing_protocol.toml", "section [protocol] is required but missing"),
    ("missing_name.toml", "protocol.name is required but missing"),
    ("missing_data.toml", "section [data] is required but missing"),
    ("level_one.toml", "protocol.confidence_level must be in (0, 1); got 1.0"),
    ("level_zero.toml", "protocol.confidence_level must be in (0, 1); got 0"),
    ("delta_one.toml", "protocol.delta must be in [0, 1); got 1.0"),
    ("delta_negative.toml", "protocol.delta must be in [0, 1); got -0.1"),
    ("delta_nan.toml", "protocol.delta must be in [0, 1); got nan"),
    ("threshold_inf.toml", "test.threshold must be finite; got inf"),
    ("threshold_text.toml", "test.threshold must be 'youden', 'max_bound' or a number; got 'best'"),
    ("select_above_candidates.toml", "pairs.select must be at most pairs.candidates (3)"),
    ("folds_one.toml", "test.folds must be an integer >= 2; got 1"),
    ("dev_fraction_one.toml", "data.dev_fraction must be in (0, 1); got 1.0"),
    ("not_toml.toml", "is not valid TOML"),
    ("not_utf8.toml", "is not UTF-8 text"),
    ("huge_integer.toml", "protocol.confidence_level must be in (0, 1)"),
    ("negative_seed.toml", "data.split_seed must be an integer >= 0; got -1"),
    ("unknown_kind.toml", "kind must be one of audit, benchmark; got 'survey'"),
    ("section_not_table.toml", "protocol must be a table"),
    ("blank_name.toml", "protocol.name must be a non-empty string"),
    ("claim_negative.toml", "claim.epsilon must be in [0, inf); got -1.0"),
]


def _cf() -> Any:
    """The certify package, imported late so typeguard's import hook instruments it."""
    import certify

    return certify


def _error(name: str) -> type[BaseException]:
    """An error class of certify by name."""
    import certify.errors
    import certify.protocol.files

    found = getattr(certify.errors, name, None) or getattr(certify.protocol.files, name)
    assert isinstance(found, type)
    return found


def _leftovers(folder: Path) -> list[Path]:
    """Temporary files an atomic write would have left behind."""
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")]


def write_table(path: Path, seed: int, *, n: int = 24, k: int = 4, d: int = 5) -> None:
    """A CSV with ``k`` well separated identities of ``n`` rows each, drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["identity", *[f"x{j}" for j in range(d)]])
        for i in range(k):
            centre = np.zeros(d)
            centre[i % d] = 8.0
            for row in centre + rng.standard_normal((n, d)) * 0.1:
                w.writerow([f"person{i}", *row.tolist()])


PROTOCOL = """\
kind = "audit"
[protocol]
name = "bad-inputs"
[data]
normalize = false
dev_fraction = 0.5
[pairs]
candidates = 6
select = 2
[test]
folds = 3
"""


# -- files: the loader --------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "fragment"), CSV_CASES, ids=[c[0] for c in CSV_CASES])
def test_bad_csv_raises_data_error(name: str, fragment: str) -> None:
    """Each bad CSV raises DataError naming the problem."""
    cf = _cf()
    with pytest.raises(cf.DataError) as info:
        cf.EmbeddingTable.from_csv(CORPUS / name)
    assert fragment in str(info.value)


@pytest.mark.parametrize(("name", "fragment"), CSV_CASES, ids=[c[0] for c in CSV_CASES])
def test_bad_csv_exits_2_without_traceback(
    name: str, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``certify inspect`` on each bad CSV exits 2 with the message and no traceback."""
    from certify.cli import main

    assert main(["inspect", str(CORPUS / name)]) == 2
    err = capsys.readouterr().err
    assert "certify: error:" in err and fragment in err
    assert "Traceback" not in err


def test_missing_and_zero_norm_rows_are_dropped_and_reported() -> None:
    """Missing values and zero-norm rows are not errors: the rows are dropped and each is reported."""
    cf = _cf()
    table = cf.EmbeddingTable.from_csv(CORPUS / "missing_and_zero_norm.csv", normalize=True)
    report = table.cleaning
    assert (report.rows_read, report.rows_kept) == (8, 5)
    assert [(d.row, d.identity, d.reason) for d in report.dropped] == [
        (2, "b", "missing value"),
        (3, "b", "missing value"),
        (5, "c", "norm <= 1e-06"),
    ]
    assert (report.n_dropped_missing, report.n_dropped_zero_norm) == (2, 1)
    assert "dropped for missing values: 2; dropped for norm <= 1e-06: 1" in report.lines()[0]
    assert dict(table.counts) == {"a": 2, "b": 1, "c": 2}
    # the kept rows are L2-normalized: every norm is 1 up to float rounding
    for ident in table.identities:
        np.testing.assert_allclose(np.linalg.norm(table.rows(ident), axis=1), 1.0, rtol=1e-12)


def test_cli_inspect_prints_the_cleaning_report(capsys: pytest.CaptureFixture[str]) -> None:
    """Through the command line the dropped rows are reported, and the exit code is 0."""
    from certify.cli import main

    assert main(["inspect", str(CORPUS / "missing_and_zero_norm.csv")]) == 0
    out = capsys.readouterr().out
    assert "dropped for missing values: 2; dropped for norm <= 1e-06: 1" in out


def test_oversized_csv_field_is_refused(tmp_path: Path) -> None:
    """A cell larger than the CSV field limit is refused as invalid CSV, not with a csv.Error."""
    cf = _cf()
    path = tmp_path / "huge.csv"
    path.write_text("identity,x0\na," + "1" * (csv.field_size_limit() + 10) + "\nb,2\n")
    with pytest.raises(cf.DataError, match="is not valid CSV"):
        cf.EmbeddingTable.from_csv(path)


# -- files: protocol TOML ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "fragment"), TOML_CASES, ids=[c[0] for c in TOML_CASES])
def test_bad_protocol_file_raises_protocol_file_error(name: str, fragment: str) -> None:
    """Each bad protocol file raises ProtocolFileError naming the key, constraint and value."""
    from certify.protocol.files import ProtocolFileError, load_protocol_file

    with pytest.raises(ProtocolFileError) as info:
        load_protocol_file(CORPUS / name)
    assert fragment in str(info.value)


@pytest.mark.parametrize(("name", "fragment"), TOML_CASES, ids=[c[0] for c in TOML_CASES])
def test_bad_protocol_file_exits_2_and_writes_nothing(
    name: str, fragment: str, tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """``certify preregister`` with each bad protocol exits 2, writes no record and seals nothing."""
    from certify.cli import main

    write_table(tmp_path / "table.csv", seed)
    code = main(
        [
            "preregister",
            str(CORPUS / name),
            "--data",
            str(tmp_path / "table.csv"),
            "--ledger",
            str(tmp_path / "audit.ledger"),
            "--out",
            str(tmp_path / "record.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and fragment in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]


# -- calls ---------------------------------------------------------------------------------------


class Ctx:
    """Small data unique to one test, built on demand."""

    def __init__(self, seed: int, tmp: Path) -> None:
        self.seed = seed
        self.tmp = tmp
        self.cf = _cf()

    @cached_property
    def table(self) -> cf.EmbeddingTable:
        """Three separated identities of 12 rows in 3 dimensions."""
        return clustered_table(np.random.default_rng(self.seed), (12, 12, 12), dimension=3)

    @cached_property
    def split(self) -> cf.DevTestSplit:
        """A half/half split of :attr:`table`."""
        return self.table.split(0.5, seed=0)

    @cached_property
    def ledger(self) -> cf.Ledger:
        """A fresh ledger."""
        import certify

        return certify.Ledger(self.tmp / "audit.ledger")

    @cached_property
    def sealed(self) -> cf.SealedProtocol:
        """A sealed one-test protocol on :attr:`split` (not evaluated)."""
        protocol = self.cf.Protocol(name="calls")
        protocol.register(self.cf.FixedTest.fit(None, self.split.development, self.pair, folds=3))
        sealed: cf.SealedProtocol = protocol.seal(self.split.reserved, ledger=self.ledger)
        return sealed

    @property
    def pair(self) -> cf.Pair:
        """The pair id0~id1."""
        import certify

        return certify.Pair("id0", "id1")

    def other_table(self, dimension: int = 3) -> cf.EmbeddingTable:
        """Another table (other rows, possibly another dimension)."""
        rng = np.random.default_rng(self.seed + 1)
        return clustered_table(rng, (12, 12, 12), dimension=dimension)

    def rehashed(self, edit: Callable[[dict[str, Any]], None]) -> str:
        """The sealed record with ``edit`` applied and its hash recomputed (and stored in the ledger)."""
        from certify.protocol.record import _canonical

        content = dict(self.sealed.record.content)
        content = json.loads(json.dumps(content))
        edit(content)
        digest = hashlib.sha256(_canonical(content).encode()).hexdigest()
        text = json.dumps({**content, "sha256": digest})
        self.ledger.record_preregistration(digest, "forged", "f" * 64, text)
        return text


class NoScores:
    """An estimator with fit but neither predict_proba nor decision_function."""

    def fit(self, X: Any, y: Any) -> NoScores:
        """Do nothing."""
        return self

    def predict(self, X: Any) -> Any:
        """Predict class 0."""
        return np.zeros(len(X))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """No parameters."""
        return {}


def _nan_score(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """A score function that returns NaN."""
    return np.full(x.shape[0], np.nan)


def _short_score(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """A score function that returns too few scores."""
    out: NDArray[np.float64] = x[:1, 0]
    return out


def _drop(section: str) -> Callable[[dict[str, Any]], None]:
    """An edit removing a record section."""
    return lambda content: content.pop(section)


def _set(path: tuple[str, ...], value: object) -> Callable[[dict[str, Any]], None]:
    """An edit setting a nested record field."""

    def edit(content: dict[str, Any]) -> None:
        node: Any = content
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return edit


def _edited_record(c: Ctx) -> object:
    """Change the confidence level in the JSON text without re-hashing."""
    text = c.sealed.record.to_json().replace('"confidence_level": 0.95', '"confidence_level": 0.5')
    assert text != c.sealed.record.to_json()
    return c.cf.PreregistrationRecord.from_json(text)


def _other_table_record(c: Ctx) -> object:
    """Rebuild the sealed protocol on another table."""
    return c.cf.SealedProtocol.from_record(c.sealed.record.to_json(), c.other_table(), c.ledger)


def _other_ledger_record(c: Ctx) -> object:
    """Rebuild the sealed protocol with a ledger that never saw the seal."""
    other = c.cf.Ledger(c.tmp / "other.ledger")
    return c.cf.SealedProtocol.from_record(c.sealed.record.to_json(), c.table, other)


def _forged(edit: Callable[[dict[str, Any]], None]) -> Callable[[Ctx], object]:
    """Rebuild from a re-hashed (forged) record, so only the structural checks can stop it."""
    return lambda c: c.cf.SealedProtocol.from_record(c.rehashed(edit), c.table, c.ledger)


def _seal_other_dimension(c: Ctx) -> object:
    """Seal a test fitted on a 3-D table against the reserved split of a 4-D table."""
    protocol = c.cf.Protocol(name="dims")
    protocol.register(c.cf.FixedTest.fit(None, c.split.development, c.pair, folds=3))
    return protocol.seal(c.other_table(dimension=4).split(0.5, seed=0).reserved, ledger=c.ledger)


def _register_twice(c: Ctx) -> object:
    """Register the same pair and test name twice."""
    protocol = c.cf.Protocol(name="twice")
    test = c.cf.FixedTest.fit(None, c.split.development, c.pair, folds=3)
    protocol.register(test)
    protocol.register(test)
    return protocol


def _evaluate_twice(c: Ctx) -> object:
    """Evaluate the same sealed protocol twice."""
    c.sealed.evaluate()
    return c.sealed.evaluate()


def _register_after_seal(c: Ctx) -> object:
    """Change a draft after it was sealed."""
    protocol = c.cf.Protocol(name="late")
    test = c.cf.FixedTest.fit(None, c.split.development, c.pair, folds=3)
    protocol.register(test)
    protocol.seal(c.split.reserved, ledger=c.ledger)
    protocol.register(test)
    return protocol


# (id, call, error class name, message fragment)
CALL_CASES: list[tuple[str, Callable[[Ctx], object], str, str]] = [
    (
        "vectors-1d",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b"], np.ones(2)),
        "DataError",
        "must be a 2-D array",
    ),
    (
        "labels-count",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b", "c"], np.ones((2, 2))),
        "DataError",
        "3 labels for 2 rows",
    ),
    (
        "vectors-text",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b"], [["x", "1"], ["2", "3"]]),
        "DataError",
        "conversion failed",
    ),
    (
        "vectors-ragged",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b"], [[1.0, 2.0], [3.0]]),
        "DataError",
        "conversion failed",
    ),
    (
        "vectors-complex",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b"], np.array([[1j], [2.0]])),
        "DataError",
        "got complex values",
    ),
    (
        "vectors-inf",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b"], [[1.0, np.inf], [1.0, 2.0]]),
        "DataError",
        "row 0, column 1 is inf",
    ),
    (
        "vectors-no-columns",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b"], np.ones((2, 0))),
        "DataError",
        "at least one column",
    ),
    (
        "vectors-all-nan",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b"], np.full((2, 2), np.nan)),
        "DataError",
        "no usable rows",
    ),
    (
        "one-identity",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "a"], np.eye(2)),
        "DataError",
        "at least 2 identities",
    ),
    (
        "identity-one-row-split",
        lambda c: c.cf.EmbeddingTable.from_arrays(["a", "b", "b"], np.eye(3)).split(0.5, seed=0),
        "DataError",
        "a (1 rows)",
    ),
    (
        "too-few-rows-split",
        lambda c: c.table.split(0.05, seed=0),
        "DataError",
        "too few rows for dev_fraction=0.05",
    ),
    ("dev-fraction-one", lambda c: c.table.split(1.0, seed=0), "ParameterError", "dev_fraction must be"),
    ("dev-fraction-nan", lambda c: c.table.split(float("nan"), seed=0), "ParameterError", "got nan"),
    ("split-seed-negative", lambda c: c.table.split(0.5, seed=-1), "ParameterError", "seed must be"),
    ("unknown-identity-rows", lambda c: c.table.rows("nobody"), "DataError", "'nobody' is not in"),
    (
        "unknown-identity-in-pair",
        lambda c: c.cf.FixedTest.fit(None, c.split.development, c.cf.Pair("id0", "nobody")),
        "DataError",
        "'nobody' is not in this table",
    ),
    ("pair-same-identity", lambda c: c.cf.Pair("id0", "id0"), "ParameterError", "two different"),
    ("pair-empty-identity", lambda c: c.cf.Pair("", "id0"), "ParameterError", "non-empty identity"),
    (
        "duplicate-pairs",
        lambda c: c.cf.select_pairs(c.split.development, [c.pair, c.cf.Pair("id1", "id0")], k=1),
        "DataError",
        "appears twice",
    ),
    (
        "duplicate-identities",
        lambda c: c.cf.sample_pairs(["a", "b", "a"], count=1, seed=0),
        "DataError",
        "must be distinct",
    ),
    (
        "dimension-mismatch-samples",
        lambda c: c.cf.mmd_tv(np.ones((5, 3)), np.ones((5, 4))),
        "DataError",
        "same number of columns as x_a (3); got 4",
    ),
    ("dimension-mismatch-tables", _seal_other_dimension, "ProtocolError", "fitted on other data"),
    (
        "dimension-mismatch-scoring",
        lambda c: c.cf.FixedTest.fit(None, c.split.development, c.pair, folds=3).predict(np.ones((2, 4))),
        "DataError",
        "rows must have dimension 3",
    ),
    ("delta-one", lambda c: c.cf.Protocol(name="d", delta=1.0), "ParameterError", "delta must be"),
    ("delta-negative", lambda c: c.cf.Protocol(name="d", delta=-1e-9), "ParameterError", "[0, 1)"),
    ("delta-nan", lambda c: c.cf.Protocol(name="d", delta=float("nan")), "ParameterError", "got nan"),
    (
        "level-one",
        lambda c: c.cf.Protocol(name="c", confidence_level=1.0),
        "ParameterError",
        "confidence_level must be a number in (0, 1)",
    ),
    (
        "level-zero",
        lambda c: c.cf.Protocol(name="c", confidence_level=0.0),
        "ParameterError",
        "confidence_level must be",
    ),
    (
        "level-inf",
        lambda c: c.cf.Protocol(name="c", confidence_level=float("inf")),
        "ParameterError",
        "got inf",
    ),
    (
        "annotations-nan",
        lambda c: c.cf.Protocol(name="c", annotations={"x": float("nan")}),
        "ParameterError",
        "annotations must be JSON-serializable",
    ),
    (
        "threshold-inf",
        lambda c: c.cf.FixedTest.fit(None, c.split.development, c.pair, threshold=float("inf"), folds=3),
        "ParameterError",
        "threshold must be a finite number; got inf",
    ),
    (
        "threshold-nan",
        lambda c: c.cf.FixedTest.fit(None, c.split.development, c.pair, threshold=float("nan"), folds=3),
        "ParameterError",
        "threshold must be a finite number; got nan",
    ),
    (
        "estimator-without-scores",
        lambda c: c.cf.FixedTest.fit(NoScores(), c.split.development, c.pair, folds=3),
        "EstimatorError",
        "neither predict_proba nor decision_function",
    ),
    (
        "estimator-not-an-estimator",
        lambda c: c.cf.FixedTest.fit(object(), c.split.development, c.pair, folds=3),
        "EstimatorError",
        "must have a fit method",
    ),
    (
        "score-function-nan",
        lambda c: c.cf.FixedTest.from_score(_nan_score, c.split.development, c.pair, name="nan"),
        "EstimatorError",
        "one finite score per row",
    ),
    (
        "score-function-short",
        lambda c: c.cf.FixedTest.from_score(_short_score, c.split.development, c.pair, name="short"),
        "EstimatorError",
        "one finite score per row",
    ),
    (
        "folds-above-rows",
        lambda c: c.cf.FixedTest.fit(None, c.split.development, c.pair, folds=7),
        "DataError",
        "at least folds=7 development rows",
    ),
    ("register-twice", _register_twice, "ProtocolError", "already registered"),
    ("register-after-seal", _register_after_seal, "ProtocolSealedError", "is sealed"),
    ("evaluate-twice", _evaluate_twice, "ReservedSplitReusedError", "already evaluated"),
    (
        "seal-nothing",
        lambda c: c.cf.Protocol(name="empty").seal(c.split.reserved, ledger=c.ledger),
        "ProtocolError",
        "register at least one FixedTest",
    ),
    (
        "seal-whole-split",
        lambda c: c.cf.Protocol(name="whole").seal(c.split, ledger=c.ledger),
        "ProtocolError",
        "pass split.reserved",
    ),
    ("record-edited", _edited_record, "RecordError", "edited after sealing"),
    ("record-other-table", _other_table_record, "RecordError", "belongs to another table"),
    ("record-other-ledger", _other_ledger_record, "RecordError", "was not sealed in the ledger"),
    (
        "record-not-json",
        lambda c: c.cf.PreregistrationRecord.from_json("{not json"),
        "RecordError",
        "not valid JSON",
    ),
    (
        "record-deeply-nested",
        lambda c: c.cf.PreregistrationRecord.from_json("[" * 100_000),
        "RecordError",
        "not valid JSON",
    ),
    (
        "record-huge-integer",
        lambda c: c.cf.PreregistrationRecord.from_json('{"version": ' + "9" * 5000 + "}"),
        "RecordError",
        "not valid JSON",
    ),
    (
        "record-not-a-record",
        lambda c: c.cf.PreregistrationRecord.from_json('{"tests": []}'),
        "RecordError",
        "not a certify pre-registration record",
    ),
    (
        "record-wrong-version",
        lambda c: c.cf.PreregistrationRecord.from_json('{"format": "certify.preregistration", "version": 2}'),
        "RecordError",
        "record version must be 1; got 2",
    ),
    ("record-forged-no-data", _forged(_drop("data")), "RecordError", "section 'data' must be an object"),
    (
        "record-forged-name-type",
        _forged(_set(("protocol", "name"), 7)),
        "RecordError",
        "protocol.name is missing or of the wrong type",
    ),
    (
        "record-forged-no-tests",
        _forged(_set(("tests",), [])),
        "RecordError",
        "tests must be a non-empty list",
    ),
    (
        "record-forged-test-entry",
        _forged(_set(("tests",), [{"model": {"kind": "linear"}}])),
        "RecordError",
        "a test entry of the record is malformed",
    ),
    (
        "record-forged-model-kind",
        _forged(_set(("tests",), [{"model": {"kind": "pickle"}}])),
        "RecordError",
        "unknown model kind 'pickle'",
    ),
    (
        "ledger-is-a-folder",
        lambda c: c.cf.Ledger(c.tmp),
        "LedgerError",
        "is a folder",
    ),
    (
        "ledger-not-a-database",
        lambda c: (c.tmp / "text.ledger").write_text("hello " * 200) and c.cf.Ledger(c.tmp / "text.ledger"),
        "LedgerError",
        "file is not a database",
    ),
    (
        "claim-negative",
        lambda c: c.cf.Claim(epsilon=-1.0, delta=0.0),
        "ParameterError",
        "Claim.epsilon must be a finite number >= 0",
    ),
    (
        "clopper-pearson-alpha",
        lambda c: __import__("certify.stats.binomial").stats.binomial.clopper_pearson_upper(1, 10, 1.0),
        "ParameterError",
        "alpha must be a number in (0, 1)",
    ),
    (
        "clopper-pearson-count",
        lambda c: __import__("certify.stats.binomial").stats.binomial.clopper_pearson_upper(11, 10, 0.05),
        "ParameterError",
        "k must be in [0, n]",
    ),
]


@pytest.mark.parametrize(
    ("call", "error", "fragment"), [c[1:] for c in CALL_CASES], ids=[c[0] for c in CALL_CASES]
)
def test_bad_call_raises_specific_error(
    call: Callable[[Ctx], object], error: str, fragment: str, seed: int, tmp_path: Path
) -> None:
    """Each bad call raises the named CertifyError subclass with a message naming the problem."""
    cf = _cf()
    ctx = Ctx(seed, tmp_path)
    with suppress_type_checks(), pytest.raises(_error(error)) as info:
        call(ctx)
    assert isinstance(info.value, cf.CertifyError)
    assert fragment in str(info.value)


def test_corpus_has_at_least_forty_cases() -> None:
    """The corpus is as large as promised (files plus calls)."""
    assert len(CSV_CASES) + len(TOML_CASES) + len(CALL_CASES) >= 40
    listed = {name for name, _ in CSV_CASES + TOML_CASES} | {"missing_and_zero_norm.csv"}
    assert listed == {p.name for p in CORPUS.iterdir()}


# -- the command line end to end: records, refusals, nothing half-written ------------------------


@pytest.fixture
def sealed_dir(tmp_path: Path, seed: int) -> Path:
    """A folder with a table unique to the test, a protocol, a ledger and a sealed record."""
    from certify.cli import main

    write_table(tmp_path / "table.csv", seed)
    (tmp_path / "protocol.toml").write_text(PROTOCOL)
    args = ["--data", str(tmp_path / "table.csv"), "--ledger", str(tmp_path / "audit.ledger")]
    code = main(["preregister", str(tmp_path / "protocol.toml"), *args, "--out", str(tmp_path / "rec.json")])
    assert code == 0
    return tmp_path


def _evaluate(folder: Path, record: Path, out: Path, data: Path | None = None) -> int:
    """Run ``certify evaluate`` on files of ``folder``."""
    from certify.cli import main

    return main(
        [
            "evaluate",
            str(record),
            "--data",
            str(data or folder / "table.csv"),
            "--ledger",
            str(folder / "audit.ledger"),
            "--out",
            str(out),
        ]
    )


def _spent(folder: Path) -> int:
    """How many splits the folder's ledger records as spent."""
    cf = _cf()
    return len(cf.Ledger(folder / "audit.ledger").entries())


def test_cli_edited_record_exits_2_and_spends_nothing(
    sealed_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An edited record exits 2 naming the hash check; no report, nothing spent, no temp files."""
    record = json.loads((sealed_dir / "rec.json").read_text())
    record["protocol"]["delta"] = 0.5
    (sealed_dir / "edited.json").write_text(json.dumps(record))
    assert _evaluate(sealed_dir, sealed_dir / "edited.json", sealed_dir / "report") == 2
    err = capsys.readouterr().err
    assert "edited after sealing" in err and "Traceback" not in err
    assert not (sealed_dir / "report").exists() and _spent(sealed_dir) == 0
    assert _leftovers(sealed_dir) == []


def test_cli_record_for_another_table_exits_2(
    sealed_dir: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record evaluated on another table exits 2; no report, nothing spent."""
    write_table(sealed_dir / "other.csv", seed + 1)
    code = _evaluate(sealed_dir, sealed_dir / "rec.json", sealed_dir / "report", sealed_dir / "other.csv")
    err = capsys.readouterr().err
    assert code == 2 and "belongs to another table" in err and "Traceback" not in err
    assert not (sealed_dir / "report").exists() and _spent(sealed_dir) == 0


def test_cli_unwritable_output_fails_before_spending(
    sealed_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output location that cannot be a folder exits 2 before the split is spent; a retry works."""
    (sealed_dir / "blocker").write_text("a file, not a folder")
    assert _evaluate(sealed_dir, sealed_dir / "rec.json", sealed_dir / "blocker") == 2
    err = capsys.readouterr().err
    assert "cannot be written" in err and "nothing was sealed or evaluated" in err
    assert "Traceback" not in err
    assert _spent(sealed_dir) == 0
    assert (sealed_dir / "blocker").read_text() == "a file, not a folder"
    assert _evaluate(sealed_dir, sealed_dir / "rec.json", sealed_dir / "report") == 0
    assert (sealed_dir / "report" / "evaluation.md").exists() and _spent(sealed_dir) == 1
    assert _leftovers(sealed_dir) == []


def test_cli_second_evaluation_exits_3_and_writes_no_report(
    sealed_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Evaluating a record twice exits 3 (refused by the protocol) and leaves no second report."""
    assert _evaluate(sealed_dir, sealed_dir / "rec.json", sealed_dir / "first") == 0
    capsys.readouterr()
    assert _evaluate(sealed_dir, sealed_dir / "rec.json", sealed_dir / "second") == 3
    err = capsys.readouterr().err
    assert "certify: refused:" in err and "already evaluated" in err and "Traceback" not in err
    assert list((sealed_dir / "second").iterdir()) == []
    assert _leftovers(sealed_dir) == []


def test_cli_unwritable_record_location_seals_nothing(
    tmp_path: Path, seed: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """``preregister`` with a record path under a file exits 2 before sealing anything."""
    from certify.cli import main

    write_table(tmp_path / "table.csv", seed)
    (tmp_path / "protocol.toml").write_text(PROTOCOL)
    (tmp_path / "blocker").write_text("x")
    code = main(
        [
            "preregister",
            str(tmp_path / "protocol.toml"),
            "--data",
            str(tmp_path / "table.csv"),
            "--ledger",
            str(tmp_path / "audit.ledger"),
            "--out",
            str(tmp_path / "blocker" / "rec.json"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "cannot be written" in err and "Traceback" not in err
    assert not (tmp_path / "audit.ledger").exists()


def test_cli_inspect_refuses_impossible_plan_settings(capsys: pytest.CaptureFixture[str]) -> None:
    """``inspect`` refuses a development fraction outside (0, 1) instead of printing negative sizes."""
    from certify.cli import main

    path = str(CORPUS / "missing_and_zero_norm.csv")
    assert main(["inspect", path, "--dev-fraction", "2"]) == 2
    assert main(["inspect", path, "--tests", "0"]) == 2
    err = capsys.readouterr().err
    assert "--dev-fraction must be in (0, 1); got 2.0" in err and "--tests must be an integer >= 1" in err


def test_failed_atomic_write_keeps_old_content_and_removes_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the final rename fails, the old file is intact and the temporary file is removed."""
    from certify.report import write_atomic

    target = tmp_path / "report.md"
    target.write_text("old")

    def failing_replace(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "new content " * 1000)
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
