"""Type tests: user scripts mypy --strict must accept, and misuses it must reject by error code."""

from __future__ import annotations

import re
import runpy
from collections import defaultdict
from pathlib import Path

import pytest
from mypy import api

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
GOOD = sorted((HERE / "good").glob("*.py"))
BAD = sorted((HERE / "bad").glob("*.py"))
ERROR_LINE = re.compile(r"^(?P<path>[^:]+\.py):(?P<line>\d+): error: (?P<message>.*)  \[(?P<code>[a-z-]+)\]$")

pytestmark = pytest.mark.slow


def expected_code(path: Path) -> str:
    """The error code named on the first line of a bad script (``# expect: code``)."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.fullmatch(r"# expect: ([a-z-]+)", first)
    assert match is not None, f"{path.name} must start with '# expect: <error-code>'"
    return match.group(1)


@pytest.fixture(scope="module")
def mypy_codes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """Run mypy --strict once over every good and bad script; map file name to reported codes."""
    cache = tmp_path_factory.mktemp("mypy-cache")
    stdout, stderr, status = api.run(
        [
            "--strict",
            "--config-file", str(ROOT / "pyproject.toml"),
            "--cache-dir", str(cache),
            "--no-error-summary",
            "--no-pretty",
            "--show-error-codes",
            *(str(p) for p in (*GOOD, *BAD)),
        ]
    )
    assert status in (0, 1), f"mypy crashed:\n{stdout}\n{stderr}"
    codes: dict[str, list[str]] = defaultdict(list)
    for line in stdout.splitlines():
        found = ERROR_LINE.match(line)
        if found is not None:
            codes[Path(found["path"]).name].append(found["code"])
        elif ": error:" in line:
            codes[Path(line.split(":", 1)[0]).name].append("<no code>")
    return dict(codes)


def test_there_are_scripts() -> None:
    """The suite holds good and bad scripts, each bad one naming a distinct file."""
    assert len(GOOD) >= 3 and len(BAD) >= 7
    assert len({p.name for p in (*GOOD, *BAD)}) == len(GOOD) + len(BAD)


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_good_script_passes_mypy(mypy_codes: dict[str, list[str]], path: Path) -> None:
    """A realistic user script type-checks under mypy --strict with no error."""
    assert mypy_codes.get(path.name, []) == []


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_script_fails_with_its_code(mypy_codes: dict[str, list[str]], path: Path) -> None:
    """A misuse is rejected by mypy with exactly the error code its first line names."""
    assert mypy_codes.get(path.name, []) == [expected_code(path)]


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_good_script_runs(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each good script also runs to completion against the real library."""
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip() != ""
