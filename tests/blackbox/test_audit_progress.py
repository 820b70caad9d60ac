"""Progress of a mechanism audit's development stage (the first seconds to minutes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import certify as cf


def _shifted_laplace(x: object, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace noise of scale 1 around the sum of the input."""
    return float(np.sum(np.asarray(x, dtype=float))) + rng.laplace(0.0, 1.0, size=n)


@pytest.mark.slow
def test_development_rounds_are_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    """With progress on, each development round says what it draws before the reserved calls."""
    ledger = cf.Ledger(tmp_path / "p.ledger")
    cf.audit_mechanism(_shifted_laplace, None, None, inputs=[([0.0], [1.0]), ([0.0], [2.0])],
                       calls=40_000, seed=seed % 1000, ledger=ledger, progress=True)
    err = capsys.readouterr().err.splitlines()
    rounds = [line for line in err if line.startswith("development round ")]
    assert rounds and rounds[0].startswith("development round 1/") and "2 input pairs" in rounds[0]
    # the last round: the chosen pair's, or the final round of the pairs the race left; then,
    # where it has several events, their count on fresh calls
    last = ("the chosen pair, every test family", "pairs left, the test families of their last showings")
    chosen = [line for line in rounds if any(text in line for text in last)]
    assert len(chosen) == 1
    assert rounds[rounds.index(chosen[0]) + 1:] in ([], [rounds[-1]])
    assert rounds[-1] == chosen[0] or "fresh calls per input" in rounds[-1]
    assert err.index(rounds[-1]) < next(i for i, line in enumerate(err) if line.startswith("reserved calls"))


def test_no_development_lines_without_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """progress=False prints nothing, development included."""
    cf.audit_mechanism(_shifted_laplace, 0.0, 1.0, calls=20_000, seed=3,
                       ledger=cf.Ledger(tmp_path / "q.ledger"), progress=False)
    assert capsys.readouterr().err == ""
