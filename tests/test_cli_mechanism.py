"""certify audit-mechanism as a user runs it: their module imported from the current folder.

Also the ledger's evaluation number and level on the first line, and ``python -m certify``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from certify.cli import main

MODULE = """\
import numpy as np


def mech(x, n, rng):
    return float(np.sum(x)) + rng.laplace(0.0, 1.0, size=n)
"""


def _script(name: str) -> Path:
    """The console script ``name`` installed beside this interpreter."""
    path = Path(sys.executable).with_name(name)
    if not path.exists():  # pragma: no cover - every install of certify has it
        pytest.skip(f"no {name} script beside {sys.executable}")
    return path


def _env() -> dict[str, str]:
    """The environment without PYTHONPATH, so only the current folder can supply the module."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@pytest.mark.slow
def test_installed_script_imports_a_module_of_the_current_folder(tmp_path: Path) -> None:
    """``certify audit-mechanism buggy:mech`` run beside buggy.py imports it, as ``python -c`` would."""
    (tmp_path / "buggy.py").write_text(MODULE)
    done = subprocess.run(
        [str(_script("certify")), "audit-mechanism", "buggy:mech", "--input-a", "0", "--input-b", "1",
         "--calls", "20000", "--workers", "2", "--json", "--ledger", str(tmp_path / "a.ledger")],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert '"mechanism": "buggy:mech"' in done.stdout


def test_python_dash_m_certify_runs_the_command_line(tmp_path: Path) -> None:
    """``python -m certify`` is the command line (help, version and exit codes)."""
    done = subprocess.run(
        [sys.executable, "-m", "certify", "--version"], cwd=tmp_path, env=_env(),
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "certify 0.1.0"
    bad = subprocess.run(
        [sys.executable, "-m", "certify", "plan"], cwd=tmp_path, env=_env(),
        capture_output=True, text=True, timeout=120,
    )
    assert bad.returncode == 2 and "--n must be given" in bad.stderr


def test_a_missing_module_names_the_folder_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A module that is not in the current folder exits 2 naming that folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    code = main(["audit-mechanism", "nowhere_i27:mech", "--input-a", "0", "--input-b", "1",
                 "--calls", "20000", "--ledger", str(tmp_path / "a.ledger")])
    err = capsys.readouterr().err
    assert code == 2
    assert str(tmp_path) in err and "nowhere_i27.py" in err


def test_first_line_states_evaluation_number_and_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first output line says which evaluation of the mechanism this is and its level."""
    (tmp_path / "counted_i27.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "counted_i27", raising=False)
    ledger = str(tmp_path / "counted.ledger")
    firsts = []
    for seed in ("1", "2"):
        code = main(["audit-mechanism", "counted_i27:mech", "--input-a", "0", "--input-b", "1",
                     "--calls", "20000", "--seed", seed, "--ledger", ledger])
        assert code == 0
        firsts.append(capsys.readouterr().err.splitlines()[0])
    assert "evaluation 1 of this mechanism" in firsts[0] and "level 0.9696" in firsts[0]
    assert "evaluation 2 of this mechanism" in firsts[1] and "level 0.9924" in firsts[1]
    assert "1 earlier" in firsts[1] and ledger in firsts[1]
