"""Where the grid's tasks run (this process, loky workers, a Dask cluster) and how workers are set up."""

from __future__ import annotations

import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, Literal, TypeAlias

__all__ = ["Backend"]

Backend: TypeAlias = Literal["local", "dask"]


def _keep_freed_memory() -> None:
    """Let this worker's C allocator reuse freed memory instead of returning it to the system.

    A setting allocates and frees arrays of up to ~100 MB many times; by default glibc maps
    each one freshly and zero-fills its pages on first touch. Raising the mmap and trim
    thresholds (glibc's ``mallopt``) keeps the freed heap for the next allocation: on a sample
    of paper-preset settings, minor page faults fell from about 560,000 to 16,000 and system
    time from 4.0 s to 1.2 s per 45 s of user time (about 6% of a worker's CPU). Between tasks
    the freed heap goes back to the system (:func:`_return_freed_memory`), so loky's check of a
    worker's memory growth sees what the worker holds. Linux with glibc only; elsewhere nothing
    happens.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
        libc.mallopt(m_mmap_threshold, 2**31 - 1)
        libc.mallopt(m_trim_threshold, 2**31 - 1)
        libc.mallopt(m_top_pad, 256 << 20)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return


def _return_freed_memory() -> None:
    """Give this worker's freed heap back to the system between tasks (glibc ``malloc_trim``).

    Within a task, freed memory is kept for reuse (:func:`_keep_freed_memory`). Between tasks it
    is returned, so that the worker's resident memory is what it holds, not the peak of its
    largest setting so far. loky restarts a worker whose resident memory exceeds that after its
    first task by 300 MB; the first task is a small reference chunk (about 280 MB resident), and
    a main-grid setting at n = 300, d = 512 left about 660 MB resident with the heap kept: each
    worker restarted once and joblib warned "A worker stopped while some jobs were given to the
    executor" (no task was lost: a worker stops only after returning its result). Trimmed, the
    worker holds 310 MB after such settings against 243 MB after its first task, at the same CPU
    time per setting; with or without trimming the memory plateaus across settings (no leak).
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return


class _SingleThreaded:
    """Run BLAS single-threaded while any task is active (safe with concurrent threads)."""

    _lock = threading.Lock()
    _active = 0
    _limiter: Any = None
    _pinned = False

    @classmethod
    def pin_process(cls) -> None:
        """Limit BLAS and numba to one thread for the rest of this (worker) process."""
        with cls._lock:
            if cls._pinned:
                return
            from threadpoolctl import threadpool_limits  # type: ignore[import-untyped, unused-ignore]

            threadpool_limits(limits=1)
            try:
                import numba

                numba.set_num_threads(1)
            except ImportError:  # pragma: no cover - numba is a dependency
                pass
            _keep_freed_memory()
            cls._pinned = True

    def __enter__(self) -> None:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped, unused-ignore]

        with _SingleThreaded._lock:
            if _SingleThreaded._pinned:
                return
            if _SingleThreaded._active == 0:
                _SingleThreaded._limiter = threadpool_limits(limits=1)
            _SingleThreaded._active += 1

    def __exit__(self, *exc: object) -> None:
        with _SingleThreaded._lock:
            if _SingleThreaded._pinned:
                return
            _SingleThreaded._active -= 1
            if _SingleThreaded._active == 0 and _SingleThreaded._limiter is not None:
                _SingleThreaded._limiter.restore_original_limits()
                _SingleThreaded._limiter = None


class _Executor:
    """Runs tasks in this process, through joblib (loky), or on a Dask cluster; one pool per run."""

    def __init__(self, workers: int, backend: Backend, scheduler: str | None) -> None:
        self.workers, self.backend, self.scheduler = workers, backend, scheduler
        self._client: Any = None
        self._cluster: Any = None

    def __enter__(self) -> _Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    def _dask_client(self) -> Any:
        """Connect (once) to the scheduler, or start a LocalCluster."""
        if self._client is None:
            from distributed import Client, LocalCluster

            if self.scheduler is None:
                self._cluster = LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=self.workers, threads_per_worker=1, processes=True, dashboard_address=None
                )
                self._client = Client(self._cluster)  # type: ignore[no-untyped-call]
            else:
                self._client = Client(self.scheduler)  # type: ignore[no-untyped-call]
        return self._client

    def map_unordered(
        self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]
    ) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, fn(*tasks[index]))`` as each task completes."""
        if not tasks:
            return
        if self.backend == "local":
            if self.workers == 1:
                for k, t in enumerate(tasks):
                    yield k, fn(*t)
                return
            from joblib import Parallel, delayed

            par = Parallel(n_jobs=self.workers, backend="loky", return_as="generator_unordered",
                           batch_size=1)
            caught: list[warnings.WarningMessage] = []
            try:
                with warnings.catch_warnings(record=True) as caught:
                    yield from par(delayed(_indexed_single_threaded)(fn, k, t) for k, t in enumerate(tasks))
            finally:  # outside the recording: restated warnings are shown
                _restate_warnings(caught)
            return
        from distributed import as_completed

        client = self._dask_client()
        futures = [client.submit(_indexed, fn, k, t, pure=False) for k, t in enumerate(tasks)]
        try:
            for fut in as_completed(futures):  # type: ignore[no-untyped-call]
                yield fut.result()
                fut.release()
        finally:
            client.cancel(futures)


_RESTART: Final = "A worker stopped while some jobs were given to the executor"


def _restate_warnings(caught: Sequence[warnings.WarningMessage]) -> None:
    """Say loky's worker restarts in one line of ours; pass every other warning on unchanged.

    loky stops a worker between tasks, after it returned its result, when the worker's memory
    grew by more than 300 MB since its first task, and starts another: no task is lost.
    """
    restarts = 0
    for w in caught:
        if issubclass(w.category, UserWarning) and str(w.message).startswith(_RESTART):
            restarts += 1
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    if restarts:
        sys.stderr.write(
            f"[certify] {restarts} worker restart(s): a worker's memory grew by more than 300 MB "
            "since its first task, so the pool replaced it between tasks; no task was lost.\n"
        )
        sys.stderr.flush()


def _indexed(fn: Callable[..., Any], index: int, task: tuple[Any, ...]) -> tuple[int, Any]:
    """Call ``fn(*task)`` and return the result with its task index."""
    return index, fn(*task)


def _indexed_single_threaded(fn: Callable[..., Any], index: int, task: tuple[Any, ...]) -> tuple[int, Any]:
    """:func:`_indexed` in a local pool worker: BLAS and compiled loops pinned to one thread once.

    The pool already runs one task per core; pinning once per worker process replaces a
    threadpool probe per setting (about 10 ms each). Numbers do not depend on thread counts.
    """
    _SingleThreaded.pin_process()
    try:
        return _indexed(fn, index, task)
    finally:
        _return_freed_memory()
