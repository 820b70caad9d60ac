"""``certify demo``, README's first command, run end to end through the installed entry point."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_demo_runs_from_the_console_script(tmp_path: Path) -> None:
    """The demo exits 0, certifies below the known answer, refuses the second look, writes its reports."""
    script = Path(sys.executable).with_name("certify")
    if not script.exists():
        pytest.skip("the certify console script is not installed next to this interpreter")
    out = tmp_path / "demo-out"
    run = subprocess.run(
        [str(script), "demo", "--out", str(out)], capture_output=True, text=True, timeout=900, check=False
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    # every certified bound is stated with its status and checked against the known answer
    verdicts = re.findall(r"\[Certificate\]; exact epsilon = [0-9.]+ \[known reference\] -> (.*)", run.stdout)
    assert verdicts, run.stdout[-2000:]
    assert all(v == "below the truth, as a valid bound must be" for v in verdicts)
    assert "certify: refused:" in run.stdout
    assert "SECOND EVALUATION WAS NOT REFUSED" not in run.stdout
    certificates = json.loads((out / "evaluation" / "certificates.json").read_text())["certificates"]
    assert len(certificates) == len(verdicts)
    for report in ("evaluation/evaluation.html", "describe/describe.html", "benchmark/benchmark.html"):
        assert (out / report).stat().st_size > 0, report
