"""Running a case study whose guarantee is a curve: one audit per claim, each targeting its claim.

A :class:`CurveStudy` names a release (a mechanism from :mod:`releases` at fixed parameters), the
neighbouring relation, the candidate inputs and the claims to test: what the library states
(rho-zCDP, a privacy profile) and, side by side, the ``(epsilon, delta)`` point it implies.
:func:`run_curve_study` audits the release once per claim with
``certify.audit_mechanism(..., claim=...)``, so each audit's development choice targets its own
claim, writes certify's report for each and returns one :class:`CurveRow` per audit.

All audits of a study are evaluations of the same mechanism in one ledger: the k-th spends the
share ``6 / (pi^2 k^2)`` of the error budget, so together they hold at 95% and every one is
reported at the level it used.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Sequence
from importlib import metadata

import attrs
import numpy as np
from casestudy import HERE, INPUTS, Candidate, case_section, run_folder
from numpy.typing import NDArray

import certify as cf
from certify.claims import claim_parameter
from certify.report import write_atomic
from certify.report.mechanism import mechanism_summary, write_mechanism_report

__all__ = ["CurveRow", "CurveStudy", "curve_table", "run_curve_study"]


@attrs.frozen
class CurveStudy:
    """A release audited under several claims (curves and the points they imply).

    Attributes
    ----------
    key, title, library, api, data, neighbours
        As in :class:`casestudy.Study`.
    mechanism : callable
        ``mechanism(x, n, rng)`` (parameters already bound).
    candidates : tuple of Candidate
        Neighbouring inputs; development calls choose among them.
    claims : callable
        Returns the claims to test, in order (a function, so that a library is imported only
        when the study runs).
    calls, quick_calls : int
        Calls per audit in the full and quick forms.
    own_randomness : bool
        Whether the release draws from certify's generator (reproducible bit for bit).
    expect_refuted : bool
        Whether the release is a planted bug (its curve claims should be refuted).
    inputs : str
        What the inputs denote, for the reports.
    """

    key: str
    title: str
    library: str | None
    api: str
    mechanism: Callable[..., NDArray[np.float64]]
    data: str
    neighbours: str
    candidates: tuple[Candidate, ...]
    claims: Callable[[], Sequence[cf.AnyClaim]]
    calls: int
    quick_calls: int
    own_randomness: bool = False
    expect_refuted: bool = False
    inputs: str = INPUTS

    @property
    def version(self) -> str:
        """The library and its installed version."""
        if self.library is None:
            return "planted (this project)"
        return f"{self.library} {metadata.version(self.library)}"


@attrs.frozen
class CurveRow:
    """One audit's line of the results table."""

    study: str
    title: str
    library: str
    claim: str
    kind: str
    parameter: str
    claimed: float | None
    certified: float
    verdict: str
    calls: int
    seconds: float
    report: str
    pair: tuple[str, str]
    event: str
    level_used: float
    evaluation: int
    seed: int
    mu_lower: float
    rho_lower: float


def _slug(text: str) -> str:
    """A folder name for a claim."""
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")[:60]


def _certified(claim: cf.AnyClaim, cert: cf.Certificate) -> tuple[str, float]:
    """The certificate's value in the claim's terms, and its name."""
    match claim:
        case cf.Claim():
            return f"epsilon_lower at delta = {claim.delta:g}", cert.epsilon_lower_at(claim.delta)
        case cf.GDPClaim():
            return "mu_lower", cert.mu_lower
        case cf.ZCDPClaim():
            return "rho_lower", cert.rho_lower
        case cf.ProfileClaim():
            return "margin over the profile (epsilon)", claim.excess(cert)[0]


def run_curve_study(
    study: CurveStudy,
    *,
    quick: bool = False,
    out: str | os.PathLike[str] | None = None,
    seed: int = 0,
    calls: int | None = None,
    say: Callable[[str], None] | None = print,
) -> list[CurveRow]:
    """Audit a study once per claim (each audit targeting its claim); write reports; return rows.

    Every run starts a new ledger ``audits.ledger`` in its output folder; audit ``k`` uses seed
    ``100 * seed + k`` and is the k-th evaluation of the release in that ledger.
    """
    budget = calls if calls is not None else (study.quick_calls if quick else study.calls)
    folder, ledger = run_folder(study.key, quick, out)
    rows = []
    for k, claim in enumerate(study.claims()):
        audit_seed = 100 * seed + k
        audit = cf.audit_mechanism(
            study.mechanism,
            inputs=[(c.input_a, c.input_b) for c in study.candidates],
            calls=budget,
            claim=claim,
            seed=audit_seed,
            ledger=ledger,
            progress=False,
            name=study.key,
        )
        verdict = type(cf.refute(claim, audit.family)).__name__
        summary = mechanism_summary(audit, claim)
        summary["library"] = study.version
        path, _ = write_mechanism_report(
            audit, folder / f"{k + 1}-{_slug(claim.describe())}", ledger=ledger, seed=audit_seed,
            claim=claim, extra={"library": study.version},
            preface=case_section(study, audit, claim.describe(), study.inputs), summary=summary,
        )
        cert = audit.certificate
        parameter, certified = _certified(claim, cert)
        rows.append(CurveRow(
            study=study.key, title=study.title, library=study.version, claim=claim.describe(),
            kind=type(claim).__name__, parameter=parameter, claimed=claim_parameter(claim)[1],
            certified=certified, verdict=verdict, calls=budget, seconds=audit.seconds,
            report=os.path.relpath(path, HERE), pair=(cert.pair.a, cert.pair.b), event=audit.chosen,
            level_used=audit.level_used, evaluation=audit.evaluation, seed=audit_seed,
            mu_lower=cert.mu_lower, rho_lower=cert.rho_lower,
        ))
        if say is not None:
            say(
                f"{study.key} | {claim.describe()}: {parameter} = {certified:.4f} [Certificate, level "
                f"{audit.level_used:.4f}] on {cert.pair} with {audit.chosen}; {verdict}; "
                f"{budget} calls, {audit.seconds:.1f} s"
            )
    write_atomic(folder / "results.json", json.dumps([attrs.asdict(r) for r in rows], indent=2))
    return rows


def _fmt(value: float) -> str:
    """A certified value for the table, rounded down (it is a lower bound)."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{math.floor(value * 1000 + 1e-9) / 1000:.3f}"


def curve_table(rows: Sequence[CurveRow]) -> str:
    """The README's table of curve studies: one line per audit."""
    lines = [
        "| study | library | claim | calls | level used | certified (Certificate) | mu_lower | rho_lower "
        "| verdict | time | report |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.title} | {r.library} | {r.claim} | {r.calls:,} | {r.level_used:.4f} | "
            f"{r.parameter} {_fmt(r.certified)} | {_fmt(r.mu_lower)} | {_fmt(r.rho_lower)} | "
            f"{r.verdict} | {r.seconds:.0f} s | [report]({r.report}) |"
        )
    return "\n".join(lines)
