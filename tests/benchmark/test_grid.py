"""Tests for certify.benchmark.grid: settings, presets, determinism across backends, resuming."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typeguard import TypeCheckError

from certify.benchmark import grid
from certify.benchmark._compute import _entropy
from certify.benchmark.grid import Setting, presets, read_results, run_grid
from certify.errors import DataError, ParameterError
from certify.plan import rate_level


def tiny_settings() -> list[Setting]:
    """Small settings (d = 16, 4-5 pairs) touching every experiment, route and certificate kind."""
    out = [
        Setting(
            "main",
            "dispersed",
            fam,
            eps,
            20,
            0,
            ("gauss_mech", "mmd_tv", "roc_oof"),
            certificates=True,
            pair_count=4,
            dimension=16,
            reference_draws=300,
        )
        for fam in ("laplace", "gaussian")
        for eps in (0.0, 64.0)
    ]
    out.append(
        Setting(
            "randomized_response",
            "clustered",
            "randomized_response",
            8.0,
            20,
            1,
            ("mmd_tv", "roc_oof"),
            certificates=True,
            pair_count=4,
            dimension=16,
        )
    )
    out.append(
        Setting(
            "anisotropic",
            "clustered",
            "anisotropic",
            32.0,
            20,
            1,
            ("mmd_tv", "roc_oof"),
            certificates=True,
            pair_count=4,
            dimension=16,
        )
    )
    out.append(
        Setting(
            "power",
            "dispersed",
            "gaussian",
            64.0,
            20,
            3,
            (),
            certificates=True,
            pair_set="power",
            pair_count=5,
            family_size=40,
            dimension=16,
        )
    )
    out.append(Setting("null_floor", "dispersed", "laplace", 0.0, 20, 2, ("gauss_mech",), dimension=16))
    return out


@pytest.fixture(scope="module")
def serial_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """The tiny grid computed in this process (workers=1)."""
    out = tmp_path_factory.mktemp("serial")
    path = run_grid(tiny_settings(), out, workers=1, progress=False)
    return out, read_results(path)


@pytest.mark.slow
def test_results_have_statuses_and_references(serial_run: tuple[Path, pd.DataFrame]) -> None:
    """Every route row carries its own status and the exact pairwise reference."""
    _, df = serial_run
    status = df.groupby("route")["status"].unique().map(tuple).to_dict()
    assert status == {
        "gauss_mech": ("Diagnostic",),
        "mmd_tv": ("PopulationEstimate",),
        "mmd_tv_hockey_stick": ("PopulationEstimate",),
        "roc_oof": ("PopulationEstimate",),
        "certificate_learned": ("Certificate",),
        "certificate_oracle": ("Certificate",),
    }
    assert list(df.columns) == list(grid.COLUMNS)
    assert set(df["mechanism"]) == {"laplace", "gaussian", "null", "randomized_response", "anisotropic"}
    null = df[df["mechanism"] == "null"]
    assert (null["exact_epsilon"] == 0.0).all()
    cert = df[df["status"] == "Certificate"]
    # 4 pairs, or the power family of 40 tests: each test's share 0.05 / family is split between
    # its two independent error rates, (1 - a)^2 = 1 - 0.05 / family.
    expected = np.where(cert["experiment"] == "power", rate_level(0.05 / 40), rate_level(0.05 / 4))
    np.testing.assert_allclose(cert["alpha_per_rate"], expected, rtol=1e-12)
    assert (cert["certificate_delta"] == cert["exact_delta"]).all()
    assert not cert["exceeds_exact"].any()
    roc = df[df["route"] == "roc_oof"]
    assert roc["auc"].notna().all() and roc["exact_corner"].notna().all()


@pytest.mark.slow
def test_bit_identical_serial_and_joblib(serial_run: tuple[Path, pd.DataFrame], tmp_path: Path) -> None:
    """workers=1 in this process and workers=2 through joblib give bit-identical tables."""
    _, serial = serial_run
    parallel = read_results(run_grid(tiny_settings(), tmp_path, workers=2, progress=False))
    pd.testing.assert_frame_equal(serial, parallel, check_exact=True)


@pytest.mark.slow
def test_bit_identical_dask(serial_run: tuple[Path, pd.DataFrame], tmp_path: Path) -> None:
    """The dask backend on a LocalCluster gives the same table, bit for bit."""
    distributed = pytest.importorskip("distributed")
    _, serial = serial_run
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        path = run_grid(
            tiny_settings(),
            tmp_path,
            workers=2,
            backend="dask",
            scheduler=cluster.scheduler_address,
            progress=False,
        )
    pd.testing.assert_frame_equal(serial, read_results(path), check_exact=True)


def test_recomputing_a_setting_in_one_process_is_identical() -> None:
    """A setting computed twice in one process (certificates included) gives the same rows."""
    s = tiny_settings()[5]
    first, _ = grid.compute_setting(s)
    second, _ = grid.compute_setting(s)
    pd.testing.assert_frame_equal(first, second, check_exact=True)


@pytest.mark.slow
def test_resume_recomputes_only_missing_settings(
    serial_run: tuple[Path, pd.DataFrame], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After deleting one setting file, a rerun computes only that setting and rebuilds the table."""
    settings = tiny_settings()
    run_grid(settings, tmp_path, workers=1, progress=False)
    victim = grid._setting_path(tmp_path, settings[2])
    victim.unlink()
    calls: list[Setting] = []
    real = grid.compute_setting

    def counting(setting: Setting, references: object = None) -> object:
        calls.append(setting)
        return real(setting, references)  # type: ignore[arg-type]

    monkeypatch.setattr(grid, "compute_setting", counting)
    path = run_grid(settings, tmp_path, workers=1, progress=False)
    assert calls == [settings[2]]
    assert victim.exists()
    pd.testing.assert_frame_equal(serial_run[1], read_results(path), check_exact=True)


@pytest.mark.slow
def test_interrupted_run_keeps_finished_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error mid-run leaves the settings finished before it on disk, and no temporary files."""
    settings = tiny_settings()[:3]
    real = grid.compute_setting
    seen: list[Setting] = []

    def failing(setting: Setting, references: object = None) -> object:
        if len(seen) == 2:
            raise KeyboardInterrupt
        seen.append(setting)
        return real(setting, references)  # type: ignore[arg-type]

    monkeypatch.setattr(grid, "compute_setting", failing)
    with pytest.raises(KeyboardInterrupt):
        run_grid(settings, tmp_path, workers=1, progress=False)
    done = sorted(p.name for p in (tmp_path / "settings").rglob("*.parquet"))
    assert done == sorted(grid._setting_path(tmp_path, s).name for s in seen)
    assert not list(tmp_path.rglob("*.tmp"))
    assert not (tmp_path / "results.parquet").exists()


@pytest.mark.slow
def test_infinities_survive_parquet_and_csv(serial_run: tuple[Path, pd.DataFrame], tmp_path: Path) -> None:
    """+inf and -inf values are read back as infinities from both Parquet and CSV."""
    _, df = serial_run
    frame = df.copy()
    frame.loc[0, "value"] = math.inf
    frame.loc[1, "value"] = -math.inf
    frame.loc[2, "u_fpr"] = math.inf
    frame.to_parquet(tmp_path / "results.parquet", index=False)
    frame.to_csv(tmp_path / "results.csv", index=False)
    for name in ("results.parquet", "results.csv"):
        back = read_results(tmp_path / name)
        assert back.loc[0, "value"] == math.inf and back.loc[1, "value"] == -math.inf
        assert back.loc[2, "u_fpr"] == math.inf
        pd.testing.assert_frame_equal(frame, back, check_exact=True)


def test_seeds_depend_on_setting_identity_only() -> None:
    """Changing a data field changes the seeds; changing the route list does not."""
    a = Setting("main", "dispersed", "laplace", 1.0, 30, 0, ("gauss_mech",))
    b = Setting("main", "dispersed", "laplace", 1.0, 30, 0, ("gauss_mech", "roc_oof"))
    c = Setting("main", "dispersed", "laplace", 1.0, 30, 1, ("gauss_mech",))
    assert _entropy(a) == _entropy(b) != _entropy(c)
    assert a.file_stem != b.file_stem


def test_presets_match_the_paper_counts() -> None:
    """The paper preset has 468 main settings (18,720 pair results), 360 certified, and the appendices."""
    paper = presets()["paper"]
    main = [s for s in paper if s.experiment == "main"]
    assert len(main) == 468 and sum(s.pair_count for s in main) == 18_720
    assert sum(s.pair_count for s in main if s.certificates) == 14_400
    for exp in ("randomized_response", "anisotropic"):
        assert sum(s.pair_count for s in paper if s.experiment == exp) == 4_320
    power = [s for s in paper if s.experiment == "power"]
    assert sum(s.pair_count for s in power) * 2 == 24_000
    assert len({s.key for s in paper}) == len(paper)
    assert {s.dimension for s in paper if s.experiment == "null_floor"} == {64, 128, 256, 512}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prototypes": "tight"}, "prototypes must be one of"),
        ({"epsilon_g": -1.0}, "epsilon_g must be a finite number >= 0"),
        ({"n_samples": 1}, "n_samples must be an integer >= 2"),
        ({"routes": ("kde",)}, "routes must be one of"),
        ({"pair_set": "power", "pair_count": 40}, "pair_count must be 5 for the power pairs"),
        ({"family_size": 3}, "family_size must be an integer >= 40"),
    ],
)
def test_setting_rejects_bad_values(kwargs: dict[str, object], message: str) -> None:
    """Invalid settings raise ParameterError naming the field and the constraint."""
    base: dict[str, object] = {
        "experiment": "main",
        "prototypes": "dispersed",
        "family": "laplace",
        "epsilon_g": 1.0,
        "n_samples": 30,
        "repetition": 0,
    }
    base.update(kwargs)
    with pytest.raises(ParameterError, match=message):
        Setting(**base)  # type: ignore[arg-type]


def test_run_grid_rejects_bad_options(tmp_path: Path) -> None:
    """Unknown presets, backends and duplicate settings are refused before any work."""
    with pytest.raises(ParameterError, match="preset must be one of"):
        run_grid("huge", tmp_path)
    # Under typeguard the Literal annotation refuses the value first.
    with pytest.raises((ParameterError, TypeCheckError), match="backend"):
        run_grid("quick", tmp_path, backend="spark")  # type: ignore[arg-type]
    s = tiny_settings()[0]
    with pytest.raises(ParameterError, match="settings must be distinct"):
        run_grid([s, s], tmp_path)
    with pytest.raises(DataError, match="results must be an existing"):
        read_results(tmp_path / "missing.parquet")


def test_mmd_route_rows_are_certificates_below_the_truth(tmp_path: Path) -> None:
    """The certificate_mmd route yields Certificate rows with an MMD lower bound, none above the truth."""
    setting = Setting(
        experiment="mmd-route",
        prototypes="dispersed",
        family="laplace",
        epsilon_g=0.0,
        n_samples=40,
        repetition=0,
        certificates=True,
        mmd_test=True,
        pair_count=4,
        dimension=16,
        reference_draws=200,
    )
    frame = read_results(run_grid([setting], tmp_path, workers=1, progress=False))
    rows = frame[frame["route"] == "certificate_mmd"]
    assert len(rows) == 4
    assert set(rows["status"]) == {"Certificate"}
    assert (rows["value"] >= 0).all() and not rows["exceeds_exact"].any()
    assert (rows["mmd_lower"] <= rows["mmd"]).all()
