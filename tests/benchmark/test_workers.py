"""The grid's local pool: a worker that loky replaces for its memory shows as one certify line."""

from __future__ import annotations

import re
import time
import warnings
from typing import Any

import numpy as np
import pytest

_HELD: list[Any] = []
_RUN = [0]


def _task(k: int) -> int:
    """A task of about 1.2 s; from task 4 on, a worker's second task or later keeps 400 MB alive once.

    Never a worker's first task: loky measures a worker's memory growth from the end of its
    first task, and on a loaded machine a worker can start late and take task 4 first.
    """
    _RUN[0] += 1
    if k >= 4 and _RUN[0] > 1 and not _HELD:
        _HELD.append(np.ones(50_000_000))
    time.sleep(1.2)
    return k


@pytest.mark.slow
def test_a_worker_restart_is_said_in_one_line_without_a_raw_warning(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Loky's 'A worker stopped ...' UserWarning becomes a [certify] line; every task still returns."""
    from certify.benchmark._workers import _Executor

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with _Executor(2, "local", None) as pool:
            done = sorted(result for _, result in pool.map_unordered(_task, [(k,) for k in range(10)]))
    assert done == list(range(10))
    assert not [w for w in seen if "A worker stopped" in str(w.message)]
    err = capsys.readouterr().err
    assert re.search(r"\[certify\] \d+ worker restart\(s\): a worker's memory grew by more than 300 MB", err)
    assert "UserWarning" not in err


def test_other_warnings_pass_through() -> None:
    """A warning that is not loky's restart notice is passed on unchanged."""
    from certify.benchmark._workers import _restate_warnings

    with warnings.catch_warnings(record=True) as inner:
        warnings.simplefilter("always")
        warnings.warn("something else", RuntimeWarning, stacklevel=1)
    with pytest.warns(RuntimeWarning, match="something else"):
        _restate_warnings(inner)
