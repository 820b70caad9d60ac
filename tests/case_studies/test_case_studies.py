"""The case studies in docs/case-studies: quick forms, verdicts, inputs and the command line.

Each library study runs its quick form (fewer calls than the documented full form) and must end
Inconclusive at every claimed epsilon, with no certified bound above the claim; the planted bug
must be Refuted at every claimed epsilon. Library studies are skipped when the library is not
installed (the ``case-studies`` extra; the ``test`` extra installs it too).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

FOLDER = Path(__file__).resolve().parents[2] / "docs" / "case-studies"

LIBRARY_STUDIES = {
    "opendp_laplace_sum": "opendp",
    "opendp_gaussian_mean": "opendp",
    "opendp_histogram": "opendp",
    "pydp_bounded_sum": "pydp",
    "pydp_bounded_mean": "pydp",
    "pydp_count": "pydp",
}


@pytest.fixture(scope="module", autouse=True)
def _case_studies_importable() -> Iterator[None]:
    """The case-study folder is importable while these tests run."""
    sys.path.insert(0, str(FOLDER))
    yield
    sys.path.remove(str(FOLDER))


def _study(name: str) -> ModuleType:
    """A study script, imported as a module."""
    return importlib.import_module(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(LIBRARY_STUDIES))
def test_library_study_quick_form_is_inconclusive(name: str, tmp_path: Path) -> None:
    """At every claimed epsilon the quick form ends Inconclusive, bounds at most the claim, with reports."""
    pytest.importorskip(LIBRARY_STUDIES[name])
    study = _study(name)
    out = tmp_path
    rows = study.main(quick=True, out=str(out), seed=0)
    if any(r.verdict == "Refuted" for r in rows):
        # the libraries draw their noise from the operating system, not from the audit's seed,
        # so this cannot be a fixed-seed test: a claim that holds with equality on the chosen
        # event (python-dp's Count at epsilon 1 certified 1.0086 once in 30,000 calls) is
        # refuted by chance at a rate up to 1 - level_used, about 3%; a fresh, independent run
        # must refute it too (about 0.1%), as it would a claim the library breaks
        out = tmp_path / "again"
        rows = study.main(quick=True, out=str(out), seed=1)
    assert [r.claimed_epsilon for r in rows] == [0.1, 1.0, 8.0]
    for r in rows:
        assert r.verdict == "Inconclusive", r
        assert r.epsilon_lower <= r.claimed_epsilon, r
        assert r.calls == study.STUDY.quick_calls
        summary = json.loads((out / f"epsilon-{r.claimed_epsilon:g}" / "summary.json").read_text())
        assert summary["verdict"] == "Inconclusive"
        assert summary["library"] == r.library
    assert max(r.epsilon_lower for r in rows) > 0.5  # the audits have power: not vacuous
    report = (out / "epsilon-8" / "mechanism.md").read_text()
    assert "## Case study" in report and "fresh, independent release" in report


@pytest.mark.slow
def test_planted_bug_is_refuted_at_every_claimed_epsilon(tmp_path: Path) -> None:
    """The mean with data-derived clipping bounds is Refuted at epsilon 0.1, 1 and 8 in its quick form."""
    study = _study("planted_data_bounds_mean")
    rows = study.main(quick=True, out=str(tmp_path), seed=0)
    assert [(r.claimed_epsilon, r.verdict) for r in rows] == [
        (0.1, "Refuted"), (1.0, "Refuted"), (8.0, "Refuted")
    ]
    assert all(r.epsilon_lower > r.claimed_epsilon for r in rows)
    report = (tmp_path / "epsilon-1" / "mechanism.md").read_text()
    assert "**Refuted.**" in report and "reproducible bit for bit" in report


@pytest.mark.slow
def test_planted_bug_script_is_reproducible_bit_for_bit(tmp_path: Path) -> None:
    """The planted bug draws from certify's generator: two runs of its script give equal bounds."""
    bounds = []
    for run in ("a", "b"):
        done = subprocess.run(
            [sys.executable, str(FOLDER / "planted_data_bounds_mean.py"), "--quick", "--out",
             str(tmp_path / run)],
            capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stderr
        rows = json.loads((tmp_path / run / "results.json").read_text())
        bounds.append([r["epsilon_lower"] for r in rows])
    assert bounds[0] == bounds[1]
    assert len(bounds[0]) == 3


def test_inputs_denote_neighbouring_data_sets() -> None:
    """[-1, 0] is the data set, [i, v] replaces record i, [size, v] adds a record; others raise."""
    releases = _study("releases")
    base = releases.column("wine", "alcohol")
    assert np.array_equal(releases.data_set(np.array([-1.0, 0.0]), "wine", "alcohol"), base)
    replaced = releases.data_set(np.array([3.0, 15.0]), "wine", "alcohol")
    assert replaced.size == base.size and replaced[3] == 15.0
    assert np.count_nonzero(replaced != base) == 1
    added = releases.data_set(np.array([float(base.size), 10.0]), "wine", "alcohol")
    assert added.size == base.size + 1 and added[-1] == 10.0 and np.array_equal(added[:-1], base)
    i, v = releases.replace_one("wine", "alcohol", 15.0)
    assert v == 15.0 and base[int(i)] == base.min()
    with pytest.raises(ValueError, match="x\\[0\\] must be an integer"):
        releases.data_set(np.array([base.size + 1.0, 1.0]), "wine", "alcohol")
    with pytest.raises(ValueError, match="holds integers"):
        releases.data_set(np.array([0.0, 2.5]), "digits", "target")
    with pytest.raises(ValueError, match="has no column"):
        releases.column("wine", "colour")


def test_planted_bug_rejects_data_outside_its_declared_bounds() -> None:
    """The planted mean refuses data outside [0, 5000] instead of releasing it."""
    releases = _study("releases")
    with pytest.raises(ValueError, match="declared bounds"):
        releases.planted_mean_data_bounds(np.array([0.0, 6000.0]), 3, np.random.default_rng(0))


@pytest.mark.slow
def test_a_release_audits_from_the_command_line(tmp_path: Path) -> None:
    """Certify audit-mechanism runs a case-study release as module:function and prints its verdict."""
    pytest.importorskip("pydp")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FOLDER), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [
            sys.executable, "-m", "certify.cli", "audit-mechanism", "releases:pydp_count",
            "--input-a", "[-1, 0]", "--input-b", "[1797, 0]", "--calls", "20000",
            "--claim-epsilon", "1", "--json", "--ledger", str(tmp_path / "cli.ledger"),
        ],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["verdict"] == "Inconclusive"
    assert 0.0 <= summary["epsilon_lower"] <= 1.0


@pytest.mark.slow
def test_a_run_without_out_writes_to_the_current_folder(tmp_path: Path) -> None:
    """A user's run writes its reports under the current folder and leaves the committed results."""
    committed = FOLDER / "results"
    before = {p: p.stat().st_mtime_ns for p in committed.rglob("*") if p.is_file()}
    done = subprocess.run(
        [sys.executable, str(FOLDER / "planted_data_bounds_mean.py"), "--quick"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    written = tmp_path / "case-studies-quick" / "planted-data-bounds-mean"
    folders = sorted(p.name for p in written.iterdir() if p.is_dir())
    assert folders == ["epsilon-0.1", "epsilon-1", "epsilon-8"]
    assert (written / "epsilon-1" / "mechanism.md").exists()
    assert {p: p.stat().st_mtime_ns for p in committed.rglob("*") if p.is_file()} == before
