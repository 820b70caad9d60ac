"""Type tests: user scripts mypy --strict must accept, and misuses it must reject by error code.

mypy runs as a user runs it: ``python -m mypy --strict`` on copies of the scripts in a temporary
folder outside the repository, with no configuration file and no ``MYPYPATH``, so certify is found
only through the installed package (README's ``pip install -e .``), never through the repository.
"""

from __future__ import annotations

import os
import re
import runpy
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
GOOD = sorted((HERE / "good").glob("*.py"))
BAD = sorted((HERE / "bad").glob("*.py"))
ERROR_LINE = re.compile(r"^(?P<path>[^:]+\.py):(?P<line>\d+): error: (?P<message>.*)  \[(?P<code>[a-z-]+)\]$")
# Error codes that plain ``mypy --strict`` leaves off; docs/statuses.md names the flag a user adds.
OPT_IN_CODES = frozenset({"truthy-bool"})
# scikit-learn ships no type information; a user script importing it needs this (or an override).
USER_FLAGS = ("--strict", "--disable-error-code", "import-untyped")

pytestmark = pytest.mark.slow


def expected_code(path: Path) -> str:
    """The error code named on the first line of a bad script (``# expect: code``)."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    match = re.fullmatch(r"# expect: ([a-z-]+)", first)
    assert match is not None, f"{path.name} must start with '# expect: <error-code>'"
    return match.group(1)


def run_user_mypy(
    folder: Path, cache: Path, flags: tuple[str, ...], names: list[str]
) -> dict[str, list[str]]:
    """Run mypy in ``folder`` as a user would; map each file name to the error codes reported."""
    env = {key: value for key, value in os.environ.items() if key not in ("MYPYPATH", "PYTHONPATH")}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", *flags, "--cache-dir", str(cache), "--no-error-summary",
         "--no-pretty", "--show-error-codes", *names],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode in (0, 1), f"mypy crashed:\n{done.stdout}\n{done.stderr}"
    codes: dict[str, list[str]] = defaultdict(list)
    for line in done.stdout.splitlines():
        found = ERROR_LINE.match(line)
        if found is not None:
            codes[Path(found["path"]).name].append(found["code"])
        elif ": error:" in line:
            codes[Path(line.split(":", 1)[0]).name].append(f"<no code: {line}>")
    return dict(codes)


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the repository holding copies of every good and bad script."""
    folder = tmp_path_factory.mktemp("user-scripts")
    assert not folder.resolve().is_relative_to(ROOT.resolve())
    for path in (*GOOD, *BAD):
        shutil.copy(path, folder / path.name)
    return folder


@pytest.fixture(scope="module")
def mypy_codes(user_folder: Path) -> dict[str, list[str]]:
    """Plain ``mypy --strict`` over every script, from the user's folder."""
    names = [p.name for p in (*GOOD, *BAD)]
    return run_user_mypy(user_folder, user_folder / ".mypy-cache", USER_FLAGS, names)


@pytest.fixture(scope="module")
def opt_in_codes(user_folder: Path) -> dict[str, list[str]]:
    """``mypy --strict`` with the opt-in codes docs/statuses.md asks for, on the scripts needing them."""
    names = [p.name for p in BAD if expected_code(p) in OPT_IN_CODES]
    flags = [*USER_FLAGS]
    for code in sorted(OPT_IN_CODES):
        flags += ["--enable-error-code", code]
    return run_user_mypy(user_folder, user_folder / ".mypy-cache-opt-in", tuple(flags), names)


def test_there_are_scripts() -> None:
    """The suite holds good and bad scripts, each bad one naming a distinct file."""
    assert len(GOOD) >= 3 and len(BAD) >= 7
    assert len({p.name for p in (*GOOD, *BAD)}) == len(GOOD) + len(BAD)


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_good_script_passes_mypy(mypy_codes: dict[str, list[str]], path: Path) -> None:
    """A realistic user script type-checks under mypy --strict outside the repository, with no error."""
    assert mypy_codes.get(path.name, []) == []


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_script_fails_with_its_code(
    mypy_codes: dict[str, list[str]], opt_in_codes: dict[str, list[str]], path: Path
) -> None:
    """A misuse is rejected with exactly the error code its first line names (opt-in codes when enabled)."""
    code = expected_code(path)
    if code in OPT_IN_CODES:
        assert opt_in_codes.get(path.name, []) == [code]
        # Plain --strict does not catch it: docs/statuses.md must say which flag does.
        assert mypy_codes.get(path.name, []) == []
    else:
        assert mypy_codes.get(path.name, []) == [code]


def test_statuses_doc_names_the_opt_in_flag() -> None:
    """docs/statuses.md, which says mypy rejects truth-testing, names the flag that makes it do so."""
    text = (ROOT / "docs" / "statuses.md").read_text(encoding="utf-8")
    for code in OPT_IN_CODES:
        assert f"--enable-error-code {code}" in text


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_good_script_runs(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each good script also runs to completion against the real library."""
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip() != ""
