"""Installing the test extras keeps the library's own dependencies current (nothing pins them down)."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
LIBRARY = sorted(canonicalize_name(Requirement(r).name) for r in PROJECT["dependencies"])
CAPS = ("<", "<=", "==", "===", "~=")


def _caps(name: str) -> list[str]:
    """Installed distributions whose requirements bound ``name`` from above, with the bound."""
    found = []
    for dist in metadata.distributions():
        for text in dist.requires or []:
            req = Requirement(text)
            if canonicalize_name(req.name) != name:
                continue
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue  # an extra nobody asked for, or another platform
            bounds = [str(s) for s in req.specifier if s.operator in CAPS]
            if bounds:
                found.append(f"{dist.metadata['Name']} requires {name}{','.join(bounds)}")
    return found


def test_test_extras_do_not_name_dp_accounting() -> None:
    """dp-accounting caps attrs below 24 in every release that allows numpy 2; it is no test extra."""
    extras = [canonicalize_name(Requirement(r).name) for r in PROJECT["optional-dependencies"]["test"]]
    assert "dp-accounting" not in extras


def test_nothing_installed_caps_attrs() -> None:
    """No installed distribution bounds attrs from above, so pip keeps the newest it can get.

    dp-accounting 0.6 required attrs<24 and pulled attrs 26.1 down to 23.2. (numpy keeps the
    caps of the compiled libraries built against it, scipy and numba, which are no downgrade.)
    """
    assert "attrs" in LIBRARY
    assert _caps("attrs") == [], f"attrs is held back: {_caps('attrs')}"
