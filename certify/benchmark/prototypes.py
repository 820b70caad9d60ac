"""Identity prototypes for the known-epsilon benchmark and their exact sensitivities (Sec. 6.1).

A :class:`PrototypeSet` holds ``n`` fixed prototypes ``c_i`` in ``R^d`` (one per identity), the
SHA-256 hash of their bytes, the full L1 and L2 distance matrices, and the exact sensitivities
``Delta_p = max_{i != j} ||c_i - c_j||_p`` (paper Eq. 17) with the pairs attaining them. It is
built by :func:`sensitivities`, which checks every pair. :func:`dispersed` and :func:`clustered`
make the paper's two data-free sets with fixed seeds.
"""

from __future__ import annotations

import hashlib
import numbers
from typing import Final, Literal

import attrs
import numpy as np
from numpy.typing import NDArray

from certify.errors import DataError, ParameterError

__all__ = [
    "CLUSTERED_SEED",
    "CLUSTER_NOISE",
    "DIMENSION",
    "DISPERSED_SEED",
    "N_CENTERS",
    "N_IDENTITIES",
    "PrototypeSet",
    "array_sha256",
    "clustered",
    "dispersed",
    "pairwise_distances",
    "sensitivities",
]

N_IDENTITIES: Final = 400
"""Number of identities in each of the paper's prototype sets."""
DIMENSION: Final = 512
"""Embedding dimension of the paper's prototype sets."""
DISPERSED_SEED: Final = 20_260_601
"""Default seed of :func:`dispersed`, fixed before any benchmark data are generated."""
CLUSTERED_SEED: Final = 20_260_602
"""Default seed of :func:`clustered`, fixed before any benchmark data are generated."""
N_CENTERS: Final = 4
"""Number of cluster centres in :func:`clustered`."""
CLUSTER_NOISE: Final = 0.18
"""Weight of the per-identity direction added to its centre in :func:`clustered`."""


def _readonly(array: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return a C-contiguous float64 copy of ``array`` that cannot be written to."""
    out = np.array(array, dtype=np.float64, order="C", copy=True)
    out.setflags(write=False)
    return out


def _frozen(value: object) -> NDArray[np.float64]:
    """Keep an owned read-only float64 array as is; otherwise make a read-only copy."""
    array = np.asarray(value)
    if (
        array.dtype == np.float64
        and array.base is None
        and not array.flags.writeable
        and array.flags.c_contiguous
    ):
        return array
    return _readonly(np.asarray(array, dtype=np.float64))


def _check_count(name: str, value: int, minimum: int) -> int:
    """Check that ``value`` is an integer ``>= minimum`` and return it as ``int``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_prototypes(prototypes: NDArray[np.float64]) -> NDArray[np.float64]:
    """Check that ``prototypes`` is a finite 2-D array with at least two rows."""
    arr = np.asarray(prototypes)
    if arr.ndim != 2:
        raise DataError(
            f"prototypes must be a 2-D array (identities x dimensions); got shape {arr.shape!r}. "
            "Stack one prototype per row."
        )
    if arr.shape[0] < 2 or arr.shape[1] < 1:
        raise DataError(f"prototypes must have at least 2 rows and 1 column; got shape {arr.shape!r}.")
    if not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise DataError(f"prototypes must be real numbers; got dtype {arr.dtype!r}.")
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise DataError("prototypes must be finite; got NaN or infinite entries.")
    return arr


def array_sha256(array: NDArray[np.float64]) -> str:
    """SHA-256 hex digest of an array's float64 little-endian C-order bytes (shape included).

    Parameters
    ----------
    array : ndarray
        Any real array; it is converted to little-endian float64 in C order before hashing.

    Returns
    -------
    str
        64 hexadecimal characters. The shape is hashed before the data, so a reshaped array with
        the same bytes gets a different digest.

    Notes
    -----
    The digest depends only on the values and the shape, not on the array's memory layout or
    writeability, so it is stable across calls, processes and platforms.

    Examples
    --------
    >>> array_sha256(np.zeros((2, 2)))[:16]
    'be2758a016c074c5'
    """
    arr = np.ascontiguousarray(array, dtype="<f8")
    h = hashlib.sha256()
    h.update(repr(tuple(int(k) for k in arr.shape)).encode("ascii"))
    h.update(arr.tobytes(order="C"))
    return h.hexdigest()


def _all_pairs_l1_l2(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Exact symmetric L1 and L2 distance matrices, one vectorized row sweep per identity."""
    n = x.shape[0]
    l1 = np.zeros((n, n), dtype=np.float64)
    l2 = np.zeros((n, n), dtype=np.float64)
    buf = np.empty_like(x)
    for i in range(n - 1):
        diff = np.subtract(x[i + 1 :], x[i], out=buf[: n - i - 1])
        np.abs(diff, out=diff)
        l1[i, i + 1 :] = diff.sum(axis=1)
        np.square(diff, out=diff)
        l2[i, i + 1 :] = np.sqrt(diff.sum(axis=1))
    l1 += l1.T
    l2 += l2.T
    return l1, l2


def pairwise_distances(prototypes: NDArray[np.float64], p: Literal[1, 2]) -> NDArray[np.float64]:
    """Exact all-pairs L1 or L2 distance matrix of a set of prototypes.

    Parameters
    ----------
    prototypes : ndarray of shape (n, d)
        One prototype per row, finite, ``n >= 2``.
    p : {1, 2}
        The norm.

    Returns
    -------
    ndarray of shape (n, n)
        Symmetric, zero diagonal; entry ``(i, j)`` is ``||c_i - c_j||_p`` computed from the
        coordinate differences (not from a Gram matrix, which loses precision for close pairs).

    Raises
    ------
    DataError
        If ``prototypes`` is not a finite 2-D array with at least two rows.
    ParameterError
        If ``p`` is not 1 or 2.

    Notes
    -----
    Each row ``i`` is compared with rows ``i + 1, ..., n - 1`` in one vectorized step, so the
    ``n (n - 1) / 2`` pairs cost about 0.1 s for ``n = 400, d = 512``. Whitened distances
    ``||c_i - c_j||_{Lambda^-1}`` are ``pairwise_distances(prototypes / sqrt(lambda), 2)``.

    Examples
    --------
    >>> pairwise_distances(np.array([[0.0, 0.0], [3.0, 4.0]]), 2)[0, 1]
    np.float64(5.0)
    """
    if p not in (1, 2) or isinstance(p, bool):
        raise ParameterError(f"p must be 1 or 2; got {p!r}.")
    l1, l2 = _all_pairs_l1_l2(_check_prototypes(prototypes))
    return l1 if p == 1 else l2


def _pair_tuple(value: tuple[int, int]) -> tuple[int, int]:
    """Normalize an attaining pair to a tuple of Python ints."""
    return (int(value[0]), int(value[1]))


@attrs.frozen(eq=True)
class PrototypeSet:
    """A fixed set of identity prototypes with exact sensitivities (paper Sec. 6.1, Eq. 17).

    Build with :func:`sensitivities` (or :func:`dispersed` / :func:`clustered`), never by hand:
    the constructor does not re-check the distances.

    Attributes
    ----------
    name : str
        Label of the set (``"dispersed"``, ``"clustered"`` or user-chosen).
    prototypes : ndarray of shape (n, d)
        Read-only float64 prototypes, one per identity.
    sha256 : str
        :func:`array_sha256` of ``prototypes``; equality of two sets compares names and hashes.
    delta_1, delta_2 : float
        Exact ``max_{i != j} ||c_i - c_j||_p`` for ``p = 1, 2``.
    l1_pair, l2_pair : tuple of int
        The pairs ``(i, j)``, ``i < j``, attaining ``delta_1`` and ``delta_2``.
    l1_distances, l2_distances : ndarray of shape (n, n)
        Read-only exact distance matrices.
    seed : int or None
        The generating seed, when the set was generated by this module.
    """

    name: str
    prototypes: NDArray[np.float64] = attrs.field(eq=False, repr=False, converter=_frozen)
    sha256: str
    delta_1: float
    delta_2: float
    l1_pair: tuple[int, int] = attrs.field(converter=_pair_tuple)
    l2_pair: tuple[int, int] = attrs.field(converter=_pair_tuple)
    l1_distances: NDArray[np.float64] = attrs.field(eq=False, repr=False, converter=_frozen)
    l2_distances: NDArray[np.float64] = attrs.field(eq=False, repr=False, converter=_frozen)
    seed: int | None = None

    def __reduce__(self) -> tuple[type[PrototypeSet], tuple[object, ...]]:
        """Pickle through the constructor so the arrays come back read-only."""
        return (type(self), attrs.astuple(self, recurse=False))

    @property
    def n_identities(self) -> int:
        """Number of prototypes (identities)."""
        return int(self.prototypes.shape[0])

    @property
    def dimension(self) -> int:
        """Dimension of each prototype."""
        return int(self.prototypes.shape[1])

    def distance(self, i: int, j: int, p: Literal[1, 2]) -> float:
        """Exact ``||c_i - c_j||_p`` for ``p`` in {1, 2}."""
        if p not in (1, 2) or isinstance(p, bool):
            raise ParameterError(f"p must be 1 or 2; got {p!r}.")
        matrix = self.l1_distances if p == 1 else self.l2_distances
        return float(matrix[self.check_identity(i), self.check_identity(j)])

    def check_identity(self, identity: int) -> int:
        """Return ``identity`` as an ``int`` after checking it indexes a prototype."""
        if (
            isinstance(identity, bool)
            or not isinstance(identity, numbers.Integral)
            or not 0 <= identity < self.n_identities
        ):
            raise ParameterError(
                f"identity must be an integer in [0, {self.n_identities}); got {identity!r}."
            )
        return int(identity)


def _argmax_pair(matrix: NDArray[np.float64]) -> tuple[int, int]:
    """Index ``(i, j)``, ``i < j``, of the largest off-diagonal entry (first in row order)."""
    iu, ju = np.triu_indices(matrix.shape[0], k=1)
    k = int(np.argmax(matrix[iu, ju]))
    return int(iu[k]), int(ju[k])


def sensitivities(
    prototypes: NDArray[np.float64], name: str = "custom", seed: int | None = None
) -> PrototypeSet:
    """Check every pair of prototypes and return the set with its exact sensitivities.

    Parameters
    ----------
    prototypes : ndarray of shape (n, d)
        One prototype per identity; finite, ``n >= 2``. It is copied, not referenced.
    name : str, default "custom"
        Label stored in the result.
    seed : int or None, default None
        The generating seed, recorded for provenance only.

    Returns
    -------
    PrototypeSet
        The read-only prototypes, their SHA-256 hash, ``Delta_1``, ``Delta_2``, the attaining
        pairs and both distance matrices.

    Raises
    ------
    DataError
        If ``prototypes`` is not a finite 2-D array with at least two rows.

    Notes
    -----
    Implements paper Eq. 17, ``Delta_p = max_{i != j} ||c_i - c_j||_p``, by computing all
    ``n (n - 1) / 2`` distances from coordinate differences, so the values are exact up to
    float64 rounding of the sums (no bound such as the diameter ``2R`` is used). Ties for the
    maximum are resolved to the first pair in row-major order of the upper triangle.

    Examples
    --------
    >>> ps = sensitivities(np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 2.0]]), name="toy")
    >>> ps.delta_1, ps.delta_2, ps.l1_pair, ps.l2_pair
    (2.0, 2.0, (0, 1), (0, 2))
    """
    if not isinstance(name, str):
        raise ParameterError(f"name must be a string; got {name!r}.")
    arr = _readonly(_check_prototypes(prototypes))
    l1, l2 = _all_pairs_l1_l2(arr)
    l1_pair = _argmax_pair(l1)
    l2_pair = _argmax_pair(l2)
    return PrototypeSet(
        name=name,
        prototypes=arr,
        sha256=array_sha256(arr),
        delta_1=float(l1[l1_pair]),
        delta_2=float(l2[l2_pair]),
        l1_pair=l1_pair,
        l2_pair=l2_pair,
        l1_distances=_readonly(l1),
        l2_distances=_readonly(l2),
        seed=seed,
    )


def _unit_rows(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Scale every row of ``x`` to unit L2 norm."""
    out: NDArray[np.float64] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def dispersed(
    seed: int = DISPERSED_SEED, n_identities: int = N_IDENTITIES, dimension: int = DIMENSION
) -> PrototypeSet:
    """The dispersed prototype set: iid standard Gaussian vectors normalized to unit length.

    Parameters
    ----------
    seed : int, default DISPERSED_SEED
        Seed of ``numpy.random.default_rng``.
    n_identities : int, default 400
        Number of prototypes, ``>= 2``.
    dimension : int, default 512
        Dimension, ``>= 1``.

    Returns
    -------
    PrototypeSet
        Named ``"dispersed"``, with exact sensitivities from :func:`sensitivities`.

    Raises
    ------
    ParameterError
        If ``seed`` is not a non-negative integer or a size is too small.

    Notes
    -----
    Paper Sec. 6.1. One ``standard_normal((n_identities, dimension))`` draw from
    ``default_rng(seed)``, each row divided by its L2 norm. The paper reports
    ``(Delta_1, Delta_2) = (28.302, 1.543)`` with its own (unpublished) seed; the default seed here
    gives ``(28.143, 1.538)``, attained by pairs ``(149, 281)`` and
    ``(226, 267)``.

    Examples
    --------
    >>> ps = dispersed()
    >>> ps.n_identities, ps.dimension, round(ps.delta_2, 3)
    (400, 512, 1.538)
    """
    rng = np.random.default_rng(_check_count("seed", seed, 0))
    n = _check_count("n_identities", n_identities, 2)
    d = _check_count("dimension", dimension, 1)
    x = _unit_rows(rng.standard_normal((n, d)))
    return sensitivities(x, name="dispersed", seed=int(seed))


def clustered(
    seed: int = CLUSTERED_SEED, n_identities: int = N_IDENTITIES, dimension: int = DIMENSION
) -> PrototypeSet:
    """The clustered prototype set: four unit centres, identity ``i`` near centre ``i mod 4``.

    Parameters
    ----------
    seed : int, default CLUSTERED_SEED
        Seed of ``numpy.random.default_rng``.
    n_identities : int, default 400
        Number of prototypes, ``>= 2``.
    dimension : int, default 512
        Dimension, ``>= 1``.

    Returns
    -------
    PrototypeSet
        Named ``"clustered"``, with exact sensitivities from :func:`sensitivities`.

    Raises
    ------
    ParameterError
        If ``seed`` is not a non-negative integer or a size is too small.

    Notes
    -----
    Paper Sec. 6.1. From ``default_rng(seed)``: four standard Gaussian centres, normalized; then
    one standard Gaussian direction per identity, normalized; prototype ``i`` is
    ``centre[i mod 4] + 0.18 * direction[i]``, normalized again. Identities ``i`` and ``j`` share a
    cluster exactly when ``i % 4 == j % 4``. The paper reports
    ``(Delta_1, Delta_2) = (26.367, 1.451)`` with its own seed; the default seed here gives
    ``(26.751, 1.473)``, both attained by the pair ``(246, 328)``.

    Examples
    --------
    >>> ps = clustered()
    >>> ps.n_identities, round(ps.delta_2, 2)
    (400, 1.47)
    """
    rng = np.random.default_rng(_check_count("seed", seed, 0))
    n = _check_count("n_identities", n_identities, 2)
    d = _check_count("dimension", dimension, 1)
    centers = _unit_rows(rng.standard_normal((N_CENTERS, d)))
    directions = _unit_rows(rng.standard_normal((n, d)))
    x = _unit_rows(centers[np.arange(n) % N_CENTERS] + CLUSTER_NOISE * directions)
    return sensitivities(x, name="clustered", seed=int(seed))
