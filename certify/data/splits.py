"""Development/reserved splits: the opaque reserved rows a sealed protocol evaluates once; pairs."""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Mapping, Sequence
from typing import final

import numpy as np
from numpy.typing import NDArray

from certify._core import FrozenMap, Pair
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
        """Internal constructor used by :meth:`EmbeddingTable.split`, which hands over ``rows``.

        ``rows`` are fresh C-contiguous float64 arrays that no one else holds; they are frozen
        in place, not copied.
        """
        self = object.__new__(cls)
        frozen = {k: v for k, v in sorted(rows.items())}
        for v in frozen.values():
            v.setflags(write=False)
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
        # each key is sha256(prefix + row bytes [+ repeat number]): the prefix is hashed once per
        # identity and the hash state copied per row, the row bytes are read from one buffer
        keys: list[str] = []
        scope = b"s" + self.table_fingerprint.encode()
        for label, rows in self._rows.items():
            tag = label.encode("utf-8") + b"\x00"
            unique = hashlib.sha256(b"u" + tag)
            shared = hashlib.sha256(scope + tag)
            data = np.ascontiguousarray(rows, dtype="<f8")
            width = data.itemsize * (data.size // max(data.shape[0], 1))
            buffer = data.data.cast("B")
            seen: dict[bytes, int] = {}
            for i, repeated in enumerate(self._repeated[label].tolist()):
                row = buffer[i * width : (i + 1) * width]
                if repeated:
                    content = row.tobytes()
                    count = seen.get(content, 0)
                    seen[content] = count + 1
                    h = shared.copy()
                    h.update(row)
                    h.update(count.to_bytes(8, "little"))
                else:
                    h = unique.copy()
                    h.update(row)
                keys.append(h.hexdigest()[:32])
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
