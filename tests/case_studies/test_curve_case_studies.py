"""The curve case studies in docs/case-studies: zCDP, profiles, one DP-SGD step, too little noise.

Each runs its quick form. A correct release (OpenDP's zCDP Gaussian, python-dp's Gaussian
mechanism, the DP-SGD step under dp_accounting's profile) must end Inconclusive with its
certified parameters at most the truth; the planted bug (noise 20% too small) must be Refuted
under every curve claim and Inconclusive under the (epsilon, 1e-6) point it implies.
"""

from __future__ import annotations

import importlib
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

FOLDER = Path(__file__).resolve().parents[2] / "docs" / "case-studies"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def _case_studies_importable() -> Iterator[None]:
    """The case-study folder is importable while these tests run."""
    sys.path.insert(0, str(FOLDER))
    yield
    sys.path.remove(str(FOLDER))


def _study(name: str) -> ModuleType:
    """A study script, imported as a module."""
    return importlib.import_module(name)


def test_opendp_zcdp_gaussian_is_inconclusive_below_its_rho(tmp_path: Path) -> None:
    """OpenDP's Gaussian mean under its own rho = 0.5: Inconclusive, rho_lower <= 0.5, mu_lower <= 1."""
    pytest.importorskip("opendp")
    rows = _study("opendp_gaussian_zcdp").main(quick=True, out=str(tmp_path), seed=0)
    (row,) = rows
    assert row.kind == "ZCDPClaim" and row.claimed == pytest.approx(0.5)
    assert row.verdict == "Inconclusive"
    assert 0.0 < row.rho_lower <= 0.5 and row.mu_lower <= 1.0
    text = (FOLDER / row.report).resolve().read_text()
    assert "## Certified privacy curves" in text and "rho-zCDP with rho = 0.5" in text


def test_pydp_gaussian_is_inconclusive_under_its_profile_and_point(tmp_path: Path) -> None:
    """python-dp's Gaussian count: its noise's GDP profile and its (1, 1e-6) point both stand."""
    pytest.importorskip("pydp")
    rows = _study("pydp_gaussian_profile").main(quick=True, out=str(tmp_path), seed=0)
    assert [r.kind for r in rows] == ["ProfileClaim", "Claim"]
    assert [r.verdict for r in rows] == ["Inconclusive", "Inconclusive"]
    assert rows[0].certified <= 0.0  # the margin over the profile stays below 0
    assert rows[1].certified <= 1.0  # the certified epsilon at 1e-6 stays below the claimed 1
    releases = _study("releases")
    truth = 1.0 / releases.pydp_gaussian_std()
    assert all(r.mu_lower <= truth for r in rows)


def test_dpsgd_step_is_inconclusive_under_the_accountant_profile(tmp_path: Path) -> None:
    """One clipped, noised gradient sum stays within its stated profile (truly 1-GDP)."""
    (row,) = _study("dpsgd_step").main(quick=True, out=str(tmp_path), seed=0)
    assert row.verdict == "Inconclusive" and row.certified <= 0.0
    assert 0.0 < row.mu_lower <= 1.0


def test_planted_small_noise_is_refuted_by_curves_not_by_the_point(tmp_path: Path) -> None:
    """Noise 20% too small: the implied (4.887, 1e-6) point stands; GDP, zCDP and the profile are refuted."""
    rows = _study("planted_small_noise").main(quick=True, out=str(tmp_path), seed=0)
    assert [(r.kind, r.verdict) for r in rows] == [
        ("Claim", "Inconclusive"),
        ("GDPClaim", "Refuted"),
        ("ZCDPClaim", "Refuted"),
        ("ProfileClaim", "Refuted"),
    ]
    point = rows[0]
    assert point.claimed == pytest.approx(4.8866, abs=1e-3) and point.certified < point.claimed
    assert len({r.calls for r in rows}) == 1  # side by side at the same calls
    assert 1.0 < rows[1].certified <= 1.25  # the truth on the chosen pair is at most 1/0.8


def test_dpsgd_release_is_the_clipped_sum_plus_noise() -> None:
    """The step's release: removing record i moves the mean by its clipped gradient, of norm 1."""
    releases = _study("releases")
    rng = np.random.default_rng(0)
    whole = releases.dpsgd_step(np.array([-1.0]), 20_000, rng).mean(axis=0)
    without = releases.dpsgd_step(np.array([3.0]), 20_000, rng).mean(axis=0)
    shift = whole - without
    # the mean of 20,000 draws has sd 1/sqrt(20000) = 0.007 per coordinate; 31 coordinates
    assert math.isclose(float(np.linalg.norm(shift)), 1.0, abs_tol=0.1)
    with pytest.raises(ValueError, match="x must be"):
        releases.dpsgd_step(np.array([64.0]), 1, rng)
