"""Draws of a callable mechanism: inputs, checked outputs, and the mechanism's identity.

A mechanism is any callable ``mechanism(x, n, rng)`` that returns ``n`` outputs for the input
``x`` (a 1-D numpy array), drawing its randomness from the numpy ``Generator`` ``rng``. Outputs
have shape ``(n,)`` or ``(n, k)`` and are numbers (float, integer or boolean). This module calls
a mechanism and turns anything else into a :class:`~certify.MechanismError` that names the
mechanism, the input and the problem.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeAlias

import numpy as np
from numpy.typing import NDArray

from certify.errors import MechanismError, ParameterError

__all__ = [
    "FRESHNESS_BATCHES",
    "FRESHNESS_CALLS",
    "Mechanism",
    "call_mechanism",
    "canonical_input",
    "check_calls",
    "check_fresh_randomness",
    "input_label",
    "is_discrete",
    "mechanism_identity",
    "mechanism_name",
]

Mechanism: TypeAlias = Callable[[NDArray[Any], int, np.random.Generator], Any]
"""A callable ``mechanism(x, n, rng)`` returning ``n`` outputs for input ``x``."""


def canonical_input(x: object, name: str = "input") -> NDArray[Any]:
    """A mechanism input as a read-only 1-D numeric array (integers stay integers).

    Parameters
    ----------
    x : array_like
        A number or a 1-D sequence of numbers (a database, or a vector of query answers).
    name : str, default "input"
        How the input is named in error messages.

    Returns
    -------
    numpy.ndarray
        int64 when every entry is an integer (or boolean), float64 otherwise.

    Raises
    ------
    ParameterError
        If ``x`` is empty, not numeric, more than 1-D, or holds NaN or infinity.

    Examples
    --------
    >>> canonical_input([1, 2, 3]).dtype.name, canonical_input(0.5).tolist()
    ('int64', [0.5])
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ParameterError(f"{name} must be a number or a 1-D list of numbers; got {x!r:.80}.") from exc
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(
            f"{name} must be a number or a non-empty 1-D list of numbers; got shape {arr.shape}."
        )
    if arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.integer):
        out = arr.astype(np.int64)
    elif np.issubdtype(arr.dtype, np.floating):
        out = arr.astype(np.float64)
        if not np.all(np.isfinite(out)):
            raise ParameterError(f"{name} must hold finite numbers; got {out.tolist()!r:.80}.")
    else:
        raise ParameterError(f"{name} must hold numbers; got dtype {arr.dtype} ({x!r:.80}).")
    out.setflags(write=False)
    return out


def input_label(x: NDArray[Any]) -> str:
    """A canonical text label of an input: compact JSON of its entries.

    Examples
    --------
    >>> input_label(canonical_input([1, 1, 0]))
    '[1,1,0]'
    """
    return json.dumps(x.tolist(), separators=(",", ":"))


def mechanism_name(mechanism: object) -> str:
    """A readable name: the suite name, or ``module:qualname`` (of the class for instances)."""
    suite_name = getattr(mechanism, "suite_name", None)
    if isinstance(suite_name, str):
        return suite_name
    target = _unwrap(mechanism)
    if not (inspect.isfunction(target) or inspect.ismethod(target) or inspect.isbuiltin(target)):
        target = type(target)
    module = getattr(target, "__module__", None) or "?"
    qualname = getattr(target, "__qualname__", None) or getattr(target, "__name__", "?")
    return f"{module}:{qualname}"


def _unwrap(mechanism: object) -> object:
    """The function inside a ``functools.partial`` (any depth)."""
    while isinstance(mechanism, functools.partial):
        mechanism = mechanism.func
    return mechanism


def mechanism_identity(mechanism: object) -> str:
    """The identity under which a mechanism's evaluations are counted in the ledger.

    Parameters
    ----------
    mechanism : callable
        A suite mechanism or any callable.

    Returns
    -------
    str
        ``"suite:NAME"`` for a suite mechanism; otherwise ``"module:qualname"`` plus the first
        16 hex digits of a SHA-256 of its source code where Python can provide it (and of the
        arguments bound by ``functools.partial``), so an edited mechanism is a new identity.

    Examples
    --------
    >>> mechanism_identity(len).startswith("builtins:len")
    True
    """
    suite_name = getattr(mechanism, "suite_name", None)
    if isinstance(suite_name, str):
        return f"suite:{suite_name}"
    name = mechanism_name(mechanism)
    target = _unwrap(mechanism)
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = type(target)
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError):
        source = ""
    bound = ""
    if isinstance(mechanism, functools.partial):
        bound = repr((mechanism.args, sorted(mechanism.keywords.items())))
    elif target is type(_unwrap(mechanism)):
        shown = repr(mechanism)  # an instance: its parameters, when its repr shows them
        if " at 0x" not in shown:
            bound = shown
    if not source and not bound:
        return name
    digest = hashlib.sha256((source + "\x00" + bound).encode()).hexdigest()[:16]
    return f"{name}#{digest}"


def _problem(name: str, label: str, n: int, what: str) -> MechanismError:
    """A MechanismError naming the mechanism, the input and the problem."""
    return MechanismError(
        f"mechanism {name!r} on input {label} (n={n}) {what}. A mechanism must return n numeric "
        "outputs, shape (n,) or (n, k), with no NaN or infinity."
    )


def call_mechanism(
    mechanism: Mechanism,
    x: NDArray[Any],
    n: int,
    rng: np.random.Generator,
    *,
    name: str,
    label: str,
    width: int | None = None,
) -> NDArray[np.float64]:
    """Call a mechanism for ``n`` outputs and return them as a float64 matrix.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(x, n, rng)``.
    x : numpy.ndarray
        The input (from :func:`canonical_input`); the mechanism gets a writable copy.
    n : int
        Number of calls (outputs).
    rng : numpy.random.Generator
        The only randomness the mechanism may use.
    name, label : str
        The mechanism's name and the input's label, for error messages.
    width : int, optional
        The output dimension seen before; a different one is an error.

    Returns
    -------
    numpy.ndarray, shape (n, k)
        The outputs as float64 (integers and booleans exactly).

    Raises
    ------
    MechanismError
        If the mechanism raises, or returns non-numeric values, NaN or infinity, integers beyond
        2**53 in absolute value (float64 would merge them), a shape other than ``(n,)`` or
        ``(n, k)``, a number of outputs other than ``n``, or another dimension than ``width``.
    """
    try:
        raw = mechanism(np.array(x), n, rng)
    except MechanismError:
        raise
    except Exception as exc:
        raise _problem(name, label, n, f"raised {type(exc).__name__}: {exc}") from exc
    try:
        out = np.asarray(raw)
    except Exception as exc:
        raise _problem(name, label, n, f"returned {type(raw).__name__}, not an array") from exc
    if out.dtype == np.bool_:
        out = out.astype(np.float64)
    elif np.issubdtype(out.dtype, np.integer):
        if out.size and (int(out.max()) > 2**53 or int(out.min()) < -(2**53)):
            big = int(out.max()) if int(out.max()) > 2**53 else int(out.min())
            raise MechanismError(
                f"mechanism {name!r} on input {label} (n={n}) returned the integer {big}, beyond "
                "2**53: outputs are compared as float64, which cannot hold such integers exactly, "
                "so distinct outputs would merge. Return smaller integers (e.g. an offset from a "
                "fixed value) or floats."
            )
    elif not np.issubdtype(out.dtype, np.floating):
        raise _problem(name, label, n, f"returned non-numeric outputs (dtype {out.dtype})")
    if out.ndim == 1:
        out = out.reshape(-1, 1)
    if out.ndim != 2 or out.shape[1] == 0:
        raise _problem(name, label, n, f"returned shape {out.shape}")
    if out.shape[0] != n:
        raise _problem(name, label, n, f"returned {out.shape[0]} outputs")
    if width is not None and out.shape[1] != width:
        raise _problem(
            name, label, n, f"returned outputs of dimension {out.shape[1]}, earlier {width}"
        )
    values = np.ascontiguousarray(out, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        bad = "NaN" if np.isnan(values).any() else "infinity"
        raise _problem(name, label, n, f"returned {bad}")
    return values


FRESHNESS_CALLS: Final = 32
"""Calls per batch of :func:`check_fresh_randomness`."""
FRESHNESS_BATCHES: Final = 5
"""Batches, each drawn with a generator of its own seed, of :func:`check_fresh_randomness`."""


def check_fresh_randomness(
    mechanism: Mechanism,
    inputs: Sequence[tuple[str, NDArray[Any]]],
    *,
    name: str,
    width: int,
    seed: int,
) -> None:
    """Refuse a mechanism whose outputs do not come from the generator it is given.

    On each input, :data:`FRESHNESS_BATCHES` batches of :data:`FRESHNESS_CALLS` calls are drawn,
    each with a generator from another seed (children of ``SeedSequence(seed, spawn_key=(2,))``,
    a stream no development or reserved call uses), and compared.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(x, n, rng)``.
    inputs : sequence of (label, input)
        The distinct inputs of the audit.
    name : str
        The mechanism's name, for messages.
    width : int
        Output dimension seen before.
    seed : int
        The audit's seed.

    Raises
    ------
    MechanismError
        If the batches are identical although not constant (the mechanism ignores ``rng``:
        it reseeds itself or keeps a generator of its own, so every batch repeats the same
        "random" outputs), or if each batch repeats one value while the batches differ (one
        random draw per invocation, repeated for all ``n`` calls). Either way its calls are
        not independent and no certificate could hold.

    Notes
    -----
    False alarms: for any mechanism whose calls are independent draws from one law, ``B = 5``
    identical non-constant batches of ``m = 32`` calls have probability at most ``(1/m) (1 -
    1/m)^(m-1)`` to the power ``B - 1``, below ``2e-8`` (the most likely non-constant batch
    has one output off the mode); constant batches of two different values, at most
    ``4^-m``. Constant, equal batches (a deterministic output on that input) are accepted: such
    calls are trivially independent. What the check cannot see is in docs/trust.md: a
    mechanism that mixes ``rng`` with randomness of its own, reseeds from the clock or a
    counter, repeats itself with a longer period, or makes calls depend on each other in
    other ways. The cost is ``B * m = 160`` calls per input, outside the budget.
    """
    seeds = np.random.SeedSequence(seed, spawn_key=(2,)).spawn(FRESHNESS_BATCHES)
    for label, x in inputs:
        batches = [
            call_mechanism(
                mechanism, x, FRESHNESS_CALLS, np.random.Generator(np.random.PCG64(s)), name=name,
                label=label, width=width,
            )
            for s in seeds
        ]
        constant = [bool((b == b[0]).all()) for b in batches]
        if all(np.array_equal(b, batches[0]) for b in batches[1:]):
            if constant[0]:
                continue
            raise MechanismError(
                f"mechanism {name!r} on input {label} returned the same {FRESHNESS_CALLS} outputs "
                f"for {FRESHNESS_BATCHES} generators of different seeds: it does not draw its "
                "randomness from the rng it is given (it reseeds itself, e.g. with "
                "np.random.default_rng(0) inside, or keeps a generator of its own). Its calls "
                "would repeat each other, so no certificate could hold. Draw every random number "
                "from rng."
            )
        if all(constant):
            raise MechanismError(
                f"mechanism {name!r} on input {label} returned one value repeated for all "
                f"{FRESHNESS_CALLS} calls of each invocation, a different one for each seed: it "
                "draws one random value per invocation instead of one per call. Its calls would "
                "not be independent, so no certificate could hold. Return n independent outputs."
            )


def is_discrete(outputs: NDArray[np.float64]) -> bool:
    """Whether every output coordinate holds whole numbers (integer or boolean outputs)."""
    head = outputs[:64]  # continuous outputs show a fraction within a few rows: no full pass
    if not np.all(head == np.round(head)):
        return False
    return bool(np.all(outputs == np.round(outputs)))


def check_calls(calls: object, name: str = "calls", minimum: int = 1) -> int:
    """Validate a number of mechanism calls."""
    if isinstance(calls, bool) or not isinstance(calls, numbers.Integral) or int(calls) < minimum:
        raise ParameterError(f"{name} must be an integer >= {minimum}; got {calls!r}.")
    value = int(calls)
    if value > 2**53 or not math.isfinite(value):
        raise ParameterError(f"{name} must be at most 2**53; got {calls!r}.")
    return value
