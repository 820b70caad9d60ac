"""The example scripts in docs/examples run to completion (each in a fresh process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "docs" / "examples").glob("*.py"))


def test_there_are_at_least_three_examples() -> None:
    """The docs ship at least three example scripts."""
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script: Path) -> None:
    """The script exits 0 and prints status-labelled output."""
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert "Traceback" not in done.stderr


ROOT = Path(__file__).resolve().parents[1]
SNIPPET_DOCS = ("README.md", "docs/quickstart.md")


def python_snippets(doc: str) -> list[str]:
    """The ```python blocks of a Markdown file, in order."""
    import re

    return re.findall(r"```python\n(.*?)```", (ROOT / doc).read_text(encoding="utf-8"), re.S)


def digits_csv(path: Path) -> None:
    """scikit-learn's digits (10 identities, 64 coordinates, 16 constant in some) as a CSV table."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("identity," + ",".join(f"x{j}" for j in range(64)) + "\n")
        for label, row in zip(digits.target.tolist(), digits.data.tolist(), strict=True):
            fh.write(f"digit{label}," + ",".join(f"{v:g}" for v in row) + "\n")


def test_docs_hold_python_snippets() -> None:
    """README and the quickstart show Python snippets (the test below runs them)."""
    assert len(python_snippets("README.md")) >= 2 and len(python_snippets("docs/quickstart.md")) >= 1


@pytest.mark.slow
@pytest.mark.parametrize(
    ("doc", "index"),
    [(doc, i) for doc in SNIPPET_DOCS for i in range(len(python_snippets(doc)))],
    ids=lambda v: str(v),
)
def test_snippet_runs_twice_without_a_traceback(doc: str, index: int, tmp_path: Path) -> None:
    """A docs snippet runs in a fresh folder; its rerun is refused in one line, never a traceback.

    The folder holds ``outputs.csv`` (the 10 digits) for the quickstart's table.
    """
    import os

    (tmp_path / "snippet.py").write_text(python_snippets(doc)[index], encoding="utf-8")
    digits_csv(tmp_path / "outputs.csv")
    env = {**os.environ, "CERTIFY_LEDGER": str(tmp_path / "user.ledger")}
    runs = [
        subprocess.run([sys.executable, "snippet.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
        for _ in range(2)
    ]
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[0].stdout.strip()
    for done in runs:
        assert "Traceback" not in done.stderr, done.stderr
    # every snippet spends reserved data once: its rerun must be the documented refusal
    assert runs[1].returncode == 1
    assert runs[1].stderr.splitlines()[-1].startswith("refused: reserved split"), runs[1].stderr


def test_readme_states_the_suite_time_and_a_fast_subset() -> None:
    """README says how long the tests take and offers the fast subset; CI still runs everything."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert '.venv/bin/pytest -n 2 -m "not slow"' in readme
    assert re.search(r"The whole suite takes about \d+ minutes", readme)
    assert re.search(r"\(about \d+ minutes? on 2 cores", readme)
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if "pytest" in line]
    assert ci and all(" -m " not in line.split("bin/pytest", 1)[1] for line in ci)
    # CI runs README's test command as it is written
    command = next(line for line in readme.splitlines() if 'pip install -e ".[test]"' in line)
    assert any(command.split("&& ", 1)[1] in line for line in ci), (command, ci)
