"""Embedding tables: loading and cleaning (paper Sec. 5.1, App. A), duplicates, access."""

from __future__ import annotations

import csv
import math
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, final

import attrs
import numpy as np
from numpy.typing import ArrayLike, NDArray

from certify._core import FrozenMap
from certify.data._keys import RowKeys, content_digests, integral_rows
from certify.data._rows import (
    NORM_FLOOR,
    _at_or_below_floor,
    _fingerprint,
    _first_copies,
    _readonly,
    _squared_norms,
    normalize_rows,
)
from certify.data.splits import ReservedSplit
from certify.errors import DataError, ParameterError

__all__ = ["NORM_FLOOR", "CleaningReport", "DevTestSplit", "DroppedRow", "EmbeddingTable"]

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

    __slots__ = ("_keys", "_positions", "_rows", "cleaning", "dimension", "fingerprint", "identities")

    identities: tuple[str, ...]
    dimension: int
    cleaning: CleaningReport
    fingerprint: str
    _rows: dict[str, NDArray[np.float64]]
    _keys: RowKeys
    _positions: dict[str, NDArray[np.intp]] | None

    def __init__(self, rows: Mapping[str, NDArray[np.float64]], cleaning: CleaningReport) -> None:
        self._setup(rows, cleaning, copy=True)

    @classmethod
    def _owning(
        cls, rows: Mapping[str, NDArray[np.float64]], cleaning: CleaningReport
    ) -> EmbeddingTable:
        """A table that takes over ``rows``: fresh C-contiguous float64 arrays no one else holds."""
        self = object.__new__(cls)
        self._setup(rows, cleaning, copy=False)
        return self

    def _setup(
        self, rows: Mapping[str, NDArray[np.float64]], cleaning: CleaningReport, *, copy: bool
    ) -> None:
        """Validate, freeze (copying unless the rows are owned) and fingerprint the rows."""
        if len(rows) < 2:
            raise DataError(
                f"a table must hold at least 2 identities to audit; got {len(rows)}. "
                "Check the label column."
            )
        dims = {r.shape[1] for r in rows.values()}
        if len(dims) != 1:
            raise DataError(f"all rows must have one dimension; got {sorted(dims)}.")
        self.identities = tuple(sorted(rows))
        if copy:
            self._rows = {k: _readonly(rows[k]) for k in self.identities}
        else:
            self._rows = {k: rows[k] for k in self.identities}
            for r in self._rows.values():
                r.setflags(write=False)
        # content keys of the rows (computed on first use); a table split or subset from another
        # shares its root's keys and records where its rows sit among the root's rows
        self._keys = RowKeys(self._rows)
        self._positions = None
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
        squares = _squared_norms(array)
        # an infinite coordinate makes its row's sum of squares inf (or NaN beside a NaN), so
        # only rows with a non-finite sum (which also holds for finite rows that overflow) need
        # a look at their coordinates
        suspects = np.flatnonzero(~np.isfinite(squares))
        if suspects.size:
            hits = np.argwhere(np.isinf(array[suspects]))
            if hits.size:
                r, c = int(suspects[hits[0, 0]]), int(hits[0, 1])
                raise DataError(
                    f"vectors must be finite; row {r}, column {c} is {float(array[r, c])!r}. "
                    "Fix or remove that row (missing values may be given as NaN)."
                )
        return cls._clean(label_list, array, normalize, squares)

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
                        "Name the identity column: label_column=... in Python, --label-column "
                        "NAME on the command line, or data.label_column in a protocol file."
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
    def _clean(
        cls,
        labels: list[str],
        array: NDArray[np.float64],
        normalize: bool,
        squares: NDArray[np.float64] | None = None,
    ) -> EmbeddingTable:
        """Drop missing and zero-norm rows, find duplicates, normalize when asked.

        ``squares`` are the rows' sums of squares (:func:`_squared_norms`) when already known.
        """
        if squares is None:
            squares = _squared_norms(array)
        missing = np.isnan(squares)  # the same rows as np.isnan(array).any(axis=1)
        tiny = ~missing & _at_or_below_floor(array, squares)
        drop = missing | tiny
        dropped = [
            DroppedRow(
                row=i,
                identity=labels[i],
                reason="missing value" if bool(missing[i]) else f"norm <= {NORM_FLOOR:g}",
            )
            for i in np.flatnonzero(drop).tolist()
        ]
        kept_at = np.flatnonzero(~drop)
        if kept_at.size == 0:
            raise DataError("no usable rows: every row has a missing value or a zero norm.")
        # gather the kept rows once, grouped by identity (sorted) and in input order within one
        names = sorted(set(labels))
        code_of = {name: j for j, name in enumerate(names)}
        codes = np.fromiter(map(code_of.__getitem__, labels), dtype=np.intp, count=len(labels))
        kept_codes = codes[kept_at]
        order = np.argsort(kept_codes, kind="stable")
        stack = np.ascontiguousarray(array[kept_at[order]], dtype=np.float64)
        stack_codes = kept_codes[order]
        first = _first_copies(stack)
        repeated = np.asarray(np.bincount(first, minlength=first.size)[first] > 1, dtype=bool)
        within, across = _duplicates(names, stack_codes, first, repeated)
        raw_digests: list[bytes] | None = None
        whole = None
        if normalize:  # row keys come from the raw rows: hash them before they are normalized
            whole = integral_rows(stack)
            raw_digests = content_digests(stack)
            stack = normalize_rows(stack)[0]
        stack.setflags(write=False)
        counts = np.bincount(stack_codes, minlength=len(names))
        ends = np.cumsum(counts).tolist()
        rows: dict[str, NDArray[np.float64]] = {}
        digests: dict[str, list[bytes]] = {}
        integral: dict[str, NDArray[np.bool_]] = {}
        start = 0
        for name, count, end in zip(names, counts.tolist(), ends, strict=True):
            if count:  # identities whose every row was dropped are absent
                rows[name] = stack[start:end]
                if raw_digests is not None and whole is not None:
                    digests[name], integral[name] = raw_digests[start:end], whole[start:end]
            start = end
        report = CleaningReport(
            rows_read=len(labels),
            rows_kept=int(kept_at.size),
            dropped=tuple(dropped),
            duplicates_within=within,
            duplicates_across=across,
            normalized=normalize,
        )
        table = cls._owning(rows, report)
        if normalize:
            table._keys = RowKeys(table._rows, digests, integral)
        return table

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
        out = EmbeddingTable({k: self._rows[k] for k in names}, self.cleaning)
        out._derive(self._keys, {k: self._root_positions(k) for k in names})
        return out

    def __repr__(self) -> str:
        return (
            f"EmbeddingTable({len(self.identities)} identities, {self.n_rows} rows, "
            f"dimension {self.dimension}, fingerprint {self.fingerprint[:12]})"
        )

    def __reduce__(self) -> tuple[object, ...]:
        keys = {k: np.array(self._row_keys(k)) for k in self.identities}
        return (_restore_table, (dict(self._rows), self.cleaning, keys))

    def _derive(self, keys: RowKeys, positions: dict[str, NDArray[np.intp]]) -> None:
        """Share a root table's row keys; ``positions`` place this table's rows among the root's."""
        self._keys = keys
        self._positions = positions

    def _root_positions(self, identity: str) -> NDArray[np.intp]:
        """Where the rows of an identity sit among the rows of the root table."""
        if self._positions is None:
            return np.arange(self._rows[identity].shape[0], dtype=np.intp)
        return self._positions[identity]

    def _row_keys(self, identity: str) -> NDArray[np.uint8]:
        """The ``(n, 16)`` content keys of an identity's rows (:mod:`certify.data._keys`)."""
        keys = self._keys.keys(identity)
        return keys if self._positions is None else keys[self._positions[identity]]

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
        reserved_positions: dict[str, NDArray[np.intp]] = {}
        development_positions: dict[str, NDArray[np.intp]] = {}
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
            reserved_at, dev_at = np.sort(perm[n_dev:]), np.sort(perm[:n_dev])
            dev[name] = rows[dev_at]  # fresh arrays, handed over without a copy
            test[name] = rows[reserved_at]
            root = self._root_positions(name)
            reserved_positions[name], development_positions[name] = root[reserved_at], root[dev_at]
        if short:
            raise DataError(
                f"too few rows for dev_fraction={dev_fraction}: {len(short)} identities would "
                f"get an empty development or reserved part, e.g. {', '.join(short[:5])}. "
                "Drop them with table.subset(...) or change dev_fraction."
            )
        development = EmbeddingTable._owning(dev, self.cleaning)
        development._derive(self._keys, development_positions)
        reserved = ReservedSplit._create(
            test,
            development_fingerprint=development.fingerprint,
            table_fingerprint=self.fingerprint,
            dev_fraction=float(dev_fraction),
            seed=int(seed),
            keys=self._keys,
            positions=reserved_positions,
            development_positions=development_positions,
        )
        return DevTestSplit(
            development=development,
            reserved=reserved,
            dev_fraction=float(dev_fraction),
            seed=int(seed),
            table_fingerprint=self.fingerprint,
        )


def _restore_table(
    rows: dict[str, NDArray[np.float64]], cleaning: CleaningReport, keys: dict[str, NDArray[np.uint8]]
) -> EmbeddingTable:
    """Rebuild a pickled table with the row keys it had (they may come from a larger root table)."""
    table = EmbeddingTable(rows, cleaning)
    table._keys = RowKeys(table._rows, fixed={k: _frozen_keys(v) for k, v in keys.items()})
    return table


def _frozen_keys(keys: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Read-only ``(n, 16)`` keys."""
    out = np.array(keys, dtype=np.uint8).reshape(-1, 16)
    out.setflags(write=False)
    return out


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


def _duplicates(
    names: list[str], codes: NDArray[np.intp], first: NDArray[np.intp], repeated: NDArray[np.bool_]
) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, ...], ...]]:
    """Identical vectors repeated within an identity, and shared across identities.

    Row ``i`` has label ``names[codes[i]]`` (``names`` sorted), ``first[i]`` is the first row
    with the same bytes (:func:`_first_copies`) and ``repeated[i]`` whether that vector occurs
    more than once. Within: per identity, over its vectors, the copies beyond the first;
    across: per vector held by several identities, their sorted labels; both sorted.
    """
    at = np.flatnonzero(repeated)
    if at.size == 0:
        return (), ()
    width = len(names)
    # one entry per (vector, identity) holding it, sorted by vector then identity
    pairs = np.unique(first[at].astype(np.int64) * width + codes[at])
    pair_codes = pairs % width
    extra = np.bincount(codes[at], minlength=width) - np.bincount(pair_codes, minlength=width)
    within = tuple((names[j], int(extra[j])) for j in np.flatnonzero(extra > 0).tolist())
    vector = pairs // width
    bounds = np.flatnonzero(np.diff(vector)) + 1
    across = [
        tuple(names[j] for j in group.tolist())
        for group in np.split(pair_codes, bounds)
        if group.size > 1
    ]
    return within, tuple(sorted(across))
