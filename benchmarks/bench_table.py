"""Speed of building, splitting and keying embedding tables (``certify.data``).

Times ``EmbeddingTable.from_arrays(labels, vectors, normalize=False)``, ``table.split(0.5, seed)``
and the reserved split's row keys against a baseline: the previous implementation, copied below
(per-row ``hypot.reduce`` norms, ``isnan``/``isinf`` passes, a dict of row bytes for duplicates,
per-identity copies, ``np.unique`` over row bytes for repeats, one concatenated payload per row
key). Both run in this process on the same data; the baseline's cleaning report, fingerprints and
reserved rows are checked equal to the library's before timing. Row keys are defined differently
since the ledger recognizes rows by content (label-free keys of the raw rows, and the development
rows' keys too, docs/trust.md): the baseline keys the reserved rows as before, the library keys
reserved and development rows, as a spend records them.

Shapes: 80 identities x 30 / 100 / 300 rows x 512 columns of Gaussian data, and 80 x 100 rows
drawn from 400 distinct integer-valued vectors (many exact repeats).

Run: .venv/bin/python benchmarks/bench_table.py
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from certify.data import NORM_FLOOR, EmbeddingTable

IDENTITIES = 80
DIMENSION = 512
REPEATS = 5
Report = tuple[int, int, tuple[tuple[int, str, str], ...], object, object]

# -- baseline: the previous implementation -----------------------------------------------------


def old_fingerprint(parts: Iterable[tuple[str, NDArray[np.float64]]], domain: str) -> str:
    """SHA-256 over labels, shapes and little-endian float64 bytes, in the given order."""
    h = hashlib.sha256(domain.encode())
    for label, rows in parts:
        encoded = label.encode("utf-8")
        h.update(len(encoded).to_bytes(8, "little"))
        h.update(encoded)
        h.update(np.int64(rows.shape[0]).tobytes() + np.int64(rows.shape[1]).tobytes())
        h.update(np.ascontiguousarray(rows, dtype="<f8").tobytes())
    return h.hexdigest()


def old_readonly(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """A read-only C-contiguous float64 copy."""
    out = np.array(a, dtype=np.float64, order="C", copy=True)
    out.setflags(write=False)
    return out


def old_duplicates(
    labels: list[str], array: NDArray[np.float64]
) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, ...], ...]]:
    """Identical vectors repeated within an identity, and shared across identities."""
    seen: dict[bytes, list[str]] = defaultdict(list)
    contiguous = np.ascontiguousarray(array)
    for lab, row in zip(labels, contiguous, strict=True):
        seen[row.tobytes()].append(lab)
    within: dict[str, int] = defaultdict(int)
    across: list[tuple[str, ...]] = []
    for owners in seen.values():
        if len(owners) < 2:
            continue
        distinct = sorted(set(owners))
        for lab in distinct:
            extra = owners.count(lab) - 1
            if extra > 0:
                within[lab] += extra
        if len(distinct) > 1:
            across.append(tuple(distinct))
    return tuple(sorted(within.items())), tuple(sorted(across))


class OldTable:
    """The previous table construction (normalize=False path), fingerprint and repeat flags."""

    def __init__(self, rows: dict[str, NDArray[np.float64]], report: Report) -> None:
        self.identities = tuple(sorted(rows))
        self.rows = {k: old_readonly(rows[k]) for k in self.identities}
        self.report = report
        self.fingerprint = old_fingerprint(((k, self.rows[k]) for k in self.identities), "certify.table.v1")

    @classmethod
    def from_arrays(cls, labels: object, vectors: NDArray[np.float64]) -> OldTable:
        """Old ``from_arrays`` + ``_clean`` without normalization."""
        array = np.asarray(vectors, dtype=np.float64)
        label_list = [str(x) for x in np.asarray(labels, dtype=object).ravel()]
        if np.isinf(array).any():
            raise ValueError("infinite value")
        missing = np.asarray(np.isnan(array).any(axis=1), dtype=bool)
        norms = np.hypot.reduce(np.nan_to_num(array), axis=1)
        tiny = ~missing & (norms <= NORM_FLOOR)
        dropped = []
        for i in np.flatnonzero(missing | tiny).tolist():
            reason = "missing value" if bool(missing[i]) else f"norm <= {NORM_FLOOR:g}"
            dropped.append((i, label_list[i], reason))
        keep = ~(missing | tiny)
        kept = array[keep]
        kept_labels = [lab for lab, k in zip(label_list, keep, strict=True) if k]
        within, across = old_duplicates(kept_labels, kept)
        groups: dict[str, list[int]] = defaultdict(list)
        for j, lab in enumerate(kept_labels):
            groups[lab].append(j)
        rows = {lab: kept[idx] for lab, idx in groups.items()}
        return cls(rows, (len(label_list), int(keep.sum()), tuple(dropped), within, across))

    def repeated_rows(self) -> dict[str, NDArray[np.bool_]]:
        """Per identity, which rows hold a vector occurring more than once in the table."""
        stacked = np.ascontiguousarray(np.vstack([self.rows[k] for k in self.identities]))
        keys = stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))).ravel()
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        flags = counts[inverse.ravel()] > 1
        out: dict[str, NDArray[np.bool_]] = {}
        start = 0
        for k in self.identities:
            n = self.rows[k].shape[0]
            out[k] = flags[start : start + n]
            start += n
        return out

    def split(self, dev_fraction: float, seed: int) -> OldSplit:
        """Old ``split``: per-identity shuffles, copies, three fingerprints."""
        rng = np.random.default_rng(int(seed))
        repeated = self.repeated_rows()
        shared: dict[str, NDArray[np.bool_]] = {}
        dev: dict[str, NDArray[np.float64]] = {}
        test: dict[str, NDArray[np.float64]] = {}
        for name in self.identities:
            rows = self.rows[name]
            n = rows.shape[0]
            n_dev = math.floor(float(dev_fraction) * n)
            perm = rng.permutation(n)
            dev[name] = rows[np.sort(perm[:n_dev])]
            test[name] = rows[np.sort(perm[n_dev:])]
            shared[name] = repeated[name][np.sort(perm[n_dev:])]
        development = OldTable(dev, self.report)
        return OldSplit(test, development.fingerprint, self.fingerprint, shared)


class OldSplit:
    """The previous reserved split: frozen copies, fingerprint, row keys."""

    def __init__(
        self,
        rows: dict[str, NDArray[np.float64]],
        development_fingerprint: str,
        table_fingerprint: str,
        repeated: dict[str, NDArray[np.bool_]],
    ) -> None:
        self.rows = {k: old_readonly(v) for k, v in sorted(rows.items())}
        self.repeated = {k: repeated[k] for k in self.rows}
        self.fingerprint = old_fingerprint(self.rows.items(), "certify.reserved.v1")
        self.development_fingerprint = development_fingerprint
        self.table_fingerprint = table_fingerprint

    def row_keys(self) -> list[str]:
        """Old ``_row_keys``."""
        keys: list[str] = []
        for label, rows in self.rows.items():
            seen: dict[bytes, int] = {}
            tag = label.encode("utf-8") + b"\x00"
            for row, repeated in zip(rows, self.repeated[label].tolist(), strict=True):
                data = row.astype("<f8").tobytes()
                if repeated:
                    count = seen.get(data, 0)
                    seen[data] = count + 1
                    scope = b"s" + self.table_fingerprint.encode()
                    payload = scope + tag + data + count.to_bytes(8, "little")
                else:
                    payload = b"u" + tag + data
                keys.append(hashlib.sha256(payload).hexdigest()[:32])
        return keys


# -- timing -------------------------------------------------------------------------------------


def make(
    rows_per_identity: int, discrete: bool, seed: int = 0
) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """Labels and vectors for one benchmark shape."""
    rng = np.random.default_rng(seed)
    labels = np.repeat([f"id{i:03d}" for i in range(IDENTITIES)], rows_per_identity)
    n = labels.size
    if discrete:
        pool = rng.integers(-3, 4, size=(400, DIMENSION)).astype(np.float64)
        return labels, pool[rng.integers(0, 400, size=n)]
    return labels, rng.normal(size=(n, DIMENSION))


def best_of(fn: Callable[[], object], repeats: int = REPEATS) -> float:
    """Minimum wall time of ``repeats`` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def check_same(labels: NDArray[np.str_], vectors: NDArray[np.float64]) -> None:
    """The library and the baseline agree on report, fingerprints, reserved rows and row keys."""
    new = EmbeddingTable.from_arrays(labels, vectors, normalize=False)
    old = OldTable.from_arrays(labels, vectors)
    c = new.cleaning
    dropped = tuple((d.row, d.identity, d.reason) for d in c.dropped)
    report = (c.rows_read, c.rows_kept, dropped, c.duplicates_within, c.duplicates_across)
    assert report == old.report and new.fingerprint == old.fingerprint
    new_split, old_split = new.split(0.5, seed=3), old.split(0.5, seed=3)
    assert new_split.development.fingerprint == old_split.development_fingerprint
    assert new_split.reserved.fingerprint == old_split.fingerprint
    assert new_split.reserved._row_keys().shape == (len(old_split.row_keys()), 16)


def bench_shape(rows_per_identity: int, discrete: bool) -> None:
    """Print old and new times and their ratio for one data shape."""
    labels, vectors = make(rows_per_identity, discrete)
    check_same(labels, vectors)
    name = f"{rows_per_identity} rows" + (" discrete" if discrete else "")
    old_table = OldTable.from_arrays(labels, vectors)
    new_table = EmbeddingTable.from_arrays(labels, vectors, normalize=False)

    def old_all() -> None:
        OldTable.from_arrays(labels, vectors).split(0.5, seed=3).row_keys()

    def new_all() -> None:
        table = EmbeddingTable.from_arrays(labels, vectors, normalize=False)
        reserved = table.split(0.5, seed=3).reserved
        reserved._row_keys()
        reserved._development_keys()

    steps: list[tuple[str, Callable[[], object], Callable[[], object]]] = [
        (
            "from_arrays",
            lambda: OldTable.from_arrays(labels, vectors),
            lambda: EmbeddingTable.from_arrays(labels, vectors, normalize=False),
        ),
        ("split", lambda: old_table.split(0.5, seed=3), lambda: new_table.split(0.5, seed=3)),
        ("build+split+row keys", old_all, new_all),
    ]
    for step, old_fn, new_fn in steps:
        t_old, t_new = best_of(old_fn), best_of(new_fn)
        print(f"{name:>17} {step:>22} {t_old * 1e3:9.1f} {t_new * 1e3:9.1f} {t_old / t_new:7.2f}")


def main() -> None:
    print(f"{IDENTITIES} identities x rows x {DIMENSION} columns; best of {REPEATS}; ratio = old / new")
    print(f"{'data':>17} {'step':>22} {'old ms':>9} {'new ms':>9} {'ratio':>7}")
    for rows_per_identity, discrete in ((30, False), (100, False), (300, False), (100, True)):
        bench_shape(rows_per_identity, discrete)
    # SHA-256 of the row bytes is fixed by the fingerprint definition and bounds the speed-up
    _, vectors = make(100, False)
    t_hash = best_of(lambda: hashlib.sha256(vectors.data).digest())
    print(f"for scale: SHA-256 of one 80 x 100 x 512 float64 array alone takes {t_hash * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
