"""Tests for embedding tables: loading, cleaning, fingerprints, splits and pair sampling."""

from __future__ import annotations

import copy
import math
import pickle
from pathlib import Path

import numpy as np
import pytest
from typeguard import suppress_type_checks

import certify as cf
from certify.errors import DataError, ParameterError, ProtocolError

from .conftest import TableFactory


def write(tmp_path: Path, text: str, name: str = "table.csv") -> Path:
    """Write a CSV file and return its path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


DIRTY = """identity,x0,x1,x2
a,3,4,0
a,,1,1
a,3,4,0
a,0,0,0
b,3,4,0
b,NA,2,2
b,1e-7,0,0
b,0,1,0
b,1,0,0
c,0,0,2
c,2,0,0
"""


# -- from_csv: cleaning ------------------------------------------------------------------------


def test_from_csv_drops_and_reports_rows(tmp_path: Path) -> None:
    """Rows with missing values or norm <= 1e-6 are dropped and each is listed with its reason."""
    table = cf.EmbeddingTable.from_csv(write(tmp_path, DIRTY))
    report = table.cleaning
    assert (report.rows_read, report.rows_kept) == (11, 7)
    assert [(d.row, d.identity, d.reason) for d in report.dropped] == [
        (1, "a", "missing value"),
        (3, "a", "norm <= 1e-06"),
        (5, "b", "missing value"),
        (6, "b", "norm <= 1e-06"),
    ]
    assert (report.n_dropped_missing, report.n_dropped_zero_norm) == (2, 2)
    assert dict(table.counts) == {"a": 2, "b": 3, "c": 2}


def test_from_csv_reports_duplicates_within_and_across(tmp_path: Path) -> None:
    """Repeated vectors within an identity and shared across identities are reported, not removed."""
    report = cf.EmbeddingTable.from_csv(write(tmp_path, DIRTY)).cleaning
    assert report.duplicates_within == (("a", 1),)
    assert report.duplicates_across == (("a", "b"),)
    text = "\n".join(report.lines())
    assert "duplicate vectors within identity a: 1 extra copies" in text
    assert "identical vector under different identities: a, b" in text
    assert "dropped for missing values: 2" in text


def test_from_csv_normalizes_by_default(tmp_path: Path) -> None:
    """from_csv L2-normalizes kept rows unless told not to."""
    path = write(tmp_path, DIRTY)
    normalized = cf.EmbeddingTable.from_csv(path)
    raw = cf.EmbeddingTable.from_csv(path, normalize=False)
    for ident in normalized.identities:
        np.testing.assert_allclose(np.linalg.norm(normalized.rows(ident), axis=1), 1.0, rtol=1e-15)
    np.testing.assert_array_equal(raw.rows("a")[0], [3.0, 4.0, 0.0])
    np.testing.assert_allclose(normalized.rows("a")[0], [0.6, 0.8, 0.0], rtol=1e-15)
    assert normalized.cleaning.normalized and not raw.cleaning.normalized


def test_from_csv_custom_label_column(tmp_path: Path) -> None:
    """The label column may sit anywhere and have any name."""
    path = write(tmp_path, "x0,who,x1\n1,p,0\n0,q,1\n")
    table = cf.EmbeddingTable.from_csv(path, label_column="who", normalize=False)
    assert table.identities == ("p", "q") and table.dimension == 2
    np.testing.assert_array_equal(table.rows("q"), [[0.0, 1.0]])


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("identity,x0\na,1\nb,one\n", "'one' is not a number"),
        ("identity,x0,x1\na,1,2\nb,1\n", "line 3 has 2 fields; the header has 3"),
        ("", "is empty"),
        ("identity,x0,x1\n", "has a header but no data rows"),
        ("identity,x0\na,1\na,2\n", "at least 2 identities"),
        ("name,x0\na,1\nb,2\n", "label_column must name a column"),
        ("identity,x0\na,1\nb,inf\n", "is not finite"),
        ("identity,x0\na,1\n,2\n", "the 'identity' cell is empty"),
        ("identity,x0,x0\na,1,2\nb,2,1\n", "must not repeat a column name"),
        ("identity\na\nb\n", "at least one coordinate column"),
        ("identity,x0\na,\nb,0\n", "no usable rows"),
    ],
)
def test_from_csv_bad_files_raise(tmp_path: Path, text: str, fragment: str) -> None:
    """Malformed tables raise DataError with a message naming the problem."""
    with pytest.raises(DataError) as info:
        cf.EmbeddingTable.from_csv(write(tmp_path, text))
    assert fragment in str(info.value)


def test_from_csv_missing_and_binary_files(tmp_path: Path) -> None:
    """A missing file or non-UTF-8 bytes raise DataError, not OSError or UnicodeError."""
    with pytest.raises(DataError, match="cannot open table"):
        cf.EmbeddingTable.from_csv(tmp_path / "nope.csv")
    path = tmp_path / "binary.csv"
    path.write_bytes(b"identity,x0\n\xff\xfe,1\n")
    with pytest.raises(DataError, match="not UTF-8"):
        cf.EmbeddingTable.from_csv(path)


# -- from_arrays -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "vectors", "fragment"),
    [
        (["a", "b"], [1.0, 2.0], "2-D array"),
        (["a"], [[1.0], [2.0]], "one entry per row"),
        (["a", "b"], [[1.0], [math.inf]], "must be finite"),
        (["a", "b"], [[1.0], ["x"]], "conversion failed"),
        (["a", "a"], [[1.0], [2.0]], "at least 2 identities"),
        (["a", "b"], np.zeros((2, 0)), "at least one column"),
    ],
)
def test_from_arrays_bad_input_raises(labels: list[str], vectors: object, fragment: str) -> None:
    """Bad shapes, infinities, text and a single identity raise DataError."""
    with pytest.raises(DataError) as info:
        cf.EmbeddingTable.from_arrays(labels, vectors)  # type: ignore[arg-type]
    assert fragment in str(info.value)


def test_from_arrays_drops_nan_rows_and_keeps_order() -> None:
    """NaN rows are dropped, labels are sorted, rows keep their input order within an identity."""
    vectors = [[1.0, 0.0], [np.nan, 1.0], [0.0, 2.0], [3.0, 0.0]]
    table = cf.EmbeddingTable.from_arrays(["z", "z", "a", "z"], vectors)
    assert table.identities == ("a", "z") and table.n_rows == 3
    np.testing.assert_array_equal(table.rows("z"), [[1.0, 0.0], [3.0, 0.0]])
    assert table.cleaning.dropped[0].reason == "missing value"


def test_rows_are_read_only_copies() -> None:
    """Table rows cannot be modified, and changing the input array does not change the table."""
    source = np.array([[1.0, 0.0], [0.0, 1.0]])
    table = cf.EmbeddingTable.from_arrays(["a", "b"], source)
    source[0, 0] = 7.0
    rows = table.rows("a")
    assert rows[0, 0] == 1.0
    with pytest.raises(ValueError, match="read-only"):
        rows[0, 0] = 5.0


def test_unknown_identity_raises(make_table: TableFactory) -> None:
    """Asking for an identity not in the table raises DataError naming it."""
    with pytest.raises(DataError, match="identity 'ghost' is not in this table"):
        make_table().rows("ghost")
    with pytest.raises(DataError, match="ghost"):
        make_table().subset(["id0", "ghost"])


# -- fingerprints ------------------------------------------------------------------------------


def test_fingerprint_is_stable_and_content_sensitive(rng: np.random.Generator) -> None:
    """Same content gives the same fingerprint (any input order); one changed value changes it."""
    vectors = rng.standard_normal((6, 3))
    labels = ["a", "a", "a", "b", "b", "b"]
    base = cf.EmbeddingTable.from_arrays(labels, vectors)
    again = cf.EmbeddingTable.from_arrays(labels, vectors.copy())
    interleaved = cf.EmbeddingTable.from_arrays(
        ["b", "a", "b", "a", "b", "a"], vectors[[3, 0, 4, 1, 5, 2]]
    )
    assert base.fingerprint == again.fingerprint == interleaved.fingerprint
    assert len(base.fingerprint) == 64
    nudged = vectors.copy()
    nudged[4, 1] = np.nextafter(nudged[4, 1], np.inf)
    assert cf.EmbeddingTable.from_arrays(labels, nudged).fingerprint != base.fingerprint
    relabelled = cf.EmbeddingTable.from_arrays(["a", "a", "a", "c", "c", "c"], vectors)
    assert relabelled.fingerprint != base.fingerprint
    swapped_rows = cf.EmbeddingTable.from_arrays(labels, vectors[[1, 0, 2, 3, 4, 5]])
    assert swapped_rows.fingerprint != base.fingerprint


def test_fingerprint_known_value() -> None:
    """The fingerprint of a fixed tiny table does not change between library versions."""
    table = cf.EmbeddingTable.from_arrays(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    assert table.fingerprint == "f0e025d8cbfd440971f44e7a508fad1474e7cabd93657cb7cb013bde3328171a"


def test_table_pickle_round_trip(make_table: TableFactory) -> None:
    """A table survives pickle with its fingerprint, identities and rows."""
    table = make_table((5, 6))
    back = pickle.loads(pickle.dumps(table))
    assert back.fingerprint == table.fingerprint and back.identities == table.identities
    np.testing.assert_array_equal(back.rows("id1"), table.rows("id1"))


# -- split -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dev_fraction", [0.3, 0.5, 0.7, 0.95])
def test_split_counts_use_the_floor(make_table: TableFactory, dev_fraction: float) -> None:
    """Each identity gets floor(dev_fraction * n) development rows and the rest are reserved."""
    sizes = (20, 23, 37)
    table = make_table(sizes)
    split = table.split(dev_fraction=dev_fraction, seed=3)
    for i, n in enumerate(sizes):
        n_dev = math.floor(dev_fraction * n)
        assert split.development.counts[f"id{i}"] == n_dev
        assert split.reserved.counts[f"id{i}"] == n - n_dev
    assert (split.dev_fraction, split.seed, split.table_fingerprint) == (
        dev_fraction, 3, table.fingerprint
    )


def test_split_partitions_each_identity(make_table: TableFactory) -> None:
    """Development rows are a subset of the identity's rows and no row is used twice."""
    table = make_table((25, 25))
    split = table.split(dev_fraction=0.6, seed=1)
    for ident in table.identities:
        all_rows = {r.tobytes() for r in table.rows(ident)}
        dev_rows = [r.tobytes() for r in split.development.rows(ident)]
        assert len(set(dev_rows)) == len(dev_rows) and set(dev_rows) <= all_rows


def test_split_is_deterministic_in_the_seed(make_table: TableFactory) -> None:
    """The same seed rebuilds the same split; another seed gives another reserved fingerprint."""
    table = make_table((30, 30))
    first, again = table.split(0.5, seed=7), table.split(0.5, seed=7)
    other = table.split(0.5, seed=8)
    assert first.reserved.fingerprint == again.reserved.fingerprint
    assert first.development.fingerprint == again.development.fingerprint
    assert first.reserved.development_fingerprint == first.development.fingerprint
    assert other.reserved.fingerprint != first.reserved.fingerprint


@pytest.mark.parametrize("dev_fraction", [0.0, 1.0, -0.5, True, "0.5", math.nan])
def test_split_refuses_bad_fractions(make_table: TableFactory, dev_fraction: object) -> None:
    """dev_fraction must be a number in (0, 1)."""
    with suppress_type_checks(), pytest.raises(ParameterError, match=r"dev_fraction must be a number"):
        make_table((10, 10)).split(dev_fraction=dev_fraction, seed=0)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad_seed", [-1, 1.5, True])
def test_split_refuses_bad_seeds(make_table: TableFactory, bad_seed: object) -> None:
    """A split seed must be a non-negative integer."""
    with suppress_type_checks(), pytest.raises(ParameterError, match="seed must be a non-negative"):
        make_table((10, 10)).split(dev_fraction=0.5, seed=bad_seed)  # type: ignore[arg-type]


def test_split_refuses_tiny_identities(make_table: TableFactory) -> None:
    """An identity that would get no development or no reserved row raises DataError naming it."""
    with pytest.raises(DataError, match=r"id1 \(1 rows\)"):
        make_table((10, 1)).split(dev_fraction=0.5, seed=0)


def test_reserved_split_is_opaque(make_table: TableFactory) -> None:
    """A ReservedSplit exposes counts and fingerprints but no rows, and cannot be built directly."""
    reserved = make_table((10, 10)).split(0.5, seed=0).reserved
    public = {n for n in dir(reserved) if not n.startswith("_")}
    assert public == {
        "counts", "dev_fraction", "development_fingerprint", "fingerprint", "seed", "spent",
        "table_fingerprint",
    }
    assert "10 rows" in repr(reserved) and "spent" not in repr(reserved)
    with pytest.raises(ProtocolError, match=r"created only by EmbeddingTable.split"):
        cf.ReservedSplit()


def test_reserved_split_refuses_pickle(make_table: TableFactory) -> None:
    """Pickling a ReservedSplit (or a DevTestSplit holding one) raises ProtocolError."""
    split = make_table((10, 10)).split(0.5, seed=0)
    with pytest.raises(ProtocolError, match="cannot be pickled"):
        pickle.dumps(split.reserved)
    with pytest.raises(ProtocolError, match="cannot be pickled"):
        pickle.dumps(split)
    assert copy.copy(split.reserved) is split.reserved
    assert copy.deepcopy(split.reserved) is split.reserved


# -- sample_pairs ------------------------------------------------------------------------------


def test_sample_pairs_known_value() -> None:
    """The documented example gives the documented pairs."""
    assert cf.sample_pairs(["a", "b", "c"], count=2, seed=0) == [
        cf.Pair("b", "c"),
        cf.Pair("a", "b"),
    ]


def test_sample_pairs_is_deterministic_and_distinct() -> None:
    """Pairs are distinct, ordered as in the input, and identical for the same seed."""
    ids = [f"id{i:02d}" for i in range(20)]
    first = cf.sample_pairs(ids, count=100, seed=0)
    assert first == cf.sample_pairs(ids, count=100, seed=0)
    assert len({p.as_tuple() for p in first}) == 100
    assert all(ids.index(p.a) < ids.index(p.b) for p in first)
    assert first != cf.sample_pairs(ids, count=100, seed=1)
    everything = cf.sample_pairs(ids, count=190, seed=5)
    assert len(set(everything)) == 190
    # A prefix property: the first k pairs of a seed do not depend on count.
    assert cf.sample_pairs(ids, count=10, seed=0) == first[:10]


def test_sample_pairs_count_above_the_pairs_gives_all_of_them() -> None:
    """A count above the number of pairs returns every pair, in the order count=total gives."""
    ids = [f"id{i}" for i in range(10)]
    everything = cf.sample_pairs(ids, count=45, seed=3)
    assert cf.sample_pairs(ids, count=100, seed=3) == everything
    assert len(set(everything)) == 45


@pytest.mark.parametrize(
    ("identities", "count", "pair_seed", "error", "fragment"),
    [
        (["a", "a", "b"], 1, 0, DataError, "must be distinct"),
        (["a"], 1, 0, DataError, "at least 2 identities"),
        (["a", "b"], 0, 0, ParameterError, "count must be a positive integer"),
        (["a", "b"], 1, -1, ParameterError, "seed must be a non-negative integer"),
    ],
)
def test_sample_pairs_bad_input_raises(
    identities: list[str], count: int, pair_seed: int, error: type[Exception], fragment: str
) -> None:
    """Too many pairs, repeated labels, one identity or bad integers raise with the constraint."""
    with pytest.raises(error) as info:
        cf.sample_pairs(identities, count=count, seed=pair_seed)
    assert fragment in str(info.value)
