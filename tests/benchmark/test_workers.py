"""The grid's local pool: a worker that loky replaces for its memory shows as one certify line."""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import pytest

_HELD: list[Any] = []


def _task(k: int) -> int:
    """A task of about 1.2 s; task 4 (no worker's first) keeps 400 MB alive, as a leak would."""
    if k == 4:
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
    assert "[certify] 1 worker restart(s): a worker's memory grew by more than 300 MB" in err
    assert "UserWarning" not in err


def test_other_warnings_pass_through() -> None:
    """A warning that is not loky's restart notice is passed on unchanged."""
    from certify.benchmark._workers import _restate_warnings

    with warnings.catch_warnings(record=True) as inner:
        warnings.simplefilter("always")
        warnings.warn("something else", RuntimeWarning, stacklevel=1)
    with pytest.warns(RuntimeWarning, match="something else"):
        _restate_warnings(inner)
