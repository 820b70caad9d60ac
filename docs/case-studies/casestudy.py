"""Running a case study: audits at each claimed epsilon, certify reports, one results row each.

A :class:`Study` names a library release (a mechanism from :mod:`releases`), the data, the
neighbouring relation its epsilon refers to, the candidate neighbouring inputs and the budgets.
:func:`run_study` audits it once per claimed epsilon with :func:`certify.audit_mechanism`, writes
certify's report for each audit and returns one :class:`Row` per audit.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Final

import attrs
import numpy as np
from numpy.typing import NDArray

import certify as cf
from certify.blackbox.audit import MechanismAudit
from certify.report import write_atomic
from certify.report.mechanism import mechanism_summary, write_mechanism_report

__all__ = [
    "HERE",
    "INPUTS",
    "Candidate",
    "Row",
    "Study",
    "case_section",
    "cli",
    "markdown_table",
    "replacements",
    "run_folder",
    "run_study",
    "sweep",
    "sweep_table",
]

HERE: Final = Path(__file__).resolve().parent
"""The case-studies folder."""


def default_root(quick: bool) -> Path:
    """Where a run writes without ``--out``: ``case-studies[-quick]/`` in the current folder.

    The committed reports in ``results/`` beside these scripts are rewritten only by
    ``--out results``.
    """
    return Path.cwd() / ("case-studies-quick" if quick else "case-studies")


EPSILONS: Final = (0.1, 1.0, 8.0)
"""The claimed epsilons every study audits."""

RANDOMNESS: Final = (
    "The library draws its noise from the operating system's secure generator, not from the "
    "generator certify passes: every call is a fresh, independent release (all the certificate "
    "needs), but the outputs do not depend on the seed, so a rerun reproduces these numbers only "
    "up to sampling error, not bit for bit."
)


@attrs.frozen
class Candidate:
    """A candidate pair of neighbouring inputs, with what it means."""

    input_a: list[float]
    input_b: list[float]
    meaning: str


def replacements(dataset: str, name: str, values: Sequence[float]) -> tuple[Candidate, ...]:
    """Candidates: the data set against it with the record farthest from each value replaced by it."""
    import releases

    return tuple(
        Candidate(
            releases.original(), releases.replace_one(dataset, name, v),
            f"the record farthest from {v:g} replaced by {v:g}",
        )
        for v in values
    )


@attrs.frozen
class Study:
    """A library release audited at several claimed epsilons.

    Attributes
    ----------
    key : str
        Short name; the report folder.
    title : str
        What is released, in words.
    library : str or None
        The distribution name (for its version), None for code of this project.
    api : str
        The library's public calls, as a reader would write them.
    mechanism : callable
        ``mechanism(x, n, rng, epsilon=...)`` from :mod:`releases`.
    data : str
        The data set and column, with its size.
    neighbours : str
        The neighbouring relation the library's epsilon refers to.
    candidates : tuple of Candidate
        Neighbouring inputs under that relation; development calls choose among them.
    calls : int
        Calls per audit in the full form.
    quick_calls : int
        Calls per audit in the quick form (CI).
    delta : float
        Delta of the claims and certificates.
    epsilons : tuple of float
        The claimed epsilons.
    own_randomness : bool
        Whether the release draws from certify's generator (reproducible bit for bit).
    """

    key: str
    title: str
    library: str | None
    api: str
    mechanism: Callable[..., NDArray[np.float64]]
    data: str
    neighbours: str
    candidates: tuple[Candidate, ...]
    calls: int
    quick_calls: int
    delta: float = 0.0
    epsilons: tuple[float, ...] = EPSILONS
    own_randomness: bool = False

    @property
    def version(self) -> str:
        """The library and its installed version."""
        if self.library is None:
            return "planted (this project)"
        return f"{self.library} {metadata.version(self.library)}"

    def mechanism_at(self, epsilon: float) -> Callable[..., NDArray[np.float64]]:
        """The release at one claimed epsilon (a partial: its identity names the epsilon)."""
        return functools.partial(self.mechanism, epsilon=epsilon)


@attrs.frozen
class Row:
    """One audit's line of the results table."""

    study: str
    title: str
    library: str
    data: str
    claimed_epsilon: float
    delta: float
    calls: int
    epsilon_lower: float
    verdict: str
    seconds: float
    report: str
    pair: tuple[str, str]
    event: str
    level_used: float
    seed: int


def _report(
    audit: MechanismAudit,
    study: Study,
    claim: cf.Claim,
    folder: Path,
    ledger: cf.Ledger,
    seed: int,
    workers: int,
) -> Path:
    """Write certify's mechanism report, the record and the summary; return the report's path."""
    summary = mechanism_summary(audit, claim)
    summary["library"] = study.version
    path, _ = write_mechanism_report(
        audit, folder, ledger=ledger, seed=seed, claim=claim, workers=workers,
        extra={"library": study.version}, preface=_case_section(study, audit, claim), summary=summary,
    )
    return path


INPUTS: Final = (
    "`[-1, 0]` is the data set itself, `[i, v]` the data set with record i replaced by v, and "
    "`[size, v]` the data set with one record v added"
)
"""What a study's inputs denote (the releases' convention)."""


def _case_section(study: Study, audit: MechanismAudit, claim: cf.Claim) -> list[str]:
    """The report's opening section: what was audited, on which data, under which relation."""
    return case_section(study, audit, f"({claim.epsilon:g}, {claim.delta:g})-DP")


def case_section(study: Any, audit: MechanismAudit, claim: str, inputs: str = INPUTS) -> list[str]:
    """A report's opening section for any study: release, data, claim in words, relation, inputs."""
    labels = {(_label(c.input_a), _label(c.input_b)): c.meaning for c in study.candidates}
    chosen = audit.certificate.pair
    rows = [f"| `{a}` | `{b}` | {m} |" for (a, b), m in labels.items()]
    chosen_meaning = labels.get((chosen.a, chosen.b), "?")
    return [
        "## Case study",
        "",
        f"- release: {study.title}; {study.version}",
        f"- public API: `{study.api}`",
        f"- data: {study.data}",
        f"- claim: {claim} for neighbouring data sets that differ by {study.neighbours}",
        f"- inputs: {inputs}",
        f"- chosen on development calls: `{chosen.a}` ~ `{chosen.b}` ({chosen_meaning})",
        "- randomness: "
        + (
            "drawn from certify's seeded generator: the numbers are reproducible bit for bit."
            if study.own_randomness else RANDOMNESS
        ),
        "",
        "| input a | input b | candidate neighbouring pair |",
        "|---|---|---|",
        *rows,
        "",
    ]


def run_folder(key: str, quick: bool, out: str | os.PathLike[str] | None) -> tuple[Path, cf.Ledger]:
    """A study run's output folder (created) and a new ledger in it (any old one is removed)."""
    folder = Path(out) if out is not None else default_root(quick) / key
    folder.mkdir(parents=True, exist_ok=True)
    ledger_path = folder / "audits.ledger"
    ledger_path.unlink(missing_ok=True)
    return folder, cf.Ledger(ledger_path)


def _label(x: Sequence[float]) -> str:
    """certify's label of an input (compact JSON, integers as integers)."""
    from certify.data.draws import canonical_input, input_label

    return input_label(canonical_input(list(x)))


def run_study(
    study: Study,
    *,
    quick: bool = False,
    out: str | os.PathLike[str] | None = None,
    seed: int = 0,
    calls: int | None = None,
    epsilons: Sequence[float] | None = None,
    workers: int | None = None,
    reports: bool = True,
    say: Callable[[str], None] | None = print,
) -> list[Row]:
    """Audit a study at each claimed epsilon; write a report per audit; return the rows.

    Every run starts a new ledger ``audits.ledger`` in its output folder (the folder holds one
    run: its reports are replaced too), so reruns do not change each other's confidence levels.
    Audit ``k`` (the k-th epsilon) uses seed ``100 * seed + k``.
    """
    budget = calls if calls is not None else (study.quick_calls if quick else study.calls)
    folder, ledger = run_folder(study.key, quick, out)
    if workers is None:
        workers = 1 if quick else min(2, os.cpu_count() or 1)
    rows = []
    for k, epsilon in enumerate(epsilons if epsilons is not None else study.epsilons):
        audit_seed = 100 * seed + k
        claim = cf.Claim(epsilon=epsilon, delta=study.delta)
        name = f"{study.key} (epsilon = {epsilon:g})"
        audit = cf.audit_mechanism(
            study.mechanism_at(epsilon),
            inputs=[(c.input_a, c.input_b) for c in study.candidates],
            calls=budget,
            delta=study.delta,
            seed=audit_seed,
            ledger=ledger,
            progress=False,
            workers=workers,
            name=name,
        )
        verdict = type(cf.refute(claim, audit.family)).__name__
        path = folder / f"epsilon-{epsilon:g}"
        if reports:
            path = _report(audit, study, claim, path, ledger, audit_seed, workers)
        cert = audit.certificate
        row = Row(
            study=study.key,
            title=study.title,
            library=study.version,
            data=study.data,
            claimed_epsilon=epsilon,
            delta=study.delta,
            calls=budget,
            epsilon_lower=cert.epsilon_lower,
            verdict=verdict,
            seconds=audit.seconds,
            report=os.path.relpath(path, HERE),
            pair=(cert.pair.a, cert.pair.b),
            event=audit.chosen,
            level_used=audit.level_used,
            seed=audit_seed,
        )
        rows.append(row)
        if say is not None:
            say(
                f"{name}: epsilon_lower = {cert.epsilon_lower:.4f} [Certificate, level "
                f"{audit.level_used:.4f}] on {cert.pair} with {audit.chosen}; {verdict}; "
                f"{budget} calls, {audit.seconds:.1f} s"
            )
    if reports:
        write_atomic(
            folder / "results.json",
            json.dumps([attrs.asdict(r) for r in rows], indent=2, sort_keys=True),
        )
    return rows


def _fmt(value: float) -> str:
    """A bound for the table (infinity as such)."""
    return "inf" if math.isinf(value) else f"{value:.3f}"


def markdown_table(rows: Sequence[Row]) -> str:
    """The README's results table: one line per audit."""
    lines = [
        "| study | library | data | claimed (epsilon, delta) | calls | certified lower bound "
        "(95%) | verdict | time | report |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.title} | {r.library} | {r.data} | ({r.claimed_epsilon:g}, {r.delta:g}) | "
            f"{r.calls:,} | {_fmt(r.epsilon_lower)} | {r.verdict} | {r.seconds:.0f} s | "
            f"[report]({r.report}) |"
        )
    return "\n".join(lines)


def sweep(
    studies: Sequence[Study],
    seeds: Sequence[int],
    *,
    scale: float | None = None,
    out: str | os.PathLike[str],
    workers: int | None = None,
    say: Callable[[str], None] | None = None,
) -> list[Row]:
    """Audit every study at every claimed epsilon once per seed, without reports.

    ``scale`` multiplies each study's full-form budget; None uses the quick form's. Every seed of
    every study gets its own ledger (each audit is a first evaluation at the same level).
    """
    rows: list[Row] = []
    for study in studies:
        calls = study.quick_calls if scale is None else max(int(scale * study.calls), study.quick_calls)
        for s in seeds:
            found = run_study(
                study, calls=calls, seed=s, out=Path(out) / study.key / f"seed-{s}", workers=workers,
                reports=False, say=None,
            )
            rows += found
            if say is not None:
                say(f"{study.key} seed {s}: " + ", ".join(f"{r.epsilon_lower:.3f}" for r in found))
    return rows


def sweep_table(rows: Sequence[Row]) -> str:
    """Per study and claimed epsilon: bounds over seeds, how many exceed the claim, verdicts."""
    groups: dict[tuple[str, float], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.title, r.claimed_epsilon), []).append(r)
    lines = [
        "| study | claimed epsilon | calls | seeds | bound: min / median / max | max bound / claim | "
        "bounds above the claim | Refuted | seconds per audit |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for (title, epsilon), group in groups.items():
        bounds = np.array([r.epsilon_lower for r in group])
        above = int(np.count_nonzero(bounds > epsilon))
        refuted = sum(r.verdict == "Refuted" for r in group)
        lines.append(
            f"| {title} | {epsilon:g} | {group[0].calls:,} | {len(group)} | {_fmt(float(bounds.min()))} / "
            f"{_fmt(float(np.median(bounds)))} / {_fmt(float(bounds.max()))} | "
            f"{float(bounds.max()) / epsilon:.2f} | {above} | {refuted} | "
            f"{np.mean([r.seconds for r in group]):.1f} |"
        )
    return "\n".join(lines)


def cli(main: Callable[..., list[Row]], description: str | None) -> None:
    """Parse ``--quick``, ``--out`` and ``--seed`` and run ``main``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="fewer calls (the form CI runs)")
    parser.add_argument(
        "--out", default=None,
        help="output folder (default: case-studies/ or case-studies-quick/ in the current folder)",
    )
    parser.add_argument("--seed", type=int, default=0, help="audit seed (default 0)")
    args = parser.parse_args()
    start = time.perf_counter()
    main(quick=args.quick, out=args.out, seed=args.seed)
    print(f"done in {time.perf_counter() - start:.1f} s")
