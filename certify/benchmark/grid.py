"""The known-epsilon benchmark grid: settings, presets, a resumable parallel runner (paper Sec. 6).

A :class:`Setting` is one cell of the benchmark: a prototype set, a mechanism family, a requested
global epsilon, a sample size per identity and a repetition. :func:`run_grid` computes every
setting of a preset (or a list of settings) and writes a tidy results table, one row per
setting, pair and route, as Parquet and CSV. Each row keeps the status of its number
(``Diagnostic``, ``PopulationEstimate`` or ``Certificate``) beside the exact pairwise reference.

Determinism
    Every random draw of a setting comes from a :class:`numpy.random.SeedSequence` derived from
    the setting's identity (a hash of its data-defining fields), never from the worker that runs
    it or the order of completion; BLAS runs single-threaded inside a setting. Results are
    therefore identical, bit for bit, for any backend and worker count.

Resuming
    Each finished setting is written to ``settings/`` (temporary file plus rename) as soon as it
    completes, and skipped on a rerun; an interrupted run loses only the settings in flight.

Certificates
    The paper evaluates the learned and the exact likelihood-ratio test on the same reserved
    rows. A reserved split can be evaluated only once, so here the oracle family gets its own,
    independent sample of the same law (a child seed): each family has its own data, protocol
    and ledger, and each is valid at 95% on its own, as in the paper. Each evaluation also labels
    its identities with a fresh evaluation id: a recomputed setting (after an interruption, or in
    a determinism check) is a new simulated experiment whose draws coincide with the first, and
    the id keeps the reserved-split guard, which keys on the data fingerprint including labels,
    from mistaking it for a second look at spent data. Numbers never depend on the id.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from certify._progress import Progress
from certify.benchmark._compute import compute_setting
from certify.benchmark._presets import paper_settings, presets, quick_settings
from certify.benchmark._references import (
    _ref_key,
    _reference_chunk,
    _reference_pairs,
    _reference_tasks,
    laplace_references,
)
from certify.benchmark._results import (
    COLUMNS,
    _coerce,
    _write_arrow,
    _write_atomic,
    _write_parquet,
    _write_text,
    read_results,
)
from certify.benchmark._setting import (
    ALL_ROUTES,
    APPENDIX_EPSILONS,
    CERTIFICATE_EPSILONS,
    NULL_FLOOR_DIMENSIONS,
    PAPER_EPSILONS,
    POWER_CELLS,
    POWER_REPETITIONS,
    SAMPLE_SIZES,
    Setting,
    _check_choice,
    _check_positive_int,
)
from certify.benchmark._workers import Backend, _Executor
from certify.errors import ParameterError

__all__ = [
    "ALL_ROUTES",
    "APPENDIX_EPSILONS",
    "CERTIFICATE_EPSILONS",
    "COLUMNS",
    "NULL_FLOOR_DIMENSIONS",
    "PAPER_EPSILONS",
    "POWER_CELLS",
    "POWER_REPETITIONS",
    "SAMPLE_SIZES",
    "Setting",
    "compute_setting",
    "laplace_references",
    "paper_settings",
    "presets",
    "quick_settings",
    "read_results",
    "run_cli",
    "run_grid",
]


def _resolve(preset_or_settings: str | Iterable[Setting]) -> tuple[str, tuple[Setting, ...]]:
    """A preset name or explicit settings -> (label, settings), checked."""
    if isinstance(preset_or_settings, str):
        table = presets()
        if preset_or_settings not in table:
            raise ParameterError(
                f"preset must be one of {sorted(table)!r}; got {preset_or_settings!r}. "
                "Or pass a list of Setting objects."
            )
        return preset_or_settings, table[preset_or_settings]
    settings = tuple(preset_or_settings)
    if not settings:
        raise ParameterError("settings must hold at least one Setting; got an empty sequence.")
    for s in settings:
        if not isinstance(s, Setting):
            raise ParameterError(f"settings must contain Setting objects; got {type(s).__name__}.")
    keys = [s.key for s in settings]
    if len(set(keys)) != len(keys):
        raise ParameterError("settings must be distinct; the list repeats a setting.")
    return "custom", settings


def run_grid(
    preset_or_settings: str | Iterable[Setting],
    out_dir: str | os.PathLike[str],
    *,
    workers: int = 2,
    backend: Backend = "local",
    scheduler: str | None = None,
    progress: bool = True,
) -> Path:
    """Run a benchmark grid and write its tidy results table.

    Parameters
    ----------
    preset_or_settings : str or iterable of Setting
        ``"paper"``, ``"quick"`` (see :func:`presets`) or explicit settings.
    out_dir : str or path-like
        Output folder: ``settings/`` (one Parquet file per finished setting plus its timings),
        ``references/`` (cached Laplace AUC references), ``results.parquet``, ``results.csv``.
    workers : int, default 2
        Parallel workers (joblib processes, or Dask LocalCluster workers).
    backend : {"local", "dask"}, default "local"
        ``"local"`` runs through joblib (``workers=1`` runs in this process); ``"dask"`` submits
        the same tasks to a Dask cluster.
    scheduler : str, optional
        Dask scheduler address; default a new ``LocalCluster(n_workers=workers)``.
    progress : bool, default True
        Show a progress bar with an ETA on stderr.

    Returns
    -------
    pathlib.Path
        Path of ``results.parquet`` (``results.csv`` is beside it).

    Raises
    ------
    ParameterError
        On an unknown preset, bad settings or options.

    Notes
    -----
    Results are identical, bit for bit, for any backend and worker count: each setting's seeds
    derive from its own identity. Finished settings are written atomically as they complete
    and skipped on a rerun into the same folder, so an interrupted run resumes where it stopped.
    Workers return their rows to this process, which does all writing, so a remote Dask cluster
    needs no shared file system.

    Examples
    --------
    >>> import tempfile
    >>> s = Setting("main", "dispersed", "gaussian", 16.0, 20, 0, ("gauss_mech",), pair_count=4)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = run_grid([s], d, workers=1, progress=False)
    ...     read_results(path)[["route", "status"]].drop_duplicates().values.tolist()
    [['gauss_mech', 'Diagnostic']]
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    _check_positive_int("workers", workers, 1)
    _check_choice("backend", backend, ("local", "dask"))
    if scheduler is not None and backend != "dask":
        raise ParameterError(f"scheduler is used only with backend='dask'; got backend={backend!r}.")
    label, settings = _resolve(preset_or_settings)
    out = Path(out_dir)
    (out / "settings").mkdir(parents=True, exist_ok=True)
    (out / "references").mkdir(parents=True, exist_ok=True)
    _write_text(json.dumps({"preset": label, "settings": len(settings)}, indent=2), out / "grid.json")

    # Stage 1: Laplace AUC references, shared by every n and repetition of a (set, epsilon).
    ref_keys = sorted({_ref_key(s) for s in settings if s.needs_reference}, key=lambda k: k.file_name)
    todo_refs = [k for k in ref_keys if not (out / "references" / k.file_name).exists()]
    todo = [s for s in settings if not _setting_path(out, s).exists()]
    todo.sort(key=lambda s: -s.cost())
    with _Executor(workers, backend, scheduler) as pool:
        ref_tasks = _reference_tasks(todo_refs)
        found: dict[str, dict[str, float]] = {k.file_name: {} for k in todo_refs}
        expected = {k.file_name: len(_reference_pairs(k)) for k in todo_refs}
        with Progress("references", len(ref_tasks), enabled=progress) as bar:
            for _, chunk in pool.map_unordered(_reference_chunk, ref_tasks):
                for name, refs in chunk.items():
                    found[name].update(refs)
                    if len(found[name]) == expected[name]:  # complete: write it (resumable per key)
                        _write_text(json.dumps(found[name], sort_keys=True), out / "references" / name)
                bar.update()
        ref_cache = {k: json.loads((out / "references" / k.file_name).read_text()) for k in ref_keys}

        # Stage 2: settings, most expensive first; each written as soon as it completes.
        tasks = [(s, ref_cache.get(_ref_key(s)) if s.needs_reference else None) for s in todo]
        computed: dict[Setting, Any] = {}  # pyarrow tables, converted once
        total_cost = sum(s.cost() for s in todo)
        with Progress("settings", len(todo), total_weight=total_cost, enabled=progress) as bar:
            for idx, (frame, timings) in pool.map_unordered(compute_setting, tasks):
                s = todo[idx]
                path = _setting_path(out, s)
                table = pa.Table.from_pandas(frame, preserve_index=False)
                _write_arrow(table, path)
                computed[s] = table
                _write_text(json.dumps({"setting": s.fields(), "seconds": timings}, indent=1),
                            path.with_suffix(".timing.json"))
                bar.update(s.cost())

    # Stage 3: the tidy table, in the preset's order (settings finished by an earlier run are
    # read back from their files, the others are already in memory).
    tables = [
        computed[s] if s in computed else pq.read_table(_setting_path(out, s))
        for s in settings
    ]
    results = _coerce(pa.concat_tables(tables, promote_options="permissive").to_pandas())
    target = out / "results.parquet"
    _write_parquet(results, target)
    _write_atomic(out / "results.csv", lambda p: results.to_csv(p, index=False))
    return target


def _setting_path(out: Path, setting: Setting) -> Path:
    """Where a setting's rows are written."""
    return out / "settings" / setting.experiment / f"{setting.file_stem}.parquet"


def run_cli(args: Any, say: Callable[[str], None]) -> int:
    """The ``certify benchmark`` command: run a preset and say where the results are.

    Parameters
    ----------
    args : argparse.Namespace
        ``preset``, ``workers``, ``backend``, ``scheduler``, ``out``.
    say : callable
        Prints one line for the user.

    Returns
    -------
    int
        Exit code 0.
    """
    settings = presets().get(args.preset, ())
    say(f"benchmark preset {args.preset!r}: {len(settings)} settings, {args.workers} worker(s), "
        f"backend {args.backend}; output {args.out}")
    start = time.perf_counter()
    path = run_grid(args.preset, args.out, workers=args.workers, backend=args.backend,
                    scheduler=args.scheduler, progress=True)
    say(f"finished in {time.perf_counter() - start:.1f} s; results: {path} and {path.with_suffix('.csv')}")
    say(f"tables and figures: certify report {path} --out {Path(args.out) / 'report'}")
    return 0
