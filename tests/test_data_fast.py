"""Table construction, fingerprints, splits and row keys against straightforward references.

The library cleans, groups and hashes rows with vectorized shortcuts; each test here recomputes
the documented result row by row (Python loops, ``bytes`` comparisons, ``struct`` packing) and
requires exact equality: cleaning decisions, fingerprints and row keys are stored in ledgers and
records, so no tolerance applies.
"""

from __future__ import annotations

import hashlib
import math
import pickle
import struct

import numpy as np
import pytest

import certify as cf
from certify.data import _rows as cdata_rows
from certify.errors import DataError

Report = tuple[int, int, tuple[tuple[int, str, str], ...], object, object]


# -- references ---------------------------------------------------------------------------------


def _chained_norm(row: np.ndarray) -> float:
    """``np.hypot.reduce`` of one row; overflow to inf (rows near 1.8e308) is expected, not an error."""
    with np.errstate(over="ignore"):
        return float(np.hypot.reduce(row))


def ref_clean(
    labels: list[str], vectors: np.ndarray, normalize: bool = False
) -> tuple[Report, dict[str, list[bytes]]]:
    """Cleaning report and kept rows (as bytes, per identity, input order) row by row.

    The norm decision is the documented one: the chained ``np.hypot.reduce`` of the row, at or
    below 1e-6, evaluated on each row alone.
    """
    dropped = []
    kept: list[tuple[str, np.ndarray]] = []
    for i, (label, row) in enumerate(zip(labels, vectors, strict=True)):
        if any(math.isnan(x) for x in row.tolist()):
            dropped.append((i, label, "missing value"))
        elif _chained_norm(row) <= 1e-6:
            dropped.append((i, label, "norm <= 1e-06"))
        else:
            kept.append((label, row))
    owners: dict[bytes, list[str]] = {}
    for label, row in kept:
        owners.setdefault(struct.pack(f"<{row.size}d", *row.tolist()), []).append(label)
    within: dict[str, int] = {}
    across = []
    for holders in owners.values():
        for label in set(holders):
            if holders.count(label) > 1:
                within[label] = within.get(label, 0) + holders.count(label) - 1
        if len(set(holders)) > 1:
            across.append(tuple(sorted(set(holders))))
    rows: dict[str, list[bytes]] = {}
    for label, row in kept:
        if normalize:
            scaled = row / np.max(np.abs(row))
            row = scaled / np.hypot.reduce(scaled)
        rows.setdefault(label, []).append(struct.pack(f"<{row.size}d", *row.tolist()))
    report = (len(labels), len(kept), tuple(dropped), tuple(sorted(within.items())), tuple(sorted(across)))
    return report, rows


def report_of(table: cf.EmbeddingTable) -> Report:
    """The table's cleaning report as plain tuples."""
    c = table.cleaning
    dropped = tuple((d.row, d.identity, d.reason) for d in c.dropped)
    return (c.rows_read, c.rows_kept, dropped, c.duplicates_within, c.duplicates_across)


def ref_fingerprint(parts: dict[str, list[bytes]], domain: str, dimension: int) -> str:
    """SHA-256 of the documented byte layout, built as one message with ``struct``."""
    message = domain.encode()
    for label in sorted(parts):
        encoded = label.encode("utf-8")
        message += struct.pack("<Q", len(encoded)) + encoded
        message += struct.pack("<qq", len(parts[label]), dimension)
        message += b"".join(parts[label])
    return hashlib.sha256(message).hexdigest()


def ref_row_keys(raw: dict[str, list[bytes]], dimension: int) -> dict[str, list[bytes]]:
    """Row keys of every row, per identity, row by row from the raw rows (docstring of data._keys).

    Content: the raw row's little-endian float64 bytes, with ``-0.0`` as ``0.0``. A row unique in its
    identity with a coordinate that is not whole is keyed by the hash of its content; other rows
    by their content, copy number and the hash of the sorted content hashes of the identity.
    """
    out: dict[str, list[bytes]] = {}
    for label, rows in raw.items():
        digests, whole = [], []
        for packed in rows:
            row = np.array(struct.unpack(f"<{dimension}d", packed))
            content = [float(v) + 0.0 for v in row.tolist()]
            payload = b"certify.row-content.v2\x00" + struct.pack(f"<{dimension}d", *content)
            digests.append(hashlib.sha256(payload).digest())
            whole.append(all(v == math.floor(v) for v in row.tolist()))
        signature = hashlib.sha256(b"".join(sorted(digests))).digest()
        keys, copies = [], {}
        for digest, integral in zip(digests, whole, strict=True):
            if integral or digests.count(digest) > 1:
                number = copies.get(digest, 0)
                copies[digest] = number + 1
                payload = b"certify.row-scoped.v2\x00" + signature + digest + struct.pack("<Q", number)
                keys.append(hashlib.sha256(payload).digest()[:16])
            else:
                keys.append(digest[:16])
        out[label] = keys
    return out


def key_bytes(keys: np.ndarray) -> list[bytes]:
    """An ``(n, 16)`` key array as a list of 16-byte strings."""
    return [bytes(k) for k in np.asarray(keys)]


def ref_split(
    rows: dict[str, list[bytes]], dev_fraction: float, seed: int
) -> tuple[dict[str, list[bytes]], dict[str, list[bytes]]]:
    """The documented split: per identity in sorted order, one permutation; floor(f n) dev rows."""
    rng = np.random.default_rng(seed)
    dev, test = {}, {}
    for label in sorted(rows):
        n = len(rows[label])
        perm = rng.permutation(n)
        n_dev = math.floor(dev_fraction * n)
        dev[label] = [rows[label][i] for i in sorted(perm[:n_dev].tolist())]
        test[label] = [rows[label][i] for i in sorted(perm[n_dev:].tolist())]
    return dev, test


def table_bytes(table: cf.EmbeddingTable) -> dict[str, list[bytes]]:
    """The table's rows as bytes, per identity."""
    return {k: [r.astype("<f8").tobytes() for r in table.rows(k)] for k in table.identities}


def awkward_data(rng: np.random.Generator, d: int = 5) -> tuple[list[str], np.ndarray]:
    """Rows with duplicates within and across identities, NaN rows, tiny rows and huge rows."""
    names = ["b", "a", "c", "é", "a b"]
    n = 90
    labels = [names[i] for i in rng.integers(0, len(names), size=n)]
    vectors = rng.standard_normal((n, d))
    pool = rng.standard_normal((4, d))
    for i in rng.choice(n, size=30, replace=False):
        vectors[i] = pool[rng.integers(0, 4)]  # repeats, within and across identities
    vectors[0] = vectors[1] = vectors[2] = pool[0]
    labels[0] = labels[1] = "b"
    labels[2] = "c"
    vectors[3, 2] = np.nan
    vectors[4] = np.nan
    vectors[5] = 0.0
    vectors[6] = -0.0
    vectors[7] = 0.0
    vectors[7, 0] = -0.0  # -0.0 and 0.0 have different bytes: not a duplicate of row 5
    floor = 1e-6
    vectors[8] = 0.0
    vectors[8, 1] = floor  # norm exactly at the floor: dropped
    vectors[9] = 0.0
    vectors[9, 1] = np.nextafter(floor, 1.0)  # just above: kept
    vectors[10] = 0.0
    vectors[10, 3] = np.nextafter(floor, 0.0)
    vectors[11] = floor / math.sqrt(d)  # chained hypot lands within a few ulps of the floor
    vectors[12] = np.nextafter(floor / math.sqrt(d), 1.0)
    vectors[13] = np.nextafter(floor / math.sqrt(d), 0.0)
    vectors[14] = 1e300 * rng.standard_normal(d)  # squares overflow; kept
    vectors[15] = 1.7e308  # norm overflows to inf; kept
    vectors[16] = 1e-160  # every square underflows; norm ~2e-160, dropped
    vectors[17] = 5e-324  # subnormal
    vectors[18] = [1e-7, 1e300, -1e-300, 0.0, 3.0][:d]  # mixed magnitudes
    vectors[19] = vectors[14]  # a huge duplicate
    vectors[20] = 1e-7  # norm ~2.2e-7: dropped although no coordinate is zero
    return labels, vectors


# -- cleaning -----------------------------------------------------------------------------------


@pytest.mark.parametrize("normalize", [False, True])
def test_cleaning_matches_row_by_row_reference(rng: np.random.Generator, normalize: bool) -> None:
    """Dropped rows, duplicates within/across, kept rows and their order equal the reference."""
    labels, vectors = awkward_data(rng)
    table = cf.EmbeddingTable.from_arrays(labels, vectors, normalize=normalize)
    report, rows = ref_clean(labels, vectors, normalize)
    assert report_of(table) == report
    assert table_bytes(table) == rows
    reasons = {row: reason for row, _, reason in report[2]}
    assert reasons[8] == reasons[10] == reasons[16] == reasons[20] == "norm <= 1e-06"
    assert 9 not in reasons and 14 not in reasons and 15 not in reasons and 18 not in reasons
    assert report[3] and report[4]  # the data do exercise both kinds of duplicates


def test_cleaning_near_the_floor_follows_chained_hypot(rng: np.random.Generator) -> None:
    """Rows whose norm is within a few ulps of 1e-6 are decided exactly as hypot.reduce decides."""
    d = 7
    base = rng.standard_normal((60, d))
    base /= np.hypot.reduce(base, axis=1)[:, None]
    vectors = base * 1e-6
    for k in range(60):  # nudge each row by -30..29 ulps in its first coordinate
        steps = k - 30
        for _ in range(abs(steps)):
            vectors[k, 0] = np.nextafter(vectors[k, 0], np.inf if steps > 0 else -np.inf)
    decisions = np.hypot.reduce(vectors, axis=1) <= 1e-6
    assert decisions.any() and not decisions.all()  # both sides of the floor occur
    labels = ["x", "y"] * 30 + ["x", "y"]
    vectors = np.vstack([vectors, np.eye(d)[:2]])  # two rows that always survive
    table = cf.EmbeddingTable.from_arrays(labels, vectors)
    dropped = {d_.row for d_ in table.cleaning.dropped}
    assert dropped == set(np.flatnonzero(decisions).tolist())


def test_cleaning_with_many_repeats_matches_reference(rng: np.random.Generator) -> None:
    """Discrete data (rows drawn from few distinct vectors) give the reference duplicate report."""
    pool = rng.integers(-1, 2, size=(12, 4)).astype(float)
    labels = [f"id{i}" for i in rng.integers(0, 6, size=300)]
    vectors = pool[rng.integers(0, 12, size=300)]
    table = cf.EmbeddingTable.from_arrays(labels, vectors)
    report, rows = ref_clean(labels, vectors)
    assert report_of(table) == report and table_bytes(table) == rows


def test_hash_collisions_do_not_change_grouping(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a row hash that maps every row to 0, grouping falls back to exact byte comparison."""
    labels, vectors = awkward_data(rng)
    expected = cf.EmbeddingTable.from_arrays(labels, vectors)
    split = expected.split(0.5, seed=4)

    def constant(words: np.ndarray, multipliers: np.ndarray) -> np.ndarray:
        return np.zeros(words.shape[0], dtype=np.uint64)

    monkeypatch.setattr(cdata_rows, "_row_hash", constant)
    table = cf.EmbeddingTable.from_arrays(labels, vectors)
    report, _ = ref_clean(labels, vectors)
    assert report_of(table) == report == report_of(expected)
    again = table.split(0.5, seed=4)
    assert key_bytes(again.reserved._row_keys()) == key_bytes(split.reserved._row_keys())


def test_infinite_value_error_names_the_first_one(rng: np.random.Generator) -> None:
    """The first infinite coordinate in row-major order is named, past NaN and overflowing rows."""
    vectors = rng.standard_normal((6, 3))
    vectors[1] = 1e200  # finite, but its sum of squares overflows
    vectors[2, 0] = np.nan
    vectors[2, 2] = -np.inf
    vectors[4, 1] = np.inf
    with pytest.raises(DataError, match=r"row 2, column 2 is -inf"):
        cf.EmbeddingTable.from_arrays(list("aabbcc"), vectors)
    vectors[2, 2] = 0.0
    with pytest.raises(DataError, match=r"row 4, column 1 is inf"):
        cf.EmbeddingTable.from_arrays(list("aabbcc"), vectors)


# -- fingerprints, splits and row keys -------------------------------------------------------------


@pytest.mark.parametrize("normalize", [False, True])
def test_fingerprints_match_independent_layout(rng: np.random.Generator, normalize: bool) -> None:
    """Table, development and reserved fingerprints equal SHA-256 of the layout built with struct."""
    labels, vectors = awkward_data(rng)
    table = cf.EmbeddingTable.from_arrays(labels, vectors, normalize=normalize)
    rows = table_bytes(table)
    assert table.fingerprint == ref_fingerprint(rows, "certify.table.v1", 5)
    split = table.split(0.5, seed=11)
    dev, test = ref_split(rows, 0.5, 11)
    assert split.development.fingerprint == ref_fingerprint(dev, "certify.table.v1", 5)
    assert split.reserved.fingerprint == ref_fingerprint(test, "certify.reserved.v1", 5)
    assert split.reserved.development_fingerprint == split.development.fingerprint


def test_fingerprint_of_a_subset_and_a_pickled_table(rng: np.random.Generator) -> None:
    """Tables rebuilt by subset() and pickle hash the same layout as tables built from arrays."""
    labels, vectors = awkward_data(rng)
    table = cf.EmbeddingTable.from_arrays(labels, vectors)
    rows = table_bytes(table)
    sub = table.subset(["é", "a"])
    assert sub.fingerprint == ref_fingerprint({k: rows[k] for k in ("a", "é")}, "certify.table.v1", 5)
    assert pickle.loads(pickle.dumps(table)).fingerprint == table.fingerprint


@pytest.mark.parametrize("normalize", [False, True])
def test_split_rows_and_row_keys_match_reference(rng: np.random.Generator, normalize: bool) -> None:
    """Reserved rows follow the documented shuffle; reserved and development keys match the reference.

    Keys come from the raw rows: with or without normalization they are the same, although
    normalizing makes ``[1, 0, ...]`` and ``[2, 0, ...]`` equal rows.
    """
    labels, vectors = awkward_data(rng)
    labels += ["a", "a", "b"]
    vectors = np.vstack([vectors, [[1, 0, 0, 0, 0], [2, 0, 0, 0, 0], [3, 0, 0, 0, 0]]])
    table = cf.EmbeddingTable.from_arrays(labels, vectors, normalize=normalize)
    rows = table_bytes(table)
    _, raw = ref_clean(labels, vectors, normalize=False)
    keys = ref_row_keys(raw, 5)
    for seed in (0, 1, 2):
        split = table.split(0.5, seed=seed)
        dev, test = ref_split(rows, 0.5, seed)
        assert table_bytes(split.development) == dev
        reserved = split.reserved
        assert {k: [r.tobytes() for r in reserved._take(k)] for k in reserved.counts} == test
        dev_keys, test_keys = ref_split({k: keys[k] for k in sorted(keys)}, 0.5, seed)
        assert key_bytes(reserved._row_keys()) == [b for k in sorted(test_keys) for b in test_keys[k]]
        assert key_bytes(reserved._development_keys()) == [b for k in sorted(dev_keys) for b in dev_keys[k]]


def test_row_keys_of_discrete_data_match_reference(rng: np.random.Generator) -> None:
    """Whole-number rows get numbered keys scoped by their identity's multiset, as defined."""
    pool = np.eye(3) * 4.0
    labels = [f"id{i}" for i in rng.integers(0, 3, size=120)]
    vectors = pool[rng.integers(0, 3, size=120)]
    vectors[0] = [1.5, 2.0, 3.0]  # one row keyed by its content alone
    table = cf.EmbeddingTable.from_arrays(labels, vectors)
    _, raw = ref_clean(labels, vectors)
    keys = ref_row_keys(raw, 3)
    reserved = table.split(0.6, seed=5).reserved
    _, test_keys = ref_split({k: keys[k] for k in sorted(keys)}, 0.6, 5)
    assert key_bytes(reserved._row_keys()) == [b for k in sorted(test_keys) for b in test_keys[k]]


def test_row_keys_ignore_labels_other_identities_and_normalization(rng: np.random.Generator) -> None:
    """Renamed labels, an added identity, normalization and another split give the same row keys."""
    labels, vectors = awkward_data(rng)
    base = cf.EmbeddingTable.from_arrays(labels, vectors)
    renamed = cf.EmbeddingTable.from_arrays([f"p_{x}" for x in labels], vectors, normalize=True)
    extra = cf.EmbeddingTable.from_arrays([*labels, "new", "new"], np.vstack([vectors, vectors[:2]]))
    rows_of = {k: key_bytes(base._row_keys(k)) for k in base.identities}
    for k in base.identities:
        assert key_bytes(renamed._row_keys(f"p_{k}")) == rows_of[k]
        assert key_bytes(extra._row_keys(k)) == rows_of[k]
    every = {b for keys in rows_of.values() for b in keys}
    for seed in (3, 4):
        split = renamed.split(0.5, seed=seed)
        got = key_bytes(split.reserved._row_keys()) + key_bytes(split.reserved._development_keys())
        assert set(got) == every


def test_split_is_deterministic_across_rebuilds(rng: np.random.Generator) -> None:
    """The same table content and seed give the same split, from a fresh, pickled or subset table."""
    labels, vectors = awkward_data(rng)
    first = cf.EmbeddingTable.from_arrays(labels, vectors).split(0.5, seed=9)
    rebuilt = cf.EmbeddingTable.from_arrays(labels, vectors.copy())
    pickled = pickle.loads(pickle.dumps(rebuilt))
    whole = rebuilt.subset(rebuilt.identities)
    for table in (rebuilt, pickled, whole):
        again = table.split(0.5, seed=9)
        assert again.development.fingerprint == first.development.fingerprint
        assert again.reserved.fingerprint == first.reserved.fingerprint
        assert key_bytes(again.reserved._row_keys()) == key_bytes(first.reserved._row_keys())
        assert key_bytes(again.development._row_keys("a")) == key_bytes(first.development._row_keys("a"))
    assert rebuilt.split(0.5, seed=10).reserved.fingerprint != first.reserved.fingerprint


def test_rows_stay_read_only_after_split(rng: np.random.Generator) -> None:
    """Table, development and reserved rows are frozen; the input array stays independent."""
    labels, vectors = awkward_data(rng)
    table = cf.EmbeddingTable.from_arrays(labels, vectors)
    before = table.fingerprint
    vectors[:] = 0.0
    split = table.split(0.5, seed=1)
    for rows in (table.rows("a"), split.development.rows("a"), split.reserved._take("a")):
        with pytest.raises(ValueError, match="read-only"):
            rows[0, 0] = 1.0
    assert table.fingerprint == before == ref_fingerprint(table_bytes(table), "certify.table.v1", 5)
