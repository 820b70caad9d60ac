"""Content keys of table rows: how the ledger recognizes a row whatever its label, split or cleaning.

A row's key is computed from its raw content, before cleaning or normalization: the float64
bytes of the row as read (``-0.0`` taken as ``0.0``). A normalized table hashes its rows when it
is built, before normalizing them, so the content is the same whether or not the table was
normalized. Labels, the other identities, the split and protocol options take no part in it.

Keys are 16 bytes (the first 128 bits of a SHA-256):

- a row that occurs once in its identity and has a coordinate that is not a whole number is keyed
  by its content alone, so the same row is recognized in any table, under any label;
- a row repeated within its identity, or one whose coordinates are all whole numbers (discrete
  outputs, where fresh draws repeat values), is keyed by its content, its copy number among
  equal rows of the identity, and a *signature* of the identity: a hash of the multiset of the
  contents of all its rows. Re-splitting, renaming, adding identities, reordering rows or
  switching normalization keep the signature; fresh draws give another multiset, so another
  signature. What content cannot tell apart (documented in docs/trust.md): an identity whose
  multiset was changed (a row added, removed or edited) has a new signature, so its repeated
  and whole-number rows look fresh.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Final, final

import numpy as np
from numpy.typing import NDArray

__all__ = ["KEY_BYTES", "RowKeys", "content_digests", "integral_rows", "sketch"]

KEY_BYTES: Final = 16
_CONTENT: Final = b"certify.row-content.v2\x00"
_SCOPED: Final = b"certify.row-scoped.v2\x00"
SKETCH_SIZE: Final = 32
"""Keys kept in a record's sketches (the smallest ones)."""


def integral_rows(stack: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per row, whether every coordinate is a whole number (checked on one column first)."""
    n = stack.shape[0]
    out = np.zeros(n, dtype=bool)
    if n == 0 or stack.shape[1] == 0:
        return out
    first = stack[:, 0]
    maybe = np.flatnonzero(first == np.floor(first))
    if maybe.size:
        part = stack[maybe]
        out[maybe] = np.all(part == np.floor(part), axis=1)
    return out


def content_digests(rows: NDArray[np.float64]) -> list[bytes]:
    """SHA-256 of each raw row's content: its little-endian float64 bytes, ``-0.0`` taken as ``0.0``."""
    content = np.ascontiguousarray(np.add(rows, 0.0), dtype="<f8")  # -0.0 + 0.0 is 0.0
    width = content.itemsize * (content.shape[1] if content.ndim == 2 else 0)
    buffer = content.data.cast("B")
    base = hashlib.sha256(_CONTENT)
    out: list[bytes] = []
    for i in range(content.shape[0]):
        h = base.copy()
        h.update(buffer[i * width : (i + 1) * width])
        out.append(h.digest())
    return out


@final
class RowKeys:
    """Keys of the rows of one root table, per identity, computed once on first use.

    Parameters
    ----------
    rows : Mapping[str, numpy.ndarray]
        The table's rows per identity (raw unless ``digests`` is given).
    digests : Mapping[str, list of bytes], optional
        Per identity, :func:`content_digests` of the raw rows (normalized tables: computed
        before normalizing, since the raw rows are gone afterwards).
    integral : Mapping[str, numpy.ndarray], optional
        Per identity, whether each raw row holds whole numbers only (given with ``digests``).
    fixed : Mapping[str, numpy.ndarray], optional
        Keys given as they are (a table restored from a pickle).
    """

    __slots__ = ("_cache", "_digests", "_integral", "_rows")

    def __init__(
        self,
        rows: Mapping[str, NDArray[np.float64]],
        digests: Mapping[str, list[bytes]] | None = None,
        integral: Mapping[str, NDArray[np.bool_]] | None = None,
        fixed: Mapping[str, NDArray[np.uint8]] | None = None,
    ) -> None:
        self._rows = dict(rows)
        self._digests = None if digests is None else dict(digests)
        self._integral = None if integral is None else dict(integral)
        self._cache: dict[str, NDArray[np.uint8]] = {} if fixed is None else dict(fixed)

    def keys(self, identity: str) -> NDArray[np.uint8]:
        """The ``(n, 16)`` keys of an identity's rows, in row order."""
        found = self._cache.get(identity)
        if found is None:
            found = self._cache[identity] = self._compute(identity)
        return found

    def _compute(self, identity: str) -> NDArray[np.uint8]:
        """Hash each row's raw content; scope repeated and whole-number rows by the identity."""
        rows = self._rows[identity]
        digests = content_digests(rows) if self._digests is None else self._digests[identity]
        n = len(digests)
        whole = integral_rows(rows) if self._integral is None else self._integral[identity]
        seen: dict[bytes, int] = {}
        for d in digests:
            seen[d] = seen.get(d, 0) + 1
        scoped = [bool(w) or seen[d] > 1 for w, d in zip(whole.tolist(), digests, strict=True)]
        out = np.empty((n, KEY_BYTES), dtype=np.uint8)
        signature = b""
        if any(scoped):
            signature = hashlib.sha256(b"".join(sorted(digests))).digest()
        copies: dict[bytes, int] = {}
        keys = bytearray()
        for d, s in zip(digests, scoped, strict=True):
            if s:
                j = copies.get(d, 0)
                copies[d] = j + 1
                keys += hashlib.sha256(_SCOPED + signature + d + j.to_bytes(8, "little")).digest()[:KEY_BYTES]
            else:
                keys += d[:KEY_BYTES]
        out[:] = np.frombuffer(bytes(keys), dtype=np.uint8).reshape(n, KEY_BYTES)
        out.setflags(write=False)
        return out


def sketch(keys: NDArray[np.uint8], size: int = SKETCH_SIZE) -> list[str]:
    """The ``size`` smallest distinct keys, as hex: two sets sharing many rows share some of these.

    Examples
    --------
    >>> keys = np.arange(48, dtype=np.uint8).reshape(3, 16)[::-1]
    >>> sketch(keys, 2) == [bytes(range(16)).hex(), bytes(range(16, 32)).hex()]
    True
    """
    if keys.shape[0] == 0:
        return []
    unique = np.unique(np.ascontiguousarray(keys).view(np.dtype((np.void, KEY_BYTES))).ravel())
    return [bytes(k).hex() for k in unique[:size]]
