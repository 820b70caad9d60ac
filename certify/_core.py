"""Small shared building blocks: identity pairs, frozen parameter maps, validators, sealing dunders."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, TypeAlias, final

import attrs

from certify.errors import ImmutableResultError, ParameterError, StatusError

if TYPE_CHECKING:  # typeguard skips these; attrs.Attribute is not subscriptable at run time
    from attrs import Attribute

__all__ = [
    "FrozenMap",
    "Pair",
    "Scalar",
    "check_confidence_level",
    "check_delta",
    "check_int",
    "check_text",
    "first_true",
    "forbid_numeric_use",
    "freeze_map",
]

Scalar: TypeAlias = float | int | bool | str | None


@final
class FrozenMap(Mapping[str, Scalar]):
    """An immutable, hashable, picklable mapping of names to plain scalars."""

    __slots__ = ("_items",)
    _items: tuple[tuple[str, Scalar], ...]

    def __init__(self, items: Mapping[str, Scalar] | None = None) -> None:
        pairs = tuple((str(k), v) for k, v in (items or {}).items())
        for key, value in pairs:
            if not isinstance(value, float | int | bool | str | type(None)):
                raise ParameterError(
                    f"value of {key!r} must be a float, int, bool, str or None; got {value!r}."
                )
            if isinstance(value, float) and math.isnan(value):
                raise ParameterError(f"value of {key!r} must not be NaN; got {value!r}.")
        object.__setattr__(self, "_items", pairs)

    def __setattr__(self, name: str, value: object) -> None:
        raise ImmutableResultError(f"FrozenMap is immutable; cannot set {name!r}.")

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenMap, (dict(self._items),))

    def __getitem__(self, key: str) -> Scalar:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items))  # order-free, like __eq__

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._items) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenMap({dict(self._items)!r})"


def freeze_map(value: Mapping[str, Scalar] | None) -> FrozenMap:
    """Converter: any mapping (or None) to a :class:`FrozenMap`."""
    if isinstance(value, FrozenMap):
        return value
    return FrozenMap(value)


def _check_identity_name(instance: object, attribute: Attribute[Any], value: object) -> None:
    """Validator: an identity label is a non-empty string."""
    if not isinstance(value, str) or not value:
        raise ParameterError(
            f"Pair.{attribute.name} must be a non-empty identity label (str); got {value!r}."
        )


@final
@attrs.frozen(order=False)
class Pair:
    """An unordered question about two identities, with a fixed orientation.

    ``a`` is class 0 and ``b`` is class 1 wherever a pair is turned into a test: the test's false
    positive rate is measured on rows of ``a`` and its false negative rate on rows of ``b``.

    Parameters
    ----------
    a, b : str
        Two different identity labels.

    Raises
    ------
    ParameterError
        If a label is empty or the two labels are equal.

    Examples
    --------
    >>> Pair("id1", "id7")
    Pair(a='id1', b='id7')
    """

    a: str = attrs.field(validator=_check_identity_name)
    b: str = attrs.field(validator=_check_identity_name)

    def __attrs_post_init__(self) -> None:
        if self.a == self.b:
            raise ParameterError(
                f"a pair must name two different identities; got ({self.a!r}, {self.b!r})."
            )

    def as_tuple(self) -> tuple[str, str]:
        """The pair as ``(a, b)``."""
        return (self.a, self.b)

    def __str__(self) -> str:
        return f"{self.a}~{self.b}"


def lower_bound_text(value: float, decimals: int = 3) -> str:
    """A lower bound with ``decimals`` decimals, rounded down: never stated higher than it is.

    The one rounding rule of every printed certificate (tables, sentences, verdicts, figures,
    command lines); infinity is spelled ``+inf``.

    Examples
    --------
    >>> lower_bound_text(1.6449), lower_bound_text(1.645), lower_bound_text(1.93857, 4)
    ('1.644', '1.645', '1.9385')
    """
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    scale = 10**decimals
    # the small allowance keeps a value printed exactly (1.645 stored as 1.64499...) from dropping
    return f"{math.floor(value * scale + 1e-9) / scale:.{decimals}f}"


def check_delta(value: object, name: str = "delta") -> float:
    """Validate a DP delta in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be a number in [0, 1); got {value!r}.")
    v = float(value)
    if not 0.0 <= v < 1.0:
        raise ParameterError(f"{name} must be a number in [0, 1); got {value!r}.")
    return v


def check_int(value: object, name: str, minimum: int) -> int:
    """Validate an integer (not a bool) at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def first_true(predicate: Callable[[int], bool], low: int, high: int) -> int:
    """Smallest integer in ``(low, high]`` where a monotone predicate holds, by bisection.

    ``predicate`` must be False at ``low`` (or ``low`` a sentinel never evaluated), True at
    ``high``, and switch once in between.

    Examples
    --------
    >>> first_true(lambda n: n * n >= 50, 0, 64)
    8
    """
    while high - low > 1:
        mid = (low + high) // 2
        if predicate(mid):
            high = mid
        else:
            low = mid
    return high


def check_text(value: object, name: str) -> str:
    """Validate a non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise ParameterError(f"{name} must be a non-empty string; got {value!r}.")
    return value


def check_confidence_level(value: object, name: str = "confidence_level") -> float:
    """Validate a confidence level in (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(f"{name} must be a number in (0, 1); got {value!r}.")
    v = float(value)
    if not 0.0 < v < 1.0:
        raise ParameterError(
            f"{name} must be a number in (0, 1), for example 0.95; got {value!r}."
        )
    return v


_ARITHMETIC: Final = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__pow__", "__rpow__",
    "__neg__", "__pos__", "__abs__", "__round__", "__trunc__", "__floor__", "__ceil__",
)
_ORDERING: Final = ("__lt__", "__le__", "__gt__", "__ge__")
_CONVERSION: Final = ("__float__", "__int__", "__index__", "__complex__", "__bool__")


def forbid_numeric_use(cls: type[Any], field: str) -> None:
    """Make ``cls`` refuse arithmetic, ordering, numeric conversion and truth tests at run time.

    The methods are attached after class creation, so static type checkers do not see them and
    report such uses as errors; at run time they raise :class:`StatusError` with the fix.
    """
    name = cls.__name__

    def make(op: str) -> Callable[..., Any]:
        def refuse(self: object, *args: object) -> Any:
            if op in _ORDERING:
                what = "ordered"
            elif op == "__bool__":
                what = "used as a truth value"
            elif op in _CONVERSION:
                what = "converted to a number"
            else:
                what = "used in arithmetic"
            raise StatusError(
                f"a {name} cannot be {what}; it is a status-typed result, not a number. "
                f"Read its field explicitly ({name}.{field}) and keep its status with it."
            )

        refuse.__name__ = op
        return refuse

    for op in (*_ARITHMETIC, *_ORDERING, *_CONVERSION):
        setattr(cls, op, make(op))

    def setattr_(self: object, attr: str, value: object) -> None:
        raise ImmutableResultError(
            f"{name}.{attr} cannot be assigned; results are immutable once issued. "
            "Use attrs.evolve only where the library offers it, or compute a new result."
        )

    def delattr_(self: object, attr: str) -> None:
        raise ImmutableResultError(f"{name}.{attr} cannot be deleted; results are immutable.")

    cls.__setattr__ = setattr_  # type: ignore[assignment]
    cls.__delattr__ = delattr_  # type: ignore[assignment]
