"""Score models of fixed tests: how a registered test turns rows into scores, stored as data.

Every class here is one record kind, read back by the one loader :func:`score_model_from_json`
with the same converters (finite floats, integer columns, row hashes); the module is long
because the record format is, and it is kept in one place so a kind and its loader cannot drift.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final, TypeAlias, cast, final

import attrs
import numpy as np
from numpy.typing import NDArray

from certify import _sklearn
from certify.errors import DataError, EstimatorError, RecordError
from certify.protocol.float_scores import BitsScore, bits_score_from_json
from certify.stats._bins import bin_index

__all__ = [
    "BinnedScore",
    "BitsScore",
    "BlockScore",
    "ClippedScore",
    "DifferenceScore",
    "FunctionScore",
    "HistogramScore",
    "LaplaceScore",
    "LinearScore",
    "ProductScore",
    "ScoreFunction",
    "ScoreModel",
    "SkopsScore",
    "score_model_from_json",
]

ScoreFunction: TypeAlias = Callable[[NDArray[np.float64]], NDArray[np.float64]]
"""A fixed score function: rows in, one score per row out (larger = more like class 1)."""


def _float_tuple(values: Any) -> tuple[float, ...]:
    """Converter: an iterable of numbers to a tuple of floats."""
    return tuple(float(x) for x in values)


@final
@attrs.frozen
class LinearScore:
    """A linear score ``X @ coef + intercept`` (a fitted linear classifier's decision function).

    Attributes
    ----------
    coef : tuple of float
        One coefficient per coordinate.
    intercept : float
        The intercept.
    """

    coef: tuple[float, ...] = attrs.field(converter=_float_tuple)
    intercept: float = attrs.field(converter=float)

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        coef: NDArray[np.float64] = np.asarray(self.coef, dtype=np.float64)
        _check_dimension(X, coef.shape[0])
        hot = np.flatnonzero(coef)
        if hot.size == 1 and coef[hot[0]] == 1.0 and self.intercept == 0.0:
            # one coordinate as it is (a coordinate family's score): the column, the same
            # numbers as the product (x + 0.0 for every zero term) at a third of its time
            column: NDArray[np.float64] = np.add(X[:, hot[0]], 0.0, dtype=np.float64)
            return column
        out: NDArray[np.float64] = X @ coef + self.intercept
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {"kind": "linear", "coef": list(self.coef), "intercept": self.intercept}


def _is_sklearn_class(name: str) -> bool:
    """Whether a dotted name from a skops file is a class defined in scikit-learn."""
    import importlib

    module, _, attr = name.rpartition(".")
    if not module.startswith("sklearn.") or not attr.isidentifier():
        return False
    try:
        found = getattr(importlib.import_module(module), attr, None)
    except Exception:
        return False
    return isinstance(found, type) and str(getattr(found, "__module__", "")).startswith("sklearn.")


@final
@attrs.frozen(eq=False)
class SkopsScore:
    """A fitted scikit-learn estimator stored with ``skops.io`` (loads only trusted types).

    Two scores are equal when their stored bytes and response are.

    Attributes
    ----------
    blob : bytes
        The ``skops.io.dumps`` bytes.
    response : str
        ``"predict_proba"`` or ``"decision_function"``.
    sha256 : str
        SHA-256 of ``blob``.
    """

    response: _sklearn.Response
    _model: Any = attrs.field(repr=False, alias="_model")
    _stored: list[bytes] = attrs.field(factory=list, repr=False, alias="_stored")
    """The skops bytes once made (empty until then; see :meth:`from_estimator`)."""

    @classmethod
    def from_estimator(
        cls, model: object, response: _sklearn.Response, *, deferred: bool = False
    ) -> SkopsScore:
        """Serialize a fitted estimator.

        ``deferred``: store it only when its bytes are first needed (a record, a comparison):
        for an estimator that no one else holds, so that it cannot change in between. A
        mechanism audit fits boosted trees for every chosen pair and registers them rarely;
        ``skops.io`` alone takes most of a second to import.
        """
        score = cls(response, _model=model)
        if not deferred:
            _ = score.blob
        return score

    @property
    def blob(self) -> bytes:
        """The ``skops.io.dumps`` bytes (made on first use for a deferred score)."""
        if not self._stored:
            import skops.io as sio

            try:
                self._stored.append(sio.dumps(self._model))
            except Exception as exc:
                raise EstimatorError(
                    f"the fitted {type(self._model).__name__} cannot be stored with skops.io "
                    f"({exc}); use a linear classifier or a scikit-learn estimator skops supports."
                ) from exc
        return self._stored[0]

    @property
    def sha256(self) -> str:
        """SHA-256 of :attr:`blob`."""
        return hashlib.sha256(self.blob).hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SkopsScore):
            return NotImplemented
        return (self.response, self.blob) == (other.response, other.blob)

    def __hash__(self) -> int:
        return hash((self.response, self.blob))

    @classmethod
    def from_blob(cls, blob: bytes, response: _sklearn.Response, sha256: str) -> SkopsScore:
        """Load from bytes, refusing any type outside scikit-learn, numpy and builtins."""
        import skops.io as sio

        if hashlib.sha256(blob).hexdigest() != sha256:
            raise RecordError("the stored model's bytes do not match its SHA-256.")
        try:
            untrusted = sio.get_untrusted_types(data=blob)
        except Exception as exc:
            raise RecordError(f"the stored model is not a valid skops file ({exc}).") from exc
        # A name is called by skops on load (with arguments from the file), so a prefix rule is
        # not enough: "builtins.eval" or "numpy.load" would run code. Beyond skops' own safe
        # defaults only scikit-learn classes are accepted.
        refused = [t for t in untrusted if not _is_sklearn_class(t)]
        if refused:
            raise RecordError(
                f"the stored model contains types that are not trusted: {refused[:5]!r}. Only "
                "scikit-learn classes (beyond skops' safe defaults) are loaded from records."
            )
        try:
            model = sio.loads(blob, trusted=untrusted)
        except Exception as exc:
            raise RecordError(f"the stored model could not be loaded ({exc}).") from exc
        return cls(response, _model=model, _stored=[blob])

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        return _sklearn.score_binary(self._model, X, self.response)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description (the model bytes in base64)."""
        return {
            "kind": "skops",
            "response": self.response,
            "sha256": self.sha256,
            "data_base64": base64.b64encode(self.blob).decode("ascii"),
        }


@final
@attrs.frozen
class FunctionScore:
    """A score function supplied by the caller (e.g. an exact likelihood-ratio oracle).

    Only its name is recorded; evaluating a loaded record needs the same function passed again
    under that name.
    """

    name: str
    function: ScoreFunction = attrs.field(eq=False, repr=False)

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        try:
            out = np.asarray(self.function(X), dtype=np.float64).reshape(-1)
        except Exception as exc:
            raise EstimatorError(
                f"score function {self.name!r} raised {type(exc).__name__}: {exc}. It must return "
                "one finite score per row."
            ) from exc
        if out.shape[0] != X.shape[0] or not np.all(np.isfinite(out)):
            raise EstimatorError(
                f"score function {self.name!r} must return one finite score per row; got shape "
                f"{out.shape} for {X.shape[0]} rows."
            )
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {"kind": "function", "name": self.name}


_TILE_ROWS: Final = 512
"""Rows taken as one line by :func:`_tiled_rows`."""


def _tiled_rows(
    x: NDArray[np.float64], out: NDArray[np.float64], *columns: NDArray[np.float64]
) -> Iterator[tuple[NDArray[np.float64], NDArray[np.float64], list[NDArray[np.float64]]]]:
    """Views of C-contiguous rows ``x`` and ``out`` of one shape, and per-column constants to match.

    An elementwise step between rows and per-column constants loops over the last axis, as
    many values as the rows have columns (ten for PrefixSum's outputs) between two turns of its
    outer loop; taken :data:`_TILE_ROWS` rows at a time as one line, against the constants
    repeated as often, the loop runs 5,120 values at a turn and the same arithmetic takes about
    a third less time (a million rows of ten: 34 ms against 49). The rows left over come last,
    against the constants as they are.
    """
    full = x.shape[0] - x.shape[0] % _TILE_ROWS
    width = _TILE_ROWS * x.shape[1]
    yield x[:full].reshape(-1, width), out[:full].reshape(-1, width), [
        np.tile(c, _TILE_ROWS) for c in columns
    ]
    if full < x.shape[0]:
        yield x[full:], out[full:], list(columns)


def _check_dimension(X: NDArray[np.float64], d: int) -> None:
    """Raise DataError unless ``X`` has ``d`` columns."""
    if X.ndim != 2 or X.shape[1] != d:
        raise DataError(
            f"rows must have dimension {d} to be scored by this test; got shape {X.shape}."
        )


def _finite_list(values: NDArray[Any]) -> Any:
    """A numeric array as nested lists of floats, RecordError if any is not finite."""
    if not np.isfinite(values).all():
        raise RecordError("a stored score model must hold finite numbers only.")
    return values.astype(np.float64).tolist()


def _finite_tuple(values: Any) -> tuple[float, ...]:
    """Converter: numbers to a tuple of finite floats (a record never holds NaN or infinity)."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "fiu":
        return tuple(_finite_list(values))
    out = tuple(float(x) for x in values)
    if not all(np.isfinite(out)):
        raise RecordError("a stored score model must hold finite numbers only.")
    return out


def _rows_tuple(values: Any) -> tuple[tuple[float, ...], ...]:
    """Converter: a sequence of rows to a tuple of tuples of finite floats."""
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.dtype.kind in "fiu":
        # a fitted histogram's keys: hundreds of thousands of rows, converted in one pass
        return tuple(map(tuple, _finite_list(values)))
    return tuple(_finite_tuple(row) for row in values)


def _edges_tuple(values: Any) -> tuple[tuple[int, tuple[float, ...]], ...]:
    """Converter: ``(coordinate, edges)`` pairs to a tuple of ``(int, tuple of float)``."""
    return tuple((int(j), _finite_tuple(e)) for j, e in values)


_HASH_MULTIPLIERS_SEED: Final = 0x5C0_8E5


@functools.cache
def _hash_multipliers(width: int) -> NDArray[np.uint64]:
    """Fixed odd 64-bit multipliers of :func:`_row_hashes` (the same in every process)."""
    draws = np.random.default_rng(_HASH_MULTIPLIERS_SEED).integers(
        0, 2**63, size=width, dtype=np.uint64
    )
    out: NDArray[np.uint64] = (draws << np.uint64(1)) | np.uint64(1)
    out.setflags(write=False)
    return out


_HASH_ROWS: Final = 1 << 16
"""Rows hashed at a time: the temporaries stay a few MB whatever the number of rows."""


def _row_hashes(X: NDArray[np.float64]) -> NDArray[np.uint64]:
    """A 64-bit hash of each row's float64 bytes (``-0.0`` counted as ``0.0``)."""
    multipliers = _hash_multipliers(X.shape[1])
    out = np.empty(X.shape[0], dtype=np.uint64)
    for start in range(0, X.shape[0], _HASH_ROWS):
        block = X[start : start + _HASH_ROWS]
        words = np.ascontiguousarray(block + 0.0, dtype=np.float64).view(np.uint64)
        out[start : start + block.shape[0]] = ((words >> np.uint64(32)) ^ words) @ multipliers
    return out


@final
@attrs.frozen
class HistogramScore:
    """A score per distinct output: the development log likelihood ratio of each output value.

    For discrete outputs the likelihood-ratio event ``{y : p_b(y) / p_a(y) >= t}`` is a set of
    output values; this model stores, as plain numbers, each output value seen on development
    draws (``keys``) and its score (larger means class 1). Outputs never seen there score
    ``default``. Continuous coordinates of mixed outputs can be cut into bins first: a
    coordinate with ``edges`` is replaced by its bin number (0 below the first edge) before the
    row is looked up.

    Attributes
    ----------
    keys : tuple of tuple of float
        Distinct (binned) output rows, each of the outputs' dimension.
    scores : tuple of float
        One score per key.
    default : float
        Score of any other output.
    edges : tuple of (int, tuple of float)
        ``(coordinate, increasing inner edges)`` of every binned coordinate; empty for none.
    """

    keys: tuple[tuple[float, ...], ...] = attrs.field(converter=_rows_tuple)
    scores: tuple[float, ...] = attrs.field(converter=_finite_tuple)
    default: float = attrs.field(converter=float)
    edges: tuple[tuple[int, tuple[float, ...]], ...] = attrs.field(default=(), converter=_edges_tuple)
    _table: Any = attrs.field(default=None, eq=False, repr=False, alias="_table")

    def __attrs_post_init__(self) -> None:
        if not self.keys or len(self.keys) != len(self.scores):
            raise RecordError(
                f"a histogram score needs one score per key and at least one key; got "
                f"{len(self.keys)} keys and {len(self.scores)} scores."
            )
        if len({len(k) for k in self.keys}) != 1:
            raise RecordError("every key of a histogram score must have the same dimension.")
        if not np.isfinite(self.default):
            raise RecordError(f"a histogram score's default must be finite; got {self.default!r}.")
        width = len(self.keys[0])
        for j, e in self.edges:
            if not 0 <= j < width or any(b <= a for a, b in itertools.pairwise(e)):
                raise RecordError(
                    f"binned coordinate {j} must be in [0, {width}) with increasing edges."
                )
        keys = np.asarray(self.keys, dtype=np.float64) + 0.0
        hashes = _row_hashes(keys)
        order = np.argsort(hashes, kind="stable")
        if np.unique(hashes).size != hashes.size:
            if np.unique(keys, axis=0).shape[0] != keys.shape[0]:
                raise RecordError("the keys of a histogram score must be distinct.")
            raise RecordError("two keys of a histogram score share a hash; store fewer keys.")
        table = (hashes[order], keys[order], np.asarray(self.scores, dtype=np.float64)[order])
        object.__setattr__(self, "_table", table)

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X`` (``default`` for rows that are not keys).

        Scored :data:`_HASH_ROWS` rows at a time, so the binned copy of the rows stays a few MB
        (a copy of all of them, twice, was the largest temporary of a final round's fits).
        """
        hashes, keys, scores = self._table
        _check_dimension(X, keys.shape[1])
        out = np.full(X.shape[0], self.default, dtype=np.float64)
        for start in range(0, X.shape[0], _HASH_ROWS):
            block = self.cells(X[start : start + _HASH_ROWS])
            h = _row_hashes(block)
            at = np.minimum(np.searchsorted(hashes, h), hashes.size - 1)
            hit = hashes[at] == h
            hit[hit] = (keys[at[hit]] == block[hit] + 0.0).all(axis=1)
            out[start : start + block.shape[0]][hit] = scores[at[hit]]
        return out

    def cells(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """The rows with every binned coordinate replaced by its bin number."""
        if not self.edges:
            return X
        # binned coordinate by coordinate on a transposed copy, each one contiguous (a column of
        # the rows read and written in place took twice as long on ten-coordinate outputs)
        columns = np.array(np.asarray(X).T, dtype=np.float64, order="C")  # a copy, in any layout
        for j, e in self.edges:
            columns[j] = bin_index(np.asarray(e, dtype=np.float64), columns[j])
        out: NDArray[np.float64] = np.ascontiguousarray(columns.T)
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {
            "kind": "histogram",
            "keys": [list(k) for k in self.keys],
            "scores": list(self.scores),
            "default": self.default,
            "edges": [[j, list(e)] for j, e in self.edges],
        }


@final
@attrs.frozen
class BinnedScore:
    """A score per interval of one output coordinate: a binned likelihood ratio.

    Attributes
    ----------
    column : int
        The coordinate that is binned.
    edges : tuple of float
        Increasing inner bin edges; bin ``i`` is ``[edges[i-1], edges[i])``.
    scores : tuple of float
        One score per bin (``len(edges) + 1``).
    dimension : int
        Number of output coordinates.
    """

    column: int
    edges: tuple[float, ...] = attrs.field(converter=_finite_tuple)
    scores: tuple[float, ...] = attrs.field(converter=_finite_tuple)
    dimension: int

    def __attrs_post_init__(self) -> None:
        if len(self.scores) != len(self.edges) + 1:
            raise RecordError(
                f"a binned score needs len(edges) + 1 scores; got {len(self.edges)} edges and "
                f"{len(self.scores)} scores."
            )
        if any(b <= a for a, b in zip(self.edges, self.edges[1:], strict=False)):
            raise RecordError("the edges of a binned score must increase.")
        if not 0 <= self.column < self.dimension:
            raise RecordError(
                f"column must be in [0, {self.dimension}); got {self.column!r}."
            )

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        _check_dimension(X, self.dimension)
        at = bin_index(np.asarray(self.edges, dtype=np.float64), X[:, self.column])
        out: NDArray[np.float64] = np.asarray(self.scores, dtype=np.float64)[at]
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {
            "kind": "binned",
            "column": self.column,
            "edges": list(self.edges),
            "scores": list(self.scores),
            "dimension": self.dimension,
        }


@final
@attrs.frozen
class LaplaceScore:
    """The log likelihood ratio of two product-Laplace laws, from centres and scales.

    ``score(x) = sum_j (|x_j - a_j| - |x_j - b_j|) / s_j``: the exact log likelihood ratio
    ``log p_b(x) / p_a(x)`` when coordinate ``j`` is Laplace with centre ``a_j`` (class 0) or
    ``b_j`` (class 1) and scale ``s_j``; a plug-in score otherwise.

    Attributes
    ----------
    center_a, center_b : tuple of float
        Per-coordinate centres (e.g. development medians) of class 0 and class 1.
    scale : tuple of float
        Positive per-coordinate scales.
    """

    center_a: tuple[float, ...] = attrs.field(converter=_finite_tuple)
    center_b: tuple[float, ...] = attrs.field(converter=_finite_tuple)
    scale: tuple[float, ...] = attrs.field(converter=_finite_tuple)

    def __attrs_post_init__(self) -> None:
        if not len(self.center_a) == len(self.center_b) == len(self.scale) >= 1:
            raise RecordError("centres and scales of a Laplace score must have one length.")
        if min(self.scale) <= 0:
            raise RecordError("the scales of a Laplace score must be positive.")

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        return self._score(X, overwrite=False)

    def _score(self, X: NDArray[np.float64], *, overwrite: bool) -> NDArray[np.float64]:
        """:meth:`score`, with ``overwrite`` computed in the place of ``X``.

        ``X`` is then float64 rows the caller no longer needs (:meth:`DifferenceScore.steps`),
        scored without a fresh copy of them.
        """
        _check_dimension(X, len(self.scale))
        a, b = np.asarray(self.center_a), np.asarray(self.center_b)
        low, high = np.minimum(a, b), np.maximum(a, b)
        # |x - a| - |x - b| = sign(b - a) (2 clip(x, low, high) - low - high), computed so that
        # both plateaus are exact constants: rounding in x can never move a score across a
        # threshold there (a score that read the low bits of x would test the floating-point
        # representation of the outputs, not their law)
        sign = np.sign(b - a)
        x = np.ascontiguousarray(X, dtype=np.float64)
        terms = x if overwrite or x is not X else np.empty_like(x)
        # in place on one temporary (the same operations, in the same order, as
        # sign * (2 clip(x) - (low + high))): a fresh array per step cost a fifth of the time
        for src, dst, constants in _tiled_rows(x, terms, low, high, low + high, sign):
            np.maximum(src, constants[0], out=dst)
            np.minimum(dst, constants[1], out=dst)
            dst *= 2.0
            dst -= constants[2]
            dst *= constants[3]
        out: NDArray[np.float64] = terms @ (1.0 / np.asarray(self.scale))
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {
            "kind": "laplace",
            "center_a": list(self.center_a),
            "center_b": list(self.center_b),
            "scale": list(self.scale),
        }


@final
@attrs.frozen
class ClippedScore:
    """A sum of clipped per-coordinate linear terms: a likelihood ratio robust to heavy tails.

    ``score(x) = sum_j weight_j * clip(x_j - center_j, -half_width_j, half_width_j)``. Each term
    is linear near the centre and constant beyond ``half_width_j``, so one extreme coordinate
    cannot decide the score. This is the log likelihood ratio of a small location shift under
    Huber's least-favourable law (Gaussian centre, Laplace tails); with ``half_width_j = |b_j -
    a_j| / 2`` and ``weight_j = 2 sign(b_j - a_j) / s_j`` it is the product-Laplace ratio of
    :class:`LaplaceScore` up to a constant.

    Attributes
    ----------
    center : tuple of float
        Per-coordinate centres (e.g. midpoints of the two classes' medians).
    weight : tuple of float
        Per-coordinate weights (the sign says which class a large value points to).
    half_width : tuple of float
        Positive per-coordinate clipping half-widths.

    Raises
    ------
    RecordError
        If the three tuples differ in length, are empty, hold a non-finite number or a
        half-width that is not positive.

    Examples
    --------
    >>> s = ClippedScore((0.0, 0.0), (1.0, -2.0), (1.0, 1.0))
    >>> s.score(np.array([[5.0, 0.25]])).tolist()
    [0.5]
    """

    center: tuple[float, ...] = attrs.field(converter=_finite_tuple)
    weight: tuple[float, ...] = attrs.field(converter=_finite_tuple)
    half_width: tuple[float, ...] = attrs.field(converter=_finite_tuple)

    def __attrs_post_init__(self) -> None:
        if not len(self.center) == len(self.weight) == len(self.half_width) >= 1:
            raise RecordError(
                "centres, weights and half-widths of a clipped score must have one length >= 1; "
                f"got {len(self.center)}, {len(self.weight)} and {len(self.half_width)}."
            )
        if min(self.half_width) <= 0:
            raise RecordError("the half-widths of a clipped score must be positive.")

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        _check_dimension(X, len(self.center))
        h = np.asarray(self.half_width)
        terms = np.clip(X - np.asarray(self.center), -h, h)
        out: NDArray[np.float64] = terms @ np.asarray(self.weight)
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {
            "kind": "clipped",
            "center": list(self.center),
            "weight": list(self.weight),
            "half_width": list(self.half_width),
        }


@final
@attrs.frozen
class ProductScore:
    """A sum of per-coordinate binned log ratios: the likelihood ratio of independent coordinates.

    ``score(x) = sum_j s_j[bin_j(x_j)]``. When the coordinates of an output are independent
    given the input (randomized bits, independent noise per coordinate), the log likelihood
    ratio is exactly such a sum, and each term can be estimated from far fewer draws than the
    joint law of the whole output.

    Attributes
    ----------
    components : tuple of BinnedScore
        One binned score per scored coordinate (coordinates without one add nothing).
    """

    components: tuple[BinnedScore, ...]

    def __attrs_post_init__(self) -> None:
        if not self.components or not all(isinstance(c, BinnedScore) for c in self.components):
            raise RecordError("a product score needs at least one binned component.")
        if len({c.dimension for c in self.components}) != 1:
            raise RecordError("the components of a product score must share one dimension.")

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        out = np.zeros(X.shape[0], dtype=np.float64)
        for c in self.components:
            out += c.score(X)
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {"kind": "product", "components": [c.to_json() for c in self.components]}


@final
@attrs.frozen
class DifferenceScore:
    """A score of the consecutive differences of an output: ``inner(x_0, x_1 - x_0, ...)``.

    Running sums (prefix sums, continual counters) add independent noise at each step; their
    differences are the independent steps, whose likelihood ratio a per-coordinate score
    (:class:`LaplaceScore`, :class:`ProductScore`) gets exactly.

    Attributes
    ----------
    inner : LaplaceScore or ProductScore
        The score applied to the differences.
    """

    inner: LaplaceScore | ProductScore

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.inner, LaplaceScore | ProductScore):
            raise RecordError("a difference score wraps a Laplace or product score.")

    @staticmethod
    def steps(X: NDArray[np.float64]) -> NDArray[np.float64]:
        """``(x_0, x_1 - x_0, ..., x_{k-1} - x_{k-2})`` of every row."""
        # the differences written into one array: np.diff with prepend=0.0 first copies the
        # rows beside a column of zeros, and took over three times as long (x_0 - 0.0 is x_0)
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise DataError(f"rows to be scored must form a 2-D array; got shape {X.shape}.")
        out = np.empty(X.shape, dtype=np.float64)
        # every value less the one before it, rows run together as one line (one loop over
        # contiguous values: a million rows of ten in 26 ms against 41 row by row); each row's
        # first value, less the last of the row before, is then written over with x_0
        flat, line = out.reshape(-1), X.reshape(-1)
        np.subtract(line[1:], line[:-1], out=flat[1:])
        out[:, :1] = X[:, :1]
        return out

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``, :data:`_HASH_ROWS` rows at a time.

        Each row's steps are its own, so the blocks change no score; a copy of the steps of all
        rows was the largest temporary of a final round's fits (48 MB at 600,000 calls of ten
        coordinates).
        """
        X = np.asarray(X)
        if X.ndim != 2 or X.shape[0] <= _HASH_ROWS:
            return self._inner_score(self.steps(X))
        out: NDArray[np.float64] = np.concatenate([
            self._inner_score(self.steps(X[start : start + _HASH_ROWS]))
            for start in range(0, X.shape[0], _HASH_ROWS)
        ])
        return out

    def _inner_score(self, steps: NDArray[np.float64]) -> NDArray[np.float64]:
        """The inner score of steps this call made (a Laplace score overwrites them in place)."""
        if isinstance(self.inner, LaplaceScore):
            return self.inner._score(steps, overwrite=True)
        return self.inner.score(steps)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {"kind": "differences", "inner": self.inner.to_json()}


def _columns_tuple(values: Any) -> tuple[tuple[int, ...], ...]:
    """Converter: an iterable of column lists to a tuple of tuples of ints."""
    out: list[tuple[int, ...]] = []
    for cols in values:
        part = tuple(cols)
        if not all(isinstance(j, int | np.integer) and not isinstance(j, bool) for j in part):
            raise RecordError(f"the columns of a block score must be integers; got {list(part)!r}.")
        out.append(tuple(int(j) for j in part))
    return tuple(out)


def _block_models(values: Any) -> tuple[Any, ...]:
    """Converter: the models of a block score as a tuple (their kinds are checked after)."""
    return tuple(values)


@final
@attrs.frozen
class BlockScore:
    """A weighted sum of scores of column blocks: the likelihood ratio of independent blocks.

    ``score(x) = sum_i weights[i] * models[i].score(x[:, columns[i]])``. When an output is made
    of blocks of coordinates that are independent given the input (two mechanisms run side by
    side on independent noise), its log likelihood ratio is the sum of the blocks' log ratios,
    and each block's ratio can be estimated on its own (a histogram of a few discrete values, a
    logistic fit of a mixed block) from far fewer draws than the joint law needs. A block may
    appear more than once (the average of two fits, say).

    Attributes
    ----------
    columns : tuple of tuple of int
        The output coordinates of each block, in the order its model reads them.
    weights : tuple of float
        One finite weight per block.
    models : tuple of LinearScore, HistogramScore or BinnedScore
        One score per block, of the block's width.
    dimension : int
        Number of output coordinates.

    Raises
    ------
    RecordError
        If the three tuples differ in length or are empty, a block is empty, repeats a column
        or names one outside ``[0, dimension)``, or a model is of another kind or width.

    Examples
    --------
    >>> s = BlockScore([[0], [1, 2]], [1.0, 0.5],
    ...                [LinearScore([2.0], 0.0), LinearScore([1.0, 1.0], 1.0)], 3)
    >>> s.score(np.array([[1.0, 2.0, 3.0]])).tolist()
    [5.0]
    """

    columns: tuple[tuple[int, ...], ...] = attrs.field(converter=_columns_tuple)
    weights: tuple[float, ...] = attrs.field(converter=_finite_tuple)
    models: tuple[LinearScore | HistogramScore | BinnedScore, ...] = attrs.field(
        converter=_block_models
    )
    dimension: int

    def __attrs_post_init__(self) -> None:
        if not len(self.columns) == len(self.weights) == len(self.models) >= 1:
            raise RecordError(
                "a block score needs one weight and one model per block and at least one block; "
                f"got {len(self.columns)} blocks, {len(self.weights)} weights and "
                f"{len(self.models)} models."
            )
        for cols, model in zip(self.columns, self.models, strict=True):
            if not cols or len(set(cols)) != len(cols) or not all(
                0 <= j < self.dimension for j in cols
            ):
                raise RecordError(
                    f"each block must name distinct columns in [0, {self.dimension}); got "
                    f"{list(cols)!r}."
                )
            if not isinstance(model, LinearScore | HistogramScore | BinnedScore):
                raise RecordError(
                    "the blocks of a block score are linear, histogram or binned scores; got "
                    f"{type(model).__name__}."
                )
            if isinstance(model, LinearScore):
                width = len(model.coef)
            elif isinstance(model, HistogramScore):
                width = len(model.keys[0])
            else:
                width = model.dimension
            if width != len(cols):
                raise RecordError(
                    f"the block on columns {list(cols)!r} has a model of width {width}; each "
                    "block's model must read exactly its columns."
                )

    def score(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """Scores of the rows of ``X``."""
        _check_dimension(X, self.dimension)
        out = np.zeros(X.shape[0], dtype=np.float64)
        for cols, weight, model in zip(self.columns, self.weights, self.models, strict=True):
            out += weight * model.score(X[:, list(cols)])
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready description."""
        return {
            "kind": "blocks",
            "columns": [list(c) for c in self.columns],
            "weights": list(self.weights),
            "models": [m.to_json() for m in self.models],
            "dimension": self.dimension,
        }


ScoreModel: TypeAlias = (
    LinearScore
    | DifferenceScore
    | SkopsScore
    | FunctionScore
    | HistogramScore
    | BinnedScore
    | LaplaceScore
    | ProductScore
    | ClippedScore
    | BlockScore
    | BitsScore
)
"""Every way a fixed test turns rows into scores; all but FunctionScore are stored as data."""


def score_model_from_json(
    m: Mapping[str, Any], score_functions: Mapping[str, ScoreFunction] | None = None
) -> ScoreModel:
    """Rebuild a score model from its record entry (never runs code from the record).

    Raises
    ------
    RecordError
        On an unknown kind, a malformed entry, or a function score whose function is not given.
    """
    kind = m["kind"]
    if kind == "linear":
        return LinearScore(tuple(m["coef"]), m["intercept"])
    if kind == "skops":
        return SkopsScore.from_blob(
            base64.b64decode(m["data_base64"], validate=True), m["response"], m["sha256"]
        )
    if kind == "function":
        fn = (score_functions or {}).get(m["name"])
        if fn is None:
            raise RecordError(
                f"the record's test uses score function {m['name']!r}; pass it as "
                f"score_functions={{{m['name']!r}: fn}}."
            )
        return FunctionScore(m["name"], fn)
    if kind == "histogram":
        edges = m.get("edges", [])
        if not isinstance(edges, list) or not all(
            isinstance(x, list) and len(x) == 2 and isinstance(x[1], list) for x in edges
        ):
            raise RecordError("a histogram score's edges must be a list of [coordinate, edges].")
        return HistogramScore(
            m["keys"], m["scores"], m["default"], [(_record_int(j), e) for j, e in edges]
        )
    if kind == "binned":
        return BinnedScore(_record_int(m["column"]), m["edges"], m["scores"], _record_int(m["dimension"]))
    if kind == "laplace":
        return LaplaceScore(m["center_a"], m["center_b"], m["scale"])
    if kind == "clipped":
        return ClippedScore(_record_list(m["center"]), _record_list(m["weight"]),
                            _record_list(m["half_width"]))
    if kind == "differences":
        inner = m["inner"]
        if not isinstance(inner, dict) or inner.get("kind") not in ("laplace", "product"):
            raise RecordError("a difference score must wrap a laplace or product score.")
        return DifferenceScore(cast(LaplaceScore | ProductScore, score_model_from_json(inner)))
    if kind == "product":
        parts = m["components"]
        if not isinstance(parts, list) or not all(
            isinstance(c, dict) and c.get("kind") == "binned" for c in parts
        ):
            raise RecordError("a product score's components must be binned scores.")
        return ProductScore(tuple(cast(BinnedScore, score_model_from_json(c)) for c in parts))
    if kind == "blocks":
        models = m["models"]
        if not isinstance(models, list) or not all(
            isinstance(x, dict) and x.get("kind") in ("linear", "histogram", "binned")
            for x in models
        ):
            raise RecordError("a block score's models must be linear, histogram or binned scores.")
        return BlockScore(
            _record_list_of_lists(m["columns"]), _record_list(m["weights"]),
            tuple(
                cast(LinearScore | HistogramScore | BinnedScore, score_model_from_json(x))
                for x in models
            ),
            _record_int(m["dimension"]),
        )
    if kind == "bits":
        return bits_score_from_json(m)
    raise RecordError(f"unknown model kind {kind!r} in the record.")


def _record_list(value: object) -> list[Any]:
    """A list-of-numbers field of a record entry (numbers are checked by the score's converter)."""
    if not isinstance(value, list) or not all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in value
    ):
        raise RecordError(f"expected a list of numbers in the record; got {type(value).__name__}.")
    return value


def _record_list_of_lists(value: object) -> list[list[int]]:
    """A list of integer lists (the columns of a block score) from a record entry."""
    if not isinstance(value, list) or not all(
        isinstance(c, list) and all(isinstance(j, int) and not isinstance(j, bool) for j in c)
        for c in value
    ):
        raise RecordError("a block score's columns must be a list of lists of integers.")
    return value


def _record_int(value: object) -> int:
    """An integer field of a record entry."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(f"expected an integer in the record; got {value!r}.")
    return value
