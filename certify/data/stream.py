"""Reserved draws of a mechanism: made only when a sealed protocol evaluates them, once.

A :class:`ReservedStream` is the mechanism counterpart of :class:`~certify.ReservedSplit`: an
opaque promise of fresh calls, with a fingerprint and per-input counts, that only a sealed
protocol can spend. The calls are made in seeded chunks of :data:`CHUNK_CALLS`; chunk ``j`` of
input ``i`` draws from ``SeedSequence(entropy, spawn_key=(i, j))``, so the outputs, and the counts
kept from them, do not depend on how chunks are grouped, on the worker count or on the backend.
Outputs are never kept: each chunk is scored by the registered tests and only the number of
outputs each test assigns to class 1 travels back, so memory stays flat as calls grow.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, final

import numpy as np
from numpy.typing import NDArray

from certify._core import FrozenMap, check_int
from certify.data.draws import Mechanism, call_mechanism
from certify.errors import ParameterError, ProtocolError

__all__ = ["CHUNK_CALLS", "Backend", "Predictor", "ReservedStream"]

CHUNK_CALLS: Final = 1 << 16
"""Mechanism calls per seeded chunk of the reserved stream (fixed: it defines the draws)."""

Backend: TypeAlias = Literal["local", "dask"]
"""Where the reserved chunks run: this machine (``workers`` processes) or a Dask cluster."""

Predictor: TypeAlias = Callable[[NDArray[np.float64]], NDArray[np.bool_]]
"""A fixed test's decision: output rows in, True where it predicts class 1."""

Progress: TypeAlias = Callable[[int, int], None]
"""Receives ``(calls done, calls in all)``."""


def _chunk_rng(entropy: Sequence[int], input_index: int, chunk: int) -> np.random.Generator:
    """The generator of one reserved chunk."""
    seq = np.random.SeedSequence(list(entropy), spawn_key=(input_index, chunk))
    return np.random.Generator(np.random.PCG64(seq))


def _count_chunks(
    mechanism: Mechanism,
    x: NDArray[Any],
    input_index: int,
    chunks: Sequence[tuple[int, int]],
    entropy: Sequence[int],
    predictors: Sequence[Predictor],
    name: str,
    label: str,
    width: int,
) -> tuple[int, NDArray[np.int64], int]:
    """Draw the given chunks of one input; return ``(input index, class-1 counts, calls)``."""
    counts = np.zeros(len(predictors), dtype=np.int64)
    calls = 0
    for chunk, size in chunks:
        rows = call_mechanism(
            mechanism, x, size, _chunk_rng(entropy, input_index, chunk), name=name, label=label,
            width=width,
        )
        for k, predict in enumerate(predictors):
            counts[k] += int(np.count_nonzero(predict(rows)))
        calls += size
    return input_index, counts, calls


def _count_chunks_single_threaded(*args: Any) -> tuple[int, NDArray[np.int64], int]:
    """:func:`_count_chunks` with BLAS limited to one thread (one task per core)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _count_chunks(*args)


@final
class ReservedStream:
    """Reserved calls of a mechanism on its inputs, made only by a sealed protocol's evaluation.

    Created by :func:`certify.audit_mechanism` (or :meth:`create`). It exposes a fingerprint and
    per-input counts, never outputs; it cannot be pickled or copied into a second chance.

    Attributes
    ----------
    fingerprint : str
        SHA-256 over the mechanism identity, inputs, seed, budget and counts: the reserved draws
        are a function of exactly these.
    counts : Mapping[str, int]
        Reserved calls per input label.
    development_fingerprint : str
        Fingerprint of the development draws the tests were chosen on.
    mechanism_identity : str
        Identity under which the ledger counts evaluations of this mechanism.
    seed : int
        The audit's seed.
    calls : int
        The audit's whole budget (development and reserved calls).
    """

    __slots__ = (
        "_arrays",
        "_entropy",
        "_mechanism",
        "_name",
        "_spent",
        "_width",
        "calls",
        "counts",
        "development_fingerprint",
        "fingerprint",
        "inputs",
        "mechanism_identity",
        "seed",
    )

    fingerprint: str
    counts: Mapping[str, int]
    development_fingerprint: str
    mechanism_identity: str
    seed: int
    calls: int
    inputs: Mapping[str, Any]
    _mechanism: Mechanism
    _arrays: dict[str, NDArray[Any]]
    _entropy: tuple[int, ...]
    _name: str
    _width: int
    _spent: bool

    def __init__(self) -> None:
        raise ProtocolError(
            "a ReservedStream is created by certify.audit_mechanism(...) or ReservedStream.create(...)."
        )

    @classmethod
    def create(
        cls,
        mechanism: Mechanism,
        inputs: Mapping[str, NDArray[Any]],
        reserved_calls: Mapping[str, int],
        *,
        identity: str,
        name: str,
        seed: int,
        calls: int,
        width: int,
        development_fingerprint: str,
    ) -> ReservedStream:
        """A reserved stream of ``reserved_calls[label]`` fresh calls on each labelled input.

        Parameters
        ----------
        mechanism : callable
            ``mechanism(x, n, rng)``.
        inputs : Mapping[str, numpy.ndarray]
            Input label -> input (from :func:`certify.data.draws.canonical_input`).
        reserved_calls : Mapping[str, int]
            Input label -> reserved calls (>= 1).
        identity, name : str
            The mechanism's ledger identity and readable name.
        seed : int
            The audit's seed; with the identity, inputs and budget it fixes the draws.
        calls : int
            The audit's whole budget.
        width : int
            Output dimension seen on development draws.
        development_fingerprint : str
            Fingerprint of the development draws.

        Returns
        -------
        ReservedStream

        Raises
        ------
        ParameterError
            If the labels of ``inputs`` and ``reserved_calls`` differ or a count is below 1.
        """
        if set(inputs) != set(reserved_calls) or len(inputs) < 2:
            raise ParameterError(
                "inputs and reserved_calls must name the same two or more input labels; got "
                f"{sorted(inputs)} and {sorted(reserved_calls)}."
            )
        for label, n in reserved_calls.items():
            check_int(n, f"reserved calls of {label!r}", 1)
        self = object.__new__(cls)
        labels = sorted(inputs)
        self._mechanism = mechanism
        self._arrays = {k: inputs[k] for k in labels}
        self._name = name
        self._width = int(width)
        self._spent = False
        self.mechanism_identity = identity
        self.seed = int(seed)
        self.calls = int(calls)
        self.inputs = FrozenMap({k: json.dumps(inputs[k].tolist()) for k in labels})
        self.counts = FrozenMap({k: int(reserved_calls[k]) for k in labels})  # type: ignore[assignment]
        self.development_fingerprint = development_fingerprint
        content = json.dumps(
            {
                "format": "certify.reserved-stream.v1",
                "identity": identity,
                "inputs": {k: inputs[k].tolist() for k in labels},
                "dtypes": {k: inputs[k].dtype.name for k in labels},
                "seed": self.seed,
                "calls": self.calls,
                "reserved": dict(self.counts),
                "chunk": CHUNK_CALLS,
            },
            sort_keys=True,
        )
        digest = hashlib.sha256(content.encode()).digest()
        self.fingerprint = digest.hex()
        self._entropy = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4))
        return self

    @property
    def spent(self) -> bool:
        """Whether this object's draws were evaluated (the ledger is the authoritative record)."""
        return self._spent

    def _mark_spent(self) -> None:
        """Record in memory that the draws were made; called only by the protocol."""
        self._spent = True

    def _row_keys(self) -> NDArray[np.uint8]:
        """No row keys: fresh draws share nothing with any other stream or table."""
        return np.empty((0, 16), dtype=np.uint8)

    def _development_keys(self) -> NDArray[np.uint8]:
        """No row keys: development calls are never kept."""
        return np.empty((0, 16), dtype=np.uint8)

    def record_data(self) -> dict[str, Any]:
        """The ``data`` section of a pre-registration record for this stream."""
        return {
            "kind": "mechanism",
            "mechanism": self.mechanism_identity,
            "name": self._name,
            "inputs": {k: json.loads(v) for k, v in self.inputs.items()},
            "seed": self.seed,
            "calls": self.calls,
            "chunk_calls": CHUNK_CALLS,
            "development_fingerprint": self.development_fingerprint,
            "reserved_fingerprint": self.fingerprint,
            "reserved_counts": dict(self.counts),
        }

    def _tasks(self, groups: int) -> list[tuple[int, str, list[tuple[int, int]]]]:
        """``(input index, label, chunks)`` tasks, about ``groups`` per input."""
        tasks: list[tuple[int, str, list[tuple[int, int]]]] = []
        for i, label in enumerate(self.counts):
            n = self.counts[label]
            chunks = [(j, min(CHUNK_CALLS, n - j * CHUNK_CALLS)) for j in range(math.ceil(n / CHUNK_CALLS))]
            per = max(1, math.ceil(len(chunks) / max(groups, 1)))
            tasks.extend((i, label, chunks[s : s + per]) for s in range(0, len(chunks), per))
        return tasks

    def _count(
        self,
        predictors: Sequence[Predictor],
        *,
        backend: Backend = "local",
        workers: int = 1,
        scheduler: str | None = None,
        progress: Progress | None = None,
    ) -> dict[str, NDArray[np.int64]]:
        """Make every reserved call once; per input label, how many outputs each test calls class 1.

        Called only by :meth:`certify.SealedProtocol.evaluate`, after the ledger marked the
        stream spent.
        """
        labels = list(self.counts)
        total = sum(self.counts.values())
        # grouping never changes the draws (each chunk has its own seed); it sets how often
        # progress is reported and how evenly parallel workers are loaded
        tasks = self._tasks(64 if backend == "dask" or workers == 1 else 16 * workers)
        args = [
            (self._mechanism, self._arrays[label], i, chunks, self._entropy, tuple(predictors),
             self._name, label, self._width)
            for i, label, chunks in tasks
        ]
        out = {label: np.zeros(len(predictors), dtype=np.int64) for label in labels}
        done = 0
        if progress is not None:
            progress(0, total)
        for i, counts, calls in _run(args, backend, workers, scheduler):
            out[labels[i]] += counts
            done += calls
            if progress is not None:
                progress(done, total)
        return out

    def __reduce__(self) -> tuple[object, ...]:
        raise ProtocolError(
            "a ReservedStream cannot be pickled or copied: a copy would be a second chance to "
            "draw the same reserved calls."
        )

    def __copy__(self) -> ReservedStream:
        return self

    def __deepcopy__(self, memo: object) -> ReservedStream:
        return self

    def __repr__(self) -> str:
        n = sum(self.counts.values())
        return (
            f"ReservedStream({self._name}, {len(self.counts)} inputs, {n} calls, fingerprint "
            f"{self.fingerprint[:12]}{', spent' if self._spent else ''})"
        )


def _run(
    args: list[tuple[Any, ...]], backend: Backend, workers: int, scheduler: str | None
) -> Iterator[tuple[int, NDArray[np.int64], int]]:
    """Run chunk tasks and yield their results as they complete."""
    if backend == "local" and workers == 1:
        for a in args:
            yield _count_chunks(*a)
        return
    if backend == "local":
        from joblib import Parallel, delayed

        par = Parallel(n_jobs=workers, backend="loky", return_as="generator_unordered", batch_size=1)
        yield from par(delayed(_count_chunks_single_threaded)(*a) for a in args)
        return
    from distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)  # type: ignore[no-untyped-call]
    else:
        client = Client(scheduler)  # type: ignore[no-untyped-call]
    futures = [client.submit(_count_chunks_single_threaded, *a, pure=False) for a in args]
    try:
        for fut in as_completed(futures):  # type: ignore[no-untyped-call]
            yield fut.result()
            fut.release()
    finally:
        client.cancel(futures)  # type: ignore[no-untyped-call]
        client.close()  # type: ignore[no-untyped-call]
        if cluster is not None:
            cluster.close()
