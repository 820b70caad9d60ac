"""The report of a black-box mechanism audit: certificate, development choice, manifest."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from certify.blackbox.audit import MechanismAudit
from certify.blackbox.reach import smallest_event_probability
from certify.claims import AnyClaim, Claim, Inconclusive, Refuted, claim_parameter, refute
from certify.report._render import STATUS_MEANING, _fmt, _fmt_lower, _manifest_md, curve_lines

if TYPE_CHECKING:
    from certify.protocol.ledger import Ledger

__all__ = ["mechanism_markdown", "mechanism_summary", "write_mechanism_report"]


def mechanism_summary(audit: MechanismAudit, claim: AnyClaim | None) -> dict[str, Any]:
    """The one-line JSON summary of an audit (``certify audit-mechanism --json``).

    Keys: ``mechanism``, ``identity``, ``calls``, ``epsilon_lower``, ``delta``, ``mu_lower``,
    ``rho_lower`` (all three Certificate-status), ``claim`` (the claim in words, or None),
    ``claimed_epsilon`` (point claims), ``claimed_mu``, ``claimed_rho``, ``verdict``
    (``"Refuted"``, ``"Inconclusive"``, or None without a claim), ``confidence_level`` (the
    claim's level over all evaluations), ``level_used``, ``evaluation``, ``pair``, ``test``,
    ``seconds``, ``record_sha256``, ``reserved_fingerprint`` and ``ledger`` (the ledger's
    identity and the entry, hash and number of this evaluation: :class:`~certify.LedgerStamp`),
    ``smallest_event_probability`` (the reach of the budget,
    :func:`~certify.blackbox.reach.smallest_event_probability`).
    """
    verdict: str | None = None
    if claim is not None:
        verdict = "Refuted" if isinstance(refute(claim, audit.family), Refuted) else "Inconclusive"
    c = audit.certificate
    return {
        "mechanism": audit.mechanism,
        "identity": audit.identity,
        "calls": audit.calls,
        "epsilon_lower": c.epsilon_lower,
        "delta": c.delta,
        "mu_lower": c.mu_lower,
        "rho_lower": c.rho_lower,
        "status": "Certificate",
        "claim": None if claim is None else claim.describe(),
        "claimed_epsilon": claim.epsilon if isinstance(claim, Claim) else None,
        "claimed_mu": _parameter(claim, "mu"),
        "claimed_rho": _parameter(claim, "rho"),
        "verdict": verdict,
        "confidence_level": audit.confidence_level,
        "level_used": audit.level_used,
        "evaluation": audit.evaluation,
        "pair": [c.pair.a, c.pair.b],
        "test": audit.chosen,
        "seconds": round(audit.seconds, 3),
        "record_sha256": audit.record.sha256,
        "reserved_fingerprint": c.data_fingerprint,
        "ledger": attrs.asdict(c.ledger),
        "smallest_event_probability": smallest_event_probability(audit, _reach_epsilon(claim)),
    }


def _reach_epsilon(claim: AnyClaim | None) -> float:
    """The epsilon the reach is stated for: a point claim's, else 0 (any positive bound)."""
    return claim.epsilon if isinstance(claim, Claim) else 0.0


def _parameter(claim: AnyClaim | None, name: str) -> float | None:
    """The claim's parameter if it is named ``name`` (``"mu"``, ``"rho"``), else None."""
    if claim is None:
        return None
    key, value = claim_parameter(claim)
    return value if key == name else None


def _reads_bits(audit: MechanismAudit) -> bool:
    """Whether the registered event scores the outputs' floating-point representation."""
    tests = audit.record.content.get("tests") or [{}]
    return bool(tests[0].get("model", {}).get("kind") == "bits")


def mechanism_markdown(
    audit: MechanismAudit,
    *,
    claim: AnyClaim | None = None,
    man: Mapping[str, Any] | None = None,
    figures: Sequence[str] = (),
    published: Sequence[tuple[str, float, float]] = (),
    exact: tuple[float, str] | None = None,
) -> str:
    """The Markdown report of a mechanism audit.

    Parameters
    ----------
    audit : MechanismAudit
        The audit.
    claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim, optional
        The claim to test; without one the report states no verdict.
    man : Mapping, optional
        A run manifest (:func:`certify.report.manifest`).
    figures : sequence of str
        Captions of figures to show (written beside the report by ``write_report``).
    published : sequence of (tool, epsilon_lower, confidence_level)
        Lower bounds other tools published for this mechanism, shown for comparison.
    exact : (float, str), optional
        The mechanism's exact epsilon and how it is known (a suite mechanism's
        ``true_epsilon`` and ``true_epsilon_note``), shown beside the certificate.

    Returns
    -------
    str
    """
    c = audit.certificate
    lines = [f"# Mechanism audit: {audit.mechanism}", ""]
    lines += ["## Certificate", "", STATUS_MEANING["Certificate"], ""]
    lines += [
        "| input a (class 0) | input b (class 1) | event (predicts b) | reserved calls a / b | "
        "a-calls in the event | b-calls outside | U_FPR (Certificate: upper bound) | "
        "U_FNR (Certificate: upper bound) | epsilon_lower (Certificate) |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| `{c.pair.a}` | `{c.pair.b}` | {audit.chosen} | {c.n_class0} / {c.n_class1} | "
        f"{c.false_positives} | {c.false_negatives} | {c.u_fpr:.6f} | {c.u_fnr:.6f} | "
        f"**{_fmt_lower(c.epsilon_lower)}** |",
        "",
    ]
    if exact is not None:
        value, note = exact
        lines += [
            f"Exact epsilon of this mechanism: **{_fmt(value)}** [known reference], beside the "
            f"certified lower bound {_fmt_lower(c.epsilon_lower)} [Certificate]. {note}",
            "",
        ]
        if _reads_bits(audit):
            lines += [
                "The exact epsilon is the mechanism's in real arithmetic. The certified event "
                "reads the outputs' floating-point representation (a `grain` or `mantissa` "
                "test), so the certificate is about this implementation on doubles, which can "
                "leak far more (see docs/bugs.md); `tests=\"values\"` leaves those tests out.",
                "",
            ]
    k = audit.evaluation
    if c.epsilon_lower > 0:
        lines.append(
            f"With at least {audit.level_used:.4f} confidence over the reserved calls, "
            f"{audit.mechanism} is not (epsilon, {c.delta:g})-DP for any epsilon below "
            f"{_fmt_lower(c.epsilon_lower)}, provided each call draws fresh randomness."
        )
    else:
        lines.append(
            f"No positive bound: at {audit.level_used:.4f} confidence the event's probabilities "
            "under the two inputs do not exclude epsilon = 0. This is not evidence of privacy."
        )
    lines += [
        "",
        f"This is evaluation {k} of `{audit.identity}` in this ledger. The k-th evaluation of a "
        f"mechanism spends 6/(pi^2 k^2) of the error budget 1 - {audit.confidence_level:g}, so "
        f"all {k} evaluation(s) hold together at confidence {audit.confidence_level:g}; this "
        f"one used level {audit.level_used:.4f} (each error rate bounded one-sided at "
        f"{c.alpha_per_rate:.3g}).",
        "",
        "Assumptions:",
        "",
        *[f"- {a}" for a in c.assumptions],
        "",
    ]
    lines += curve_lines(audit.family, claim)
    lines += ["## Verdict", ""]
    if claim is None:
        lines.append("No claim was stated; no verdict.")
    else:
        verdict = refute(claim, audit.family)
        match verdict:
            case Refuted():
                lines.append(f"**Refuted.** {str(verdict).removeprefix('Refuted: ')}")
            case Inconclusive():
                lines.append(f"**Inconclusive.** {str(verdict).removeprefix('Inconclusive: ')}")
        lines += [
            "",
            "certify never says a mechanism is private: an inconclusive audit has not shown the "
            "claim to hold.",
        ]
    lines.append("")
    reach = smallest_event_probability(audit, _reach_epsilon(claim))
    target = (
        f"a bound above the claim {claim.epsilon:g}" if isinstance(claim, Claim)
        else "a positive bound on epsilon"
    )
    lines += [
        "## Reach",
        "",
        f"At this budget the smallest probability of an event that one input never produces "
        f"and the other produces with probability p, for which this audit would reach {target} "
        f"with its counts at their expected values, is p = {reach:.3g}. A violation confined to "
        "rarer events (a curator attack) was out of reach of these calls: an Inconclusive "
        "verdict says nothing about it. (A design statement, not a bound: development must see "
        "such an event several times to choose it, and the reserved calls must count it.)",
        "",
    ]
    if published:
        lines += [
            "## Published lower bounds for this mechanism",
            "",
            "Reported by other tools, at their own confidence levels and call budgets (they are "
            "not certify results):",
            "",
            "| tool | epsilon lower bound | confidence |",
            "|---|---|---|",
            *[f"| {tool} | {_fmt(value)} | {level:g} |" for tool, value, level in published],
            "",
        ]
    unit = "bound" if audit.claim is None else audit.claim.target().unit
    lines += [
        "## Development choice",
        "",
        STATUS_MEANING["Diagnostic"],
        "",
        f"{audit.setup_calls} calls checked the mechanism's output width and its use of the "
        f"generator; {audit.development_calls} development calls then chose the input pair, the "
        f"test family, its orientation and threshold; {sum(audit.reserved_calls.values())} "
        "reserved calls were made afterwards, once. Each row is a candidate judged on development calls: its "
        "value predicts the certified bound with pessimistic development rates (a ranking "
        "score, no bound).",
        "",
        f"| input a | input b | test | development calls per input | predicted {unit} (Diagnostic) "
        f"| plug-in {unit} (PopulationEstimate) | AUC (Diagnostic) |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in audit.development[:25]:
        assert d.pair is not None
        lines.append(
            f"| `{d.pair.a}` | `{d.pair.b}` | {d.parameters.get('test')} | {d.n_samples[0]} | "
            f"{d.score:.4f} | {float(d.details.get('plug_in') or 0.0):.4f} | "
            f"{float(d.details.get('auc') or 0.5):.3f} |"
        )
    if len(audit.development) > 25:
        lines.append(f"| ... | {len(audit.development) - 25} more | | | | | |")
    lines.append("")
    for name in figures:
        lines += [f"![{name}]({name})", ""]
    if man:
        lines += _manifest_md(man)
    return "\n".join(lines)


def write_mechanism_report(
    audit: MechanismAudit,
    out: str | os.PathLike[str],
    *,
    ledger: Ledger,
    seed: int,
    claim: AnyClaim | None = None,
    workers: int = 1,
    extra: Mapping[str, Any] | None = None,
    published: Sequence[tuple[str, float, float]] = (),
    preface: Sequence[str] = (),
    summary: Mapping[str, Any] | None = None,
    exact: tuple[float, str] | None = None,
) -> tuple[Path, Path]:
    """Write an audit's report (``mechanism.md``, ``mechanism.html``, figures), record and summary.

    Parameters
    ----------
    audit : MechanismAudit
        The audit.
    out : path
        Output folder.
    ledger : Ledger
        The ledger the audit was recorded in (its entry goes into the manifest).
    seed : int
        The audit's seed.
    claim : Claim or GDPClaim or ZCDPClaim or ProfileClaim, optional
        The claim tested; without one the report states no verdict.
    workers : int, default 1
        Processes the reserved calls ran in (for the manifest).
    extra : Mapping, optional
        More manifest fields (library version, backend, ...).
    published : sequence of (tool, epsilon_lower, confidence_level)
        Bounds other tools published, shown for comparison.
    preface : sequence of str
        Markdown lines placed after the report's title.
    summary : Mapping, optional
        The JSON summary to write; default :func:`mechanism_summary`.
    exact : (float, str), optional
        The exact epsilon and how it is known, shown beside the certificate.

    Returns
    -------
    (Path, Path)
        The Markdown and HTML reports.
    """
    from certify.report._render import manifest, safe_path, write_atomic, write_report
    from certify.report.figures import certificate_bars, confidence_corners, tradeoff_region

    entry = ledger.entry(audit.certificate.data_fingerprint)
    man = manifest(
        seeds={"audit": seed},
        pairs=[list(p) for p in audit.inputs],
        record_sha256=audit.record.sha256,
        ledger_entry=None if entry is None
        else attrs.asdict(entry, filter=lambda att, v: att.name != "outcome_json"),
        extra={
            "mechanism": audit.identity,
            "calls": audit.calls,
            "setup_calls": audit.setup_calls,
            "development_calls": audit.development_calls,
            "reserved_calls": dict(audit.reserved_calls),
            "seconds": round(audit.seconds, 3),
            "reserved_seconds": round(audit.reserved_seconds, 3),
            "workers": workers,
            **(extra or {}),
        },
    )
    figures = [
        ("Certified lower bound", certificate_bars(audit.family, claim)),
        ("Confidence corner", confidence_corners(audit.family)),
        ("Certified region and claimed curve", tradeoff_region(audit.family, claim)),
    ]
    body = mechanism_markdown(
        audit, claim=claim, man=man, figures=[f for f, _ in figures], published=published,
        exact=exact,
    )
    if preface:
        title, _, rest = body.partition("\n")
        body = "\n".join([title, "", *preface, rest.lstrip("\n")])
    paths = write_report(out, "mechanism", body, figures, title=f"certify audit: {audit.mechanism}")
    write_atomic(safe_path(out, "record.json"), audit.record.to_json())
    data = dict(summary) if summary is not None else mechanism_summary(audit, claim)
    if entry is not None and entry.head:  # the entry that recorded the outcome, for certify verify
        data["ledger"] = {
            **dict(data.get("ledger") or {}), "outcome_sequence": entry.outcome_sequence,
            "outcome_head": entry.outcome_head,
        }
    write_atomic(safe_path(out, "summary.json"), json.dumps(data, indent=2, sort_keys=True))
    return paths
