"""Embedding tables: loading, cleaning (paper Sec. 5.1, App. A), development/reserved splits, pairs."""

from __future__ import annotations

import csv
import hashlib
import math
import numbers
import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, final

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify._core import FrozenMap, Pair
from certify.errors import DataError, ParameterError, ProtocolError

__all__ = [
    "CleaningReport",
    "DevTestSplit",
    "DroppedRow",
    "EmbeddingTable",
    "ReservedSplit",
    "sample_pairs",
]

NORM_FLOOR: Final = 1e-6
"""Rows with Euclidean norm at or below this are dropped (paper Sec. 5.1)."""

_MISSING: Final = frozenset({"", "na", "nan", "null", "none"})


@final
@attrs.frozen
class DroppedRow:
    """A row removed during cleaning, with the reason.

    Attributes
    ----------
    row : int
        Zero-based index of the row among the input data rows (the CSV line is ``row + 2``).
    identity : str
        Its identity label.
    reason : str
        ``"missing value"`` or ``"norm <= 1e-06"``.
    """

    row: int
    identity: str
    reason: str


@final
@attrs.frozen
class CleaningReport:
    """What cleaning did to a table, and duplicates that bear on the iid row model.

    Attributes
    ----------
    rows_read : int
        Data rows in the input.
    rows_kept : int
        Rows kept after cleaning.
    dropped : tuple of DroppedRow
        Every dropped row with its reason; nothing is dropped silently.
    duplicates_within : tuple of (str, int)
        Identities with repeated identical vectors, and how many extra copies.
    duplicates_across : tuple of tuple of str
        Groups of different identities that share an identical vector.
    normalized : bool
        Whether the kept rows were L2-normalized.
    """

    rows_read: int
    rows_kept: int
    dropped: tuple[DroppedRow, ...]
    duplicates_within: tuple[tuple[str, int], ...]
    duplicates_across: tuple[tuple[str, ...], ...]
    normalized: bool

    @property
    def n_dropped_missing(self) -> int:
        """Rows dropped for a missing value."""
        return sum(1 for d in self.dropped if d.reason == "missing value")

    @property
    def n_dropped_zero_norm(self) -> int:
        """Rows dropped for a (near) zero norm."""
        return sum(1 for d in self.dropped if d.reason != "missing value")

    def lines(self) -> list[str]:
        """The report as short human-readable lines."""
        out = [
            f"rows read: {self.rows_read}; kept: {self.rows_kept}; "
            f"dropped for missing values: {self.n_dropped_missing}; "
            f"dropped for norm <= {NORM_FLOOR:g}: {self.n_dropped_zero_norm}",
        ]
        for identity, extra in self.duplicates_within:
            out.append(f"duplicate vectors within identity {identity}: {extra} extra copies")
        for group in self.duplicates_across:
            out.append(f"identical vector under different identities: {', '.join(group)}")
        if self.normalized:
            out.append("rows were L2-normalized after cleaning")
        return out


def _fingerprint(parts: Iterable[tuple[str, NDArray[np.float64]]], domain: str) -> str:
    """SHA-256 over labels, shapes and little-endian float64 bytes, in the given order."""
    h = hashlib.sha256(domain.encode())
    for label, rows in parts:
        encoded = label.encode("utf-8")
        h.update(len(encoded).to_bytes(8, "little"))
        h.update(encoded)
        h.update(np.int64(rows.shape[0]).tobytes() + np.int64(rows.shape[1]).tobytes())
        h.update(np.ascontiguousarray(rows, dtype="<f8").tobytes())
    return h.hexdigest()


def _readonly(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """A read-only C-contiguous float64 copy."""
    out = np.array(a, dtype=np.float64, order="C", copy=True)
    out.setflags(write=False)
    return out


@final
class EmbeddingTable:
    """Rows of embedding vectors labelled by identity, cleaned and ready to audit.

    Build one with :meth:`from_csv` or :meth:`from_arrays`. A table is immutable.

    Attributes
    ----------
    identities : tuple of str
        Identity labels, sorted.
    dimension : int
        Length of each vector.
    cleaning : CleaningReport
        What cleaning dropped and which duplicates it found.
    fingerprint : str
        SHA-256 over labels and row bytes.

    Examples
    --------
    >>> import numpy as np
    >>> t = EmbeddingTable.from_arrays(["a", "a", "b", "b"], np.eye(4), normalize=True)
    >>> t.identities, t.dimension, t.counts["a"]
    (('a', 'b'), 4, 2)
    """

    __slots__ = ("_rows", "cleaning", "dimension", "fingerprint", "identities")

    identities: tuple[str, ...]
    dimension: int
    cleaning: CleaningReport
    fingerprint: str
    _rows: dict[str, NDArray[np.float64]]

    def __init__(self, rows: Mapping[str, NDArray[np.float64]], cleaning: CleaningReport) -> None:
        if len(rows) < 2:
            raise DataError(
                f"a table must hold at least 2 identities to audit; got {len(rows)}. "
                "Check the label column."
            )
        dims = {r.shape[1] for r in rows.values()}
        if len(dims) != 1:
            raise DataError(f"all rows must have one dimension; got {sorted(dims)}.")
        self.identities = tuple(sorted(rows))
        self._rows = {k: _readonly(rows[k]) for k in self.identities}
        self.dimension = dims.pop()
        self.cleaning = cleaning
        self.fingerprint = _fingerprint(
            ((k, self._rows[k]) for k in self.identities), "certify.table.v1"
        )

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls, labels: Sequence[object] | ArrayLike, vectors: ArrayLike, *, normalize: bool = False
    ) -> EmbeddingTable:
        """Build a table from identity labels and a 2-D array of vectors.

        Parameters
        ----------
        labels : sequence
            One identity label per row (converted with ``str``).
        vectors : array_like, shape (n_rows, dimension)
            Real numbers; NaN marks a missing value.
        normalize : bool, default False
            L2-normalize the kept rows (face embeddings, Sec. 5.1). Synthetic benchmark outputs
            are never normalized (Sec. 6.1).

        Returns
        -------
        EmbeddingTable

        Raises
        ------
        DataError
            On shape mismatches, infinite values, fewer than 2 identities, or no usable rows.

        Notes
        -----
        Rows with a missing value (NaN) or with norm <= 1e-6 are dropped and listed in
        :attr:`cleaning`; duplicates are reported, not removed.
        """
        try:
            is_complex = bool(np.iscomplexobj(vectors))
            array = np.asarray(np.real(vectors) if is_complex else vectors, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(
                f"vectors must be a 2-D array of real numbers; conversion failed ({exc})."
            ) from exc
        if is_complex:  # a silent cast would drop the imaginary parts
            raise DataError(
                "vectors must be real numbers; got complex values. Pass the real part explicitly "
                "(np.real(vectors)) if that is what you mean."
            )
        if array.ndim != 2:
            raise DataError(
                f"vectors must be a 2-D array (rows x dimension); got {array.ndim} dimension(s). "
                "Reshape your data, e.g. vectors.reshape(len(labels), -1)."
            )
        label_list = [str(x) for x in np.asarray(labels, dtype=object).ravel()]
        if len(label_list) != array.shape[0]:
            raise DataError(
                f"labels must have one entry per row: {len(label_list)} labels for "
                f"{array.shape[0]} rows."
            )
        if array.shape[1] == 0:
            raise DataError("vectors must have at least one column; got 0.")
        if np.isinf(array).any():
            r, c = np.argwhere(np.isinf(array))[0]
            raise DataError(
                f"vectors must be finite; row {int(r)}, column {int(c)} is {float(array[r, c])!r}. "
                "Fix or remove that row (missing values may be given as NaN)."
            )
        return cls._clean(label_list, array, normalize)

    @classmethod
    def from_csv(
        cls,
        path: str | os.PathLike[str],
        *,
        label_column: str = "identity",
        normalize: bool = True,
    ) -> EmbeddingTable:
        """Read a CSV file with a header: one identity column, every other column a coordinate.

        Parameters
        ----------
        path : str or PathLike
            The file.
        label_column : str, default "identity"
            Name of the column holding identity labels.
        normalize : bool, default True
            L2-normalize kept rows (the paper's treatment of face embeddings).

        Returns
        -------
        EmbeddingTable

        Raises
        ------
        DataError
            If the file is missing, empty, has no data rows, lacks the label column, has ragged
            rows, text or infinite values in a coordinate column, or fewer than 2 identities.

        Notes
        -----
        Empty cells and ``NA``/``NaN``/``null`` mark missing values: such rows are dropped and
        reported in :attr:`cleaning`, as are rows with norm <= 1e-6 (paper Sec. 5.1).
        """
        try:
            handle = open(path, newline="", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise DataError(f"cannot open table {os.fspath(path)!r}: {exc.strerror}.") from exc
        with handle:
            try:
                reader = csv.reader(handle)
                header = next(reader, None)
                if header is None or not any(h.strip() for h in header):
                    raise DataError(
                        f"table {os.fspath(path)!r} is empty; expected a header line naming "
                        f"the {label_column!r} column and the coordinate columns."
                    )
                header = [h.strip() for h in header]
                if label_column not in header:
                    raise DataError(
                        f"label_column must name a column of the header; {label_column!r} is "
                        f"not among {header[:8]!r}{'...' if len(header) > 8 else ''}. "
                        "Pass label_column=... ."
                    )
                if len(set(header)) != len(header):
                    raise DataError("the header must not repeat a column name.")
                li = header.index(label_column)
                width = len(header)
                labels: list[str] = []
                values: list[list[float]] = []
                for line_no, record in enumerate(reader, start=2):
                    if not record or (len(record) == 1 and not record[0].strip()):
                        continue
                    if len(record) != width:
                        raise DataError(
                            f"line {line_no} has {len(record)} fields; the header has {width}. "
                            "Every row needs the label and all coordinates."
                        )
                    label = record[li].strip()
                    if not label:
                        raise DataError(
                            f"line {line_no}: the {label_column!r} cell is empty; every row "
                            "needs an identity label."
                        )
                    row: list[float] = []
                    for ci, cell in enumerate(record):
                        if ci == li:
                            continue
                        text = cell.strip()
                        if text.lower() in _MISSING:
                            row.append(math.nan)
                            continue
                        try:
                            if "_" in text or not text.isascii():
                                # float() also takes "1_0" and non-ASCII digits; a CSV number does not
                                raise ValueError(text)
                            v = float(text)
                        except ValueError:
                            raise DataError(
                                f"line {line_no}, column {header[ci]!r}: {cell!r} is not a "
                                "number. Coordinate columns must be numeric; leave a cell "
                                "empty for a missing value."
                            ) from None
                        if math.isinf(v):
                            raise DataError(
                                f"line {line_no}, column {header[ci]!r}: {cell!r} is not "
                                "finite. Fix the value or leave the cell empty (missing)."
                            )
                        row.append(v)
                    labels.append(label)
                    values.append(row)
            except UnicodeDecodeError as exc:
                raise DataError(
                    f"table {os.fspath(path)!r} is not UTF-8 text ({exc.reason})."
                ) from exc
            except csv.Error as exc:
                raise DataError(f"table {os.fspath(path)!r} is not valid CSV: {exc}.") from exc
        if not values:
            raise DataError(f"table {os.fspath(path)!r} has a header but no data rows.")
        if width < 2:
            raise DataError("the table needs at least one coordinate column besides the label.")
        return cls._clean(labels, np.array(values, dtype=np.float64), normalize)

    @classmethod
    def _clean(cls, labels: list[str], array: NDArray[np.float64], normalize: bool) -> EmbeddingTable:
        """Drop missing and zero-norm rows, find duplicates, normalize when asked."""
        dropped: list[DroppedRow] = []
        missing = np.asarray(np.isnan(array).any(axis=1), dtype=bool)
        # hypot.reduce: a plain sum of squares overflows for coordinates above ~1e154
        norms = np.hypot.reduce(np.nan_to_num(array), axis=1)
        tiny = ~missing & (norms <= NORM_FLOOR)
        for i in np.flatnonzero(missing | tiny).tolist():
            reason = "missing value" if bool(missing[i]) else f"norm <= {NORM_FLOOR:g}"
            dropped.append(DroppedRow(row=i, identity=labels[i], reason=reason))
        keep = ~(missing | tiny)
        if not keep.any():
            raise DataError("no usable rows: every row has a missing value or a zero norm.")
        kept = array[keep]
        kept_labels = [lab for lab, k in zip(labels, keep, strict=True) if k]
        within, across = _duplicates(kept_labels, kept)
        if normalize:
            scaled = kept / np.max(np.abs(kept), axis=1)[:, None]  # norms near 1e308 overflow
            kept = scaled / np.hypot.reduce(scaled, axis=1)[:, None]
        groups: dict[str, list[int]] = defaultdict(list)
        for j, lab in enumerate(kept_labels):
            groups[lab].append(j)
        rows = {lab: kept[idx] for lab, idx in groups.items()}
        report = CleaningReport(
            rows_read=len(labels),
            rows_kept=int(keep.sum()),
            dropped=tuple(dropped),
            duplicates_within=within,
            duplicates_across=across,
            normalized=normalize,
        )
        return cls(rows, report)

    # -- access -------------------------------------------------------------------------------

    def rows(self, identity: str) -> NDArray[np.float64]:
        """The rows of one identity, read-only, shape ``(n_samples, dimension)``.

        Raises
        ------
        DataError
            If the identity is not in the table.
        """
        try:
            return self._rows[identity]
        except KeyError:
            raise DataError(
                f"identity {identity!r} is not in this table ({len(self.identities)} identities, "
                f"e.g. {self.identities[:3]!r})."
            ) from None

    @property
    def counts(self) -> Mapping[str, int]:
        """Number of rows per identity."""
        return FrozenMap({k: int(v.shape[0]) for k, v in self._rows.items()})  # type: ignore[return-value]

    @property
    def n_rows(self) -> int:
        """Total number of rows."""
        return sum(v.shape[0] for v in self._rows.values())

    def subset(self, identities: Iterable[str]) -> EmbeddingTable:
        """A new table with only the named identities (cleaning report carried over)."""
        names = list(dict.fromkeys(identities))
        for name in names:
            self.rows(name)
        return EmbeddingTable({k: self._rows[k] for k in names}, self.cleaning)

    def __repr__(self) -> str:
        return (
            f"EmbeddingTable({len(self.identities)} identities, {self.n_rows} rows, "
            f"dimension {self.dimension}, fingerprint {self.fingerprint[:12]})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        return (EmbeddingTable, (dict(self._rows), self.cleaning))

    def _repeated_rows(self) -> dict[str, NDArray[np.bool_]]:
        """Per identity, which rows hold a vector that occurs more than once in the whole table."""
        stacked = np.ascontiguousarray(np.vstack([self._rows[k] for k in self.identities]))
        keys = stacked.view(np.dtype((np.void, stacked.dtype.itemsize * stacked.shape[1]))).ravel()
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        flags = counts[inverse.ravel()] > 1
        out: dict[str, NDArray[np.bool_]] = {}
        start = 0
        for k in self.identities:
            n = self._rows[k].shape[0]
            out[k] = flags[start : start + n]
            start += n
        return out

    # -- splitting ----------------------------------------------------------------------------

    def split(self, dev_fraction: float, seed: int) -> DevTestSplit:
        """Split every identity's rows into development rows and reserved test rows.

        Parameters
        ----------
        dev_fraction : float
            Fraction of each identity's rows for development, in (0, 1); each identity gets
            ``floor(dev_fraction * n)`` development rows and the rest are reserved.
        seed : int
            Seed of the row shuffle; recorded so the split can be rebuilt from the table.

        Returns
        -------
        DevTestSplit
            ``development`` (an ordinary table) and ``reserved`` (opaque: counts and a
            fingerprint, never its rows).

        Raises
        ------
        ParameterError
            If ``dev_fraction`` is outside (0, 1) or ``seed`` is not a non-negative integer.
        DataError
            If some identity would get no development row or no reserved row.
        """
        if (
            isinstance(dev_fraction, bool)
            or not isinstance(dev_fraction, numbers.Real)
            or not 0.0 < dev_fraction < 1.0
        ):
            raise ParameterError(
                f"dev_fraction must be a number in (0, 1), e.g. 0.7; got {dev_fraction!r}."
            )
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ParameterError(f"seed must be a non-negative integer; got {seed!r}.")
        rng = np.random.default_rng(int(seed))
        repeated = self._repeated_rows()
        shared: dict[str, NDArray[np.bool_]] = {}
        dev: dict[str, NDArray[np.float64]] = {}
        test: dict[str, NDArray[np.float64]] = {}
        short: list[str] = []
        for name in self.identities:
            rows = self._rows[name]
            n = rows.shape[0]
            n_dev = math.floor(float(dev_fraction) * n)
            perm = rng.permutation(n)
            if n_dev < 1 or n_dev > n - 1:
                short.append(f"{name} ({n} rows)")
                continue
            dev[name] = rows[np.sort(perm[:n_dev])]
            test[name] = rows[np.sort(perm[n_dev:])]
            shared[name] = repeated[name][np.sort(perm[n_dev:])]
        if short:
            raise DataError(
                f"too few rows for dev_fraction={dev_fraction}: {len(short)} identities would "
                f"get an empty development or reserved part, e.g. {', '.join(short[:5])}. "
                "Drop them with table.subset(...) or change dev_fraction."
            )
        development = EmbeddingTable(dev, self.cleaning)
        reserved = ReservedSplit._create(
            test,
            development_fingerprint=development.fingerprint,
            table_fingerprint=self.fingerprint,
            dev_fraction=float(dev_fraction),
            seed=int(seed),
            repeated=shared,
        )
        return DevTestSplit(
            development=development,
            reserved=reserved,
            dev_fraction=float(dev_fraction),
            seed=int(seed),
            table_fingerprint=self.fingerprint,
        )


def _duplicates(
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


@final
class ReservedSplit:
    """Reserved test rows: opaque until a sealed protocol evaluates them, once.

    Exposes only a content ``fingerprint``, the per-identity ``counts`` and the fingerprints
    that tie it to its development sibling and source table. It cannot be pickled or copied
    into a second chance: rebuild it from the table with the recorded ``dev_fraction`` and
    ``seed``.

    Attributes
    ----------
    fingerprint : str
        SHA-256 over the reserved labels and row bytes.
    counts : Mapping[str, int]
        Reserved rows per identity.
    development_fingerprint : str
        Fingerprint of the development table split off alongside it.
    table_fingerprint : str
        Fingerprint of the table it was split from.
    dev_fraction : float
        The split's development fraction.
    seed : int
        The split's seed.
    """

    __slots__ = (
        "_repeated",
        "_row_key_cache",
        "_rows",
        "_spent",
        "counts",
        "dev_fraction",
        "development_fingerprint",
        "fingerprint",
        "seed",
        "table_fingerprint",
    )

    fingerprint: str
    counts: Mapping[str, int]
    development_fingerprint: str
    table_fingerprint: str
    dev_fraction: float
    seed: int
    _spent: bool
    _rows: dict[str, NDArray[np.float64]]
    _repeated: dict[str, NDArray[np.bool_]]
    _row_key_cache: list[str] | None

    def __init__(self) -> None:
        raise ProtocolError(
            "a ReservedSplit is created only by EmbeddingTable.split(); rebuild it from the "
            "table with the recorded dev_fraction and seed."
        )

    @classmethod
    def _create(
        cls,
        rows: dict[str, NDArray[np.float64]],
        *,
        development_fingerprint: str,
        table_fingerprint: str,
        dev_fraction: float,
        seed: int,
        repeated: dict[str, NDArray[np.bool_]],
    ) -> ReservedSplit:
        """Internal constructor used by :meth:`EmbeddingTable.split`."""
        self = object.__new__(cls)
        frozen = {k: _readonly(v) for k, v in sorted(rows.items())}
        self._rows = frozen
        self._repeated = {k: repeated[k] for k in frozen}
        self._row_key_cache = None
        self.fingerprint = _fingerprint(frozen.items(), "certify.reserved.v1")
        self.counts = FrozenMap({k: int(v.shape[0]) for k, v in frozen.items()})  # type: ignore[assignment]
        self.development_fingerprint = development_fingerprint
        self.table_fingerprint = table_fingerprint
        self.dev_fraction = dev_fraction
        self.seed = seed
        self._spent = False
        return self

    @property
    def spent(self) -> bool:
        """Whether this object's rows were evaluated (the ledger is the authoritative record)."""
        return self._spent

    def _mark_spent(self) -> None:
        """Record in memory that the rows were evaluated; called only by the protocol."""
        self._spent = True

    def _row_keys(self) -> list[str]:
        """Keys that let the ledger recognise these rows in any later split.

        A vector that occurs once in its whole table is keyed by its identity and content, so the
        same row is recognised in another split, a subset or a superset of the table. Vectors
        that repeat in the table (discrete outputs such as randomized response) would collide
        with independent draws of the same value, so they are keyed by the source table's
        fingerprint, identity, content and repeat number: re-splitting that table is recognised,
        fresh data are not mistaken for spent data.
        """
        if self._row_key_cache is not None:
            return self._row_key_cache
        keys: list[str] = []
        for label, rows in self._rows.items():
            seen: dict[bytes, int] = {}
            tag = label.encode("utf-8") + b"\x00"
            for row, repeated in zip(rows, self._repeated[label].tolist(), strict=True):
                data = row.astype("<f8").tobytes()
                if repeated:
                    count = seen.get(data, 0)
                    seen[data] = count + 1
                    scope = b"s" + self.table_fingerprint.encode()
                    payload = scope + tag + data + count.to_bytes(8, "little")
                else:
                    payload = b"u" + tag + data
                keys.append(hashlib.sha256(payload).hexdigest()[:32])
        self._row_key_cache = keys
        return keys

    def _take(self, identity: str) -> NDArray[np.float64]:
        """The reserved rows of one identity; called only by the protocol during evaluation."""
        return self._rows[identity]

    def __reduce__(self) -> tuple[object, ...]:
        raise ProtocolError(
            "a ReservedSplit cannot be pickled or copied; rebuild it in the other process with "
            "EmbeddingTable.split(dev_fraction, seed) from the same table."
        )

    def __copy__(self) -> ReservedSplit:
        return self

    def __deepcopy__(self, memo: object) -> ReservedSplit:
        return self

    def __repr__(self) -> str:
        n = sum(self.counts.values())
        return (
            f"ReservedSplit({len(self.counts)} identities, {n} rows, fingerprint "
            f"{self.fingerprint[:12]}{', spent' if self.spent else ''})"
        )


@final
@attrs.frozen
class DevTestSplit:
    """The result of :meth:`EmbeddingTable.split`.

    Attributes
    ----------
    development : EmbeddingTable
        Rows for every choice: pairs, classifiers, orientations, thresholds.
    reserved : ReservedSplit
        Rows evaluated once by a sealed protocol.
    dev_fraction : float
        The development fraction used.
    seed : int
        The seed used.
    table_fingerprint : str
        Fingerprint of the source table.
    """

    development: EmbeddingTable
    reserved: ReservedSplit
    dev_fraction: float
    seed: int
    table_fingerprint: str


def sample_pairs(identities: Sequence[str], count: int, seed: int) -> list[Pair]:
    """The first ``count`` pairs of a seeded shuffle of all unordered identity pairs.

    Parameters
    ----------
    identities : sequence of str
        Distinct identity labels (e.g. ``table.identities``).
    count : int
        How many pairs, between 1 and ``len(identities) * (len(identities) - 1) / 2``.
    seed : int
        Seed of the shuffle.

    Returns
    -------
    list of Pair
        Pairs ``Pair(a, b)`` with ``a`` before ``b`` in ``identities``.

    Raises
    ------
    DataError
        If identities repeat or fewer than 2 are given, or ``count`` exceeds the number of pairs.
    ParameterError
        If ``count`` or ``seed`` is not a valid integer.

    Notes
    -----
    The paper (Sec. 5.1) shuffles all pairs with a fixed seed and audits the first 100 with every
    method, so the same list serves every method.

    Examples
    --------
    >>> sample_pairs(["a", "b", "c"], count=2, seed=0)
    [Pair(a='b', b='c'), Pair(a='a', b='b')]
    """
    names = [str(x) for x in identities]
    if len(set(names)) != len(names):
        raise DataError("identities must be distinct; the list repeats a label.")
    k = len(names)
    total = k * (k - 1) // 2
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        raise ParameterError(f"count must be a positive integer; got {count!r}.")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer; got {seed!r}.")
    if k < 2:
        raise DataError(f"at least 2 identities are needed to form a pair; got {k}.")
    if count > total:
        raise DataError(
            f"count must be at most the number of pairs, {total} for {k} identities; got {count}."
        )
    ii, jj = np.triu_indices(k, k=1)
    order = np.random.default_rng(int(seed)).permutation(total)[: int(count)]
    return [Pair(names[ii[t]], names[jj[t]]) for t in order]
