"""Development/reserved splits: the opaque reserved rows a sealed protocol evaluates once; pairs."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import final

import numpy as np
from numpy.typing import NDArray

from certify._core import FrozenMap, Pair
from certify.data._keys import KEY_BYTES, RowKeys, sketch
from certify.data._rows import _fingerprint
from certify.errors import DataError, ParameterError, ProtocolError

__all__ = ["ReservedSplit", "sample_pairs"]


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
        "_development_positions",
        "_keys",
        "_positions",
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
    _keys: RowKeys
    _positions: dict[str, NDArray[np.intp]]
    _development_positions: dict[str, NDArray[np.intp]]

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
        keys: RowKeys,
        positions: dict[str, NDArray[np.intp]],
        development_positions: dict[str, NDArray[np.intp]],
    ) -> ReservedSplit:
        """Internal constructor used by :meth:`EmbeddingTable.split`, which hands over ``rows``.

        ``rows`` are fresh C-contiguous float64 arrays that no one else holds; they are frozen
        in place, not copied. ``keys`` are the root table's row keys; ``positions`` and
        ``development_positions`` place the reserved and development rows among its rows.
        """
        self = object.__new__(cls)
        frozen = {k: v for k, v in sorted(rows.items())}
        for v in frozen.values():
            v.setflags(write=False)
        self._rows = frozen
        self._keys = keys
        self._positions = {k: positions[k] for k in frozen}
        self._development_positions = dict(sorted(development_positions.items()))
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

    def _row_keys(self) -> NDArray[np.uint8]:
        """Content keys ``(n, 16)`` of the reserved rows (:mod:`certify.data._keys`).

        They depend on each row's raw content (and, for repeated or whole-number rows, on the
        multiset of its identity's rows), never on labels, other identities, the split or the
        table's normalization: the ledger recognizes these rows in any later table.
        """
        return self._gather(self._positions)

    def _development_keys(self) -> NDArray[np.uint8]:
        """Content keys of the development rows split off alongside (spent with the reserved rows)."""
        return self._gather(self._development_positions)

    def _gather(self, positions: Mapping[str, NDArray[np.intp]]) -> NDArray[np.uint8]:
        """Keys of the rows at ``positions`` of the root table, identity by identity."""
        parts = [self._keys.keys(k)[p] for k, p in positions.items()]
        if not parts:
            return np.empty((0, KEY_BYTES), dtype=np.uint8)
        return np.ascontiguousarray(np.vstack(parts))

    def _sketches(self) -> dict[str, list[str]]:
        """The smallest keys of the reserved rows and of all rows (reserved and development).

        Kept in the record, they let a reader see that two evaluations share rows without any
        ledger: two sets with many rows in common share some of their smallest keys.
        """
        reserved = self._row_keys()
        every = np.vstack([reserved, self._development_keys()])
        return {"reserved_sketch": sketch(reserved), "rows_sketch": sketch(every)}

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


def sample_pairs(identities: Sequence[str], count: int, seed: int) -> list[Pair]:
    """The first ``count`` pairs of a seeded shuffle of all unordered identity pairs.

    Parameters
    ----------
    identities : sequence of str
        Distinct identity labels (e.g. ``table.identities``).
    count : int
        How many pairs at most (>= 1). When the identities form fewer pairs,
        ``len(identities) * (len(identities) - 1) / 2``, all of them are returned, in shuffled
        order: the same rule as ``pairs.candidates`` of a protocol file, whose record states the
        number requested and the number scored.
    seed : int
        Seed of the shuffle.

    Returns
    -------
    list of Pair
        Pairs ``Pair(a, b)`` with ``a`` before ``b`` in ``identities``.

    Raises
    ------
    DataError
        If identities repeat or fewer than 2 are given.
    ParameterError
        If ``count`` or ``seed`` is not a valid integer.

    Notes
    -----
    The paper (Sec. 5.1) shuffles all pairs with a fixed seed and audits the first 100 with every
    method, so the same list serves every method. The first ``k`` pairs of a seed do not depend on
    ``count``, so capping ``count`` at the number of pairs changes nothing else.

    Examples
    --------
    >>> sample_pairs(["a", "b", "c"], count=2, seed=0)
    [Pair(a='b', b='c'), Pair(a='a', b='b')]
    >>> len(sample_pairs(["a", "b", "c"], count=100, seed=0))   # 3 identities make 3 pairs
    3
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
    ii, jj = np.triu_indices(k, k=1)
    order = np.random.default_rng(int(seed)).permutation(total)[: min(int(count), total)]
    return [Pair(names[ii[t]], names[jj[t]]) for t in order]
