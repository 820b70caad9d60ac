"""Cost of the known-epsilon benchmark grid, and the projected wall time of the paper preset.

1. Times a sample of settings of every experiment of the ``paper`` preset, one at a time in this
   process (BLAS single-threaded, as in the workers), after a warm-up that compiles the KDE
   kernel: seconds per setting and per route.
2. Projects the full ``paper`` preset: each setting's time is estimated by the mean measured
   time of its (experiment, family, n, certificates) cell; the Laplace AUC references are
   timed on one pair. Total CPU seconds / 2 is the wall time on 2 cores with perfect
   scheduling; the quick run below measures the actual parallel efficiency.
3. Runs the ``quick`` preset on 2 workers (the target is < 3 min) and reports its wall time,
   its CPU time (sum of per-setting seconds) and the ratio of the two (parallel speed-up).
4. Peak memory (max RSS) of this process and of the worker processes.

5. With ``--paper DIR``: instead, runs the whole ``paper`` preset on 2 workers and reports its wall
   time (the target is <= 15 min), per-experiment and per-route time, the slowest routes'
   throughput, peak memory, the CPU time of this process and its workers, and how much of the
   machine's CPU other processes used meanwhile (wall times on a shared machine need that).

Run: .venv/bin/python benchmarks/bench_grid.py [--skip-quick | --paper DIR]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import tempfile
import time
from pathlib import Path

from joblib.externals.loky import get_reusable_executor

from certify.benchmark._references import _ref_key as ref_key
from certify.benchmark.grid import (
    Setting,
    compute_setting,
    laplace_references,
    paper_settings,
    run_grid,
)
from certify.benchmark.mechanisms import laplace_reference_aucs
from certify.benchmark.pairs import benchmark_pairs
from certify.benchmark.prototypes import dispersed


def cell(s: Setting) -> tuple[str, str, int, bool, int]:
    """The cost cell of a setting."""
    return (s.experiment, "null" if s.epsilon_g == 0 and s.family != "randomized_response" else s.family,
            s.n_samples, s.certificates, s.dimension)


def sample(settings: tuple[Setting, ...]) -> list[Setting]:
    """One setting per cost cell (the middle epsilon of the cell, repetition 0)."""
    by_cell: dict[tuple[str, str, int, bool, int], list[Setting]] = collections.defaultdict(list)
    for s in settings:
        if s.repetition == 0:
            by_cell[cell(s)].append(s)
    out = []
    for group in by_cell.values():
        group.sort(key=lambda s: s.epsilon_g)
        out.append(group[len(group) // 2])
    return out


def machine_busy() -> float:
    """CPU seconds all processes have spent since boot (Linux /proc/stat; 0 elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    """CPU seconds of this process and its reaped children."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run_paper(out: Path) -> None:
    """Run the whole paper preset on 2 workers into ``out`` and report wall time, shares, memory.

    A folder that already holds finished settings resumes (only the rest is computed, and the
    wall time covers only that part); the route shares always cover every setting's timings.
    """
    resumed = len(list((out / "settings").rglob("*.timing.json"))) if (out / "settings").exists() else 0
    busy0, ours0 = machine_busy(), own_cpu()
    t = time.perf_counter()
    run_grid("paper", out, workers=2, progress=True)
    wall = time.perf_counter() - t
    get_reusable_executor().shutdown(wait=True)  # reap the workers, so their CPU time is counted
    busy, ours = machine_busy() - busy0, own_cpu() - ours0
    per_route: dict[str, float] = collections.defaultdict(float)
    per_experiment: dict[str, float] = collections.defaultdict(float)
    pairs: collections.Counter[tuple[str, int]] = collections.Counter()
    secs: dict[tuple[str, int], float] = collections.defaultdict(float)
    for p in (out / "settings").rglob("*.timing.json"):
        record = json.loads(p.read_text())
        fields, seconds = record["setting"], record["seconds"]
        per_experiment[fields["experiment"]] += sum(seconds.values())
        for k, v in seconds.items():
            per_route[k] += v
            pairs[(k, fields["n_samples"])] += fields["pair_count"]
            secs[(k, fields["n_samples"])] += v
    total = sum(per_route.values())
    if resumed:
        print(f"\nresumed: {resumed} settings were already finished; {wall:.0f} s wall for the rest")
    else:
        print(f"\npaper preset on 2 workers: {wall:.0f} s wall ({wall / 60:.1f} min; target <= 15 min); "
              f"{total:.0f} s of setting time, parallel efficiency {total / (2 * wall):.2f}")
    others = max(busy - ours, 0.0)
    print(f"CPU: this run {ours:.0f} s (main process and workers); other processes {others:.0f} s, "
          f"i.e. {100 * others / (2 * wall):.0f}% of the 2 cores during the run")
    for k, v in sorted(per_experiment.items(), key=lambda kv: -kv[1]):
        print(f"  {k:22s} {v:8.0f} s")
    print("per-route share of setting time:")
    for k, v in sorted(per_route.items(), key=lambda kv: -kv[1]):
        print(f"  {k:22s} {v:8.0f} s  {100 * v / total:5.1f}%")
    for k in ("kde_lr", "roc_oof", "certificate_learned"):
        rates = {n: pairs[(k, n)] / secs[(k, n)] for n in (30, 100, 300) if secs[(k, n)] > 0}
        print(f"  {k}: " + ", ".join(f"n={n}: {r:.1f} pairs/s" for n, r in rates.items()) + " (1 core)")
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: this process {own:.0f} MiB, largest worker {kids:.0f} MiB (target < 4 GiB)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skip-quick", action="store_true")
    parser.add_argument("--paper", type=Path, metavar="DIR",
                        help="run the whole paper preset into DIR (about 15-20 min) and report it instead")
    args = parser.parse_args()
    if args.paper is not None:
        run_paper(args.paper)
        return
    paper = paper_settings()

    print("warm-up (KDE kernel compilation or cache load, prototype sets) ...")
    t0 = time.perf_counter()
    warm = Setting("main", "dispersed", "gaussian", 1.0, 30, 0, ("gauss_mech", "kde_lr", "mmd_tv", "roc_oof"),
                   certificates=True, pair_count=4)
    compute_setting(warm)
    compute_setting(Setting("main", "clustered", "gaussian", 1.0, 30, 0, ("gauss_mech",), pair_count=4))
    print(f"  {time.perf_counter() - t0:.1f} s")

    chosen = sample(paper)
    print(f"timing {len(chosen)} sampled settings (one per cost cell) ...")
    cell_time: dict[tuple[str, str, int, bool, int], float] = {}
    route_time: dict[str, float] = collections.defaultdict(float)
    route_pairs: collections.Counter[tuple[str, int]] = collections.Counter()
    route_secs: dict[tuple[str, int], float] = collections.defaultdict(float)
    for s in chosen:
        refs = None
        if s.needs_reference:
            # References are a separate stage, timed below; use a cheap stand-in here.
            refs = laplace_references(ref_key(Setting(s.experiment, s.prototypes, s.family, s.epsilon_g,
                                                      s.n_samples, 0, s.routes, pair_count=s.pair_count,
                                                      reference_draws=50)))
        t = time.perf_counter()
        _, timings = compute_setting(s, refs)
        elapsed = time.perf_counter() - t
        cell_time[cell(s)] = elapsed
        for k, v in timings.items():
            route_time[k] += v
            route_secs[(k, s.n_samples)] += v
            route_pairs[(k, s.n_samples)] += s.pair_count
        print(f"  {s.experiment:20s} {cell(s)[1]:20s} eps={s.epsilon_g:<6g} n={s.n_samples:<4d} "
              f"d={s.dimension:<4d} cert={s.certificates!s:5s} {elapsed:7.2f} s")

    total = sum(route_time.values())
    print("\nper-route share of the sampled time:")
    for k, v in sorted(route_time.items(), key=lambda kv: -kv[1]):
        print(f"  {k:22s} {v:8.1f} s  {100 * v / total:5.1f}%")
    slowest = max(route_time, key=lambda k: route_time[k])
    print(f"slowest route: {slowest}; throughput per n:")
    for n in (30, 100, 300):
        if route_pairs[(slowest, n)]:
            print(f"  n={n:<4d} {route_pairs[(slowest, n)] / route_secs[(slowest, n)]:7.2f} pairs/s (1 core)")

    ps = dispersed()
    i, j = benchmark_pairs(ps)[5]
    laplace_eps = sorted({s.epsilon_g for s in paper if s.needs_reference})
    t = time.perf_counter()
    laplace_reference_aucs(ps, laplace_eps, i, j)
    ref_pair = time.perf_counter() - t
    n_ref_pairs = 2 * 40  # 2 prototype sets x 40 pairs, every epsilon from one set of draws
    projected: dict[str, float] = collections.defaultdict(float)
    for s in paper:
        projected[s.experiment] += cell_time[cell(s)]
    projected["laplace references"] = n_ref_pairs * ref_pair
    cpu = sum(projected.values())
    print(f"\nLaplace AUC references: {ref_pair:.2f} s per pair for {len(laplace_eps)} epsilons "
          f"(20,000 draws per class), {n_ref_pairs} pairs")
    print("projected paper preset (CPU seconds per experiment):")
    for k, v in sorted(projected.items(), key=lambda kv: -kv[1]):
        count = sum(1 for s in paper if s.experiment == k)
        print(f"  {k:20s} {count:5d} settings {v:9.0f} s")
    print(f"  total {cpu:.0f} CPU s = {cpu / 3600:.2f} CPU h; on 2 cores at perfect scaling: "
          f"{cpu / 2 / 3600:.2f} h")

    if not args.skip_quick:
        with tempfile.TemporaryDirectory() as d:
            t = time.perf_counter()
            run_grid("quick", d, workers=2, progress=False)
            wall = time.perf_counter() - t
            quick_cpu = sum(sum(json.loads(p.read_text())["seconds"].values())
                            for p in Path(d).rglob("*.timing.json"))
        print(f"\nquick preset on 2 workers: {wall:.1f} s wall (target < 180 s); "
              f"{quick_cpu:.1f} s of setting time; speed-up {quick_cpu / wall:.2f}x over 1 core")
        print(f"  projected paper preset at that efficiency: {cpu / (quick_cpu / wall) / 3600:.2f} h wall")

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"\npeak memory: this process {own:.0f} MiB, largest worker {kids:.0f} MiB")


if __name__ == "__main__":
    main()
