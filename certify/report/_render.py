"""Auditor reports: every number with its status, assumptions and uncertainty in words."""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
import os
import platform
import re
import tempfile
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from certify._core import lower_bound_text
from certify.claims import AnyClaim, Claim, GDPClaim, Inconclusive, ProfileClaim, Refuted, ZCDPClaim, refute
from certify.errors import DataError
from certify.methods.audit import AuditTable
from certify.plan import alpha_of_test
from certify.results import (
    Certificate,
    CertificateFamily,
    Diagnostic,
    ErrorRateEvidence,
    MMDEvidence,
    PopulationEstimate,
)

__all__ = [
    "Figure",
    "certificate_sentence",
    "curve_lines",
    "describe_markdown",
    "evaluation_markdown",
    "file_sha256",
    "manifest",
    "markdown_to_html",
    "safe_path",
    "write_atomic",
    "write_report",
]

Figure = tuple[str, bytes]
"""A figure: caption and PNG bytes."""

_METHOD_TITLES = {
    "gauss_mech": "GaussMech (Eq. 9)",
    "kde_lr": "KDE-LR (Eq. 10-11)",
    "mmd_permutation": "MMD permutation test",
    "mmd_tv": "MMD-TV (Eq. 12)",
    "roc_oof": "ROC-HT out of fold (Eq. 15)",
}

STATUS_MEANING = {
    "Diagnostic": (
        "A **Diagnostic** is a modelling score. It has no differential-privacy meaning: it is not "
        "an epsilon, not a bound and not an estimate of one, and it must not be compared with "
        "the numbers in other sections."
    ),
    "PopulationEstimate": (
        "A **PopulationEstimate** is a sample value inserted into a valid population inequality. "
        "It carries no confidence: it is not a lower confidence bound and can exceed the true "
        "epsilon. An infinite value comes from an empirical endpoint, not from proven perfect "
        "separation."
    ),
    "Certificate": (
        "A **Certificate** is a finite-sample lower confidence bound on epsilon, from fixed tests "
        "chosen on development data and evaluated once on reserved data. Only certificates can "
        "refute a privacy claim."
    ),
}


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _fmt(x: float) -> str:
    """A number for a report: infinity spelled out, otherwise 3 significant decimals."""
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if x != 0 and (abs(x) >= 1e4 or abs(x) < 1e-3):
        return f"{x:.3g}"
    return f"{x:.3f}"


def _fmt_lower(x: float) -> str:
    """A lower bound for a report, as :func:`_fmt` but rounded down (the one rule for bounds)."""
    if math.isfinite(x) and x > 0 and (x >= 1e4 or x < 1e-3):
        unit = 10.0 ** (math.floor(math.log10(x)) - 2)
        return f"{math.floor(x / unit) * unit:.3g}"
    return lower_bound_text(x)


def certificate_sentence(family: CertificateFamily, cert: Certificate) -> str:
    """One plain sentence saying what a certificate means."""
    n = len(family.certificates)
    level = (
        f"{family.confidence_level:.0%}"
        if family.confidence_level * 100 % 1 == 0
        else (f"{family.confidence_level:.4g}")
    )
    if cert.epsilon_lower > 0:
        return (
            f"This is a lower confidence bound: with at least {level} confidence, simultaneously "
            f"for all {n} pairs, epsilon is at least {_fmt_lower(cert.epsilon_lower)} for pair "
            f"{cert.pair} at delta = {cert.delta:g}, under the iid model."
        )
    return (
        f"No positive bound for pair {cert.pair}: the test's error bounds at {level} simultaneous "
        "confidence do not exclude epsilon = 0. This is not evidence of privacy."
    )


def curve_lines(family: CertificateFamily, claim: AnyClaim | None) -> list[str]:
    """Markdown: each certificate's certified curve parameters, beside the claim (if any).

    Every value is a Certificate at the family's simultaneous level: the mechanism is not
    ``mu``-GDP below ``mu_lower``, not ``rho``-zCDP below ``rho_lower``, and (for a point or
    profile claim) not ``(epsilon, delta)``-DP below ``epsilon_lower`` at the claim's delta.
    """
    level = f"{family.confidence_level:.4g}"
    head = ["| pair | test | mu_lower (Certificate) | rho_lower (Certificate) |"]
    rule = ["|---|---|---|---|"]
    extra: list[str] = []
    if isinstance(claim, Claim):
        head[0] += f" epsilon_lower at delta = {claim.delta:g} (Certificate) |"
        rule[0] += "---|"
    elif isinstance(claim, ProfileClaim):
        head[0] += " closest point of the profile (epsilon, delta) | epsilon_lower there (Certificate) |"
        rule[0] += "---|---|"
    rows = []
    for c in family.certificates:
        row = f"| {c.pair} | {c.test_name} | {_fmt_lower(c.mu_lower)} | {_fmt_lower(c.rho_lower)} |"
        if isinstance(claim, Claim):
            row += f" {_fmt_lower(c.epsilon_lower_at(claim.delta))} |"
        elif isinstance(claim, ProfileClaim):
            _, e, d = claim.excess(c)
            row += f" ({e:.4g}, {d:.3g}) | {_fmt_lower(c.epsilon_lower_at(d))} |"
        rows.append(row)
    match claim:
        case None:
            extra.append("No claim was stated.")
        case GDPClaim():
            extra.append(f"Claimed: {claim.describe()}; refuted when some mu_lower exceeds {claim.mu:g}.")
        case ZCDPClaim():
            extra.append(f"Claimed: {claim.describe()}; refuted when some rho_lower exceeds {claim.rho:g}.")
        case Claim():
            extra.append(
                f"Claimed: {claim.describe()}; refuted when some epsilon_lower at delta = "
                f"{claim.delta:g} exceeds {claim.epsilon:g}."
            )
        case ProfileClaim():
            extra.append(
                f"Claimed: {claim.describe()}; refuted when at some epsilon the certified bound at "
                "the profile's delta exceeds it (the closest point is shown)."
            )
    return [
        "## Certified privacy curves",
        "",
        f"Each value is a Certificate at the family's simultaneous level {level}, from the same "
        "two error bounds as epsilon_lower: the mechanism is not mu-GDP for any mu below "
        "mu_lower and not rho-zCDP for any rho below rho_lower, under the iid model.",
        "",
        *head,
        *rule,
        *rows,
        "",
        *extra,
        "",
    ]


def manifest(
    *,
    input_path: str | os.PathLike[str] | None = None,
    rows: int | None = None,
    identities: int | None = None,
    seeds: Mapping[str, int] | None = None,
    pairs: Sequence[Sequence[str]] | None = None,
    record_sha256: str | None = None,
    ledger_entry: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A run manifest: inputs, versions, seeds, pairs, record hash and ledger entry."""
    versions: dict[str, str] = {}
    for dist in ("certify", "numpy", "scipy", "scikit-learn", "attrs", "numba", "matplotlib", "skops"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    out: dict[str, Any] = {
        "input": None
        if input_path is None
        else {"path": os.fspath(input_path), "sha256": file_sha256(input_path)},
        "rows": rows,
        "identities": identities,
        "python": platform.python_version(),
        "versions": versions,
        "seeds": dict(seeds or {}),
        "pairs": [list(p) for p in (pairs or [])],
        "record_sha256": record_sha256,
        "ledger_entry": dict(ledger_entry) if ledger_entry else None,
    }
    out.update(dict(extra or {}))
    return out


def _manifest_md(man: Mapping[str, Any]) -> list[str]:
    """The manifest as a Markdown section."""
    lines = ["## Manifest", ""]
    inp = man.get("input")
    if inp:
        lines.append(f"- input: `{inp['path']}` (SHA-256 `{inp['sha256']}`)")
    if man.get("rows") is not None:
        lines.append(f"- rows: {man['rows']}; identities: {man['identities']}")
    if man.get("record_sha256"):
        lines.append(f"- pre-registration record SHA-256: `{man['record_sha256']}`")
    entry = man.get("ledger_entry")
    if entry:
        lines.append(
            f"- ledger entry: split `{str(entry.get('reserved_fingerprint'))[:16]}` spent at "
            f"{entry.get('spent_at')} by protocol {entry.get('protocol_name')!r} "
            f"(status {entry.get('status')})"
        )
        if entry.get("head"):
            outcome = (
                f"; outcome at entry {entry['outcome_sequence']} (`{entry.get('outcome_head')}`)"
                if entry.get("outcome_sequence") else ""
            )
            lines.append(
                f"- ledger chain: evaluation {entry.get('evaluation')} of ledger "
                f"`{entry.get('ledger_id')}`, spent at entry {entry.get('sequence')} "
                f"(`{entry.get('head')}`){outcome}. Check with `certify verify REPORT --ledger "
                "LEDGER_OR_EXPORT` (docs/trust.md)."
            )
    if man.get("seeds"):
        lines.append("- seeds: " + ", ".join(f"{k} = {v}" for k, v in man["seeds"].items()))
    lines.append(
        f"- Python {man.get('python')}; " + ", ".join(f"{k} {v}" for k, v in man.get("versions", {}).items())
    )
    pairs = man.get("pairs") or []
    if pairs:
        shown = ", ".join(f"{a}~{b}" for a, b in pairs[:20])
        lines.append(f"- pairs ({len(pairs)}): {shown}{' ...' if len(pairs) > 20 else ''}")
    for key, value in man.items():
        if key not in {
            "input",
            "rows",
            "identities",
            "record_sha256",
            "ledger_entry",
            "seeds",
            "python",
            "versions",
            "pairs",
        }:
            lines.append(f"- {key}: {json.dumps(value, default=str)}")
    return [*lines, ""]


def _level_sentence(family: CertificateFamily) -> str:
    """The family's level and the registered family its error budget is divided over."""
    n = len(family.certificates)
    per_rate = family.certificates[0].alpha_per_rate
    if any(not math.isclose(c.alpha_per_rate, per_rate, rel_tol=1e-9) for c in family.certificates):
        return (
            f"Simultaneous confidence level: **{family.confidence_level:g}** over {n} tests (union "
            "bound: the tests come from merged families, each error rate bounded at its own "
            f"family's level; the shares add up to {1 - family.confidence_level:.3g})."
        )
    per_test = alpha_of_test(per_rate)
    registered = max(n, round((1.0 - family.confidence_level) / per_test))
    over = (
        f"{n} tests"
        if registered == n
        else f"{n} tests evaluated of a registered family of {registered}"
    )
    return (
        f"Simultaneous confidence level: **{family.confidence_level:g}** over {over} (Bonferroni "
        f"over {registered}: each test's share of the error budget is {1 - family.confidence_level:.3g}"
        f"/{registered} = {per_test:.3g}, each of its two error rates bounded one-sided at "
        f"{per_rate:.3g})."
    )


def evaluation_markdown(
    family: CertificateFamily,
    *,
    claim: AnyClaim | None = None,
    man: Mapping[str, Any] | None = None,
    title: str = "Pre-registered audit",
    figures: Sequence[str] = (),
) -> str:
    """The report of a sealed protocol's evaluation (Markdown)."""
    lines = [f"# {title}: {family.protocol_name}", ""]
    lines += ["## Certificates", "", STATUS_MEANING["Certificate"], ""]
    lines += [
        _level_sentence(family),
        "",
        "| pair | test | false positives | false negatives | U_FPR (Certificate: upper bound) | "
        "U_FNR (Certificate: upper bound) | epsilon_lower (Certificate) |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in family.certificates:
        if isinstance(c.evidence, ErrorRateEvidence):
            ev = c.evidence
            lines.append(
                f"| {c.pair} | {c.test_name} | {ev.false_positives}/{ev.n_class0} | "
                f"{ev.false_negatives}/{ev.n_class1} | {ev.u_fpr:.4f} | {ev.u_fnr:.4f} | "
                f"**{_fmt_lower(c.epsilon_lower)}** |"
            )
    lines.append("")
    mmd = [c for c in family.certificates if isinstance(c.evidence, MMDEvidence)]
    if mmd:
        lines += [
            "Certificates from the MMD route (kernel fixed on development data; lower confidence "
            "bound on the population MMD by Gretton et al. 2012, Theorem 7):",
            "",
            "| pair | test | rows | MMD (biased) | finite-sample deduction | MMD lower bound | "
            "epsilon_lower (Certificate) |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in mmd:
            m = c.evidence
            if not isinstance(m, MMDEvidence):  # pragma: no cover - filtered above
                continue
            lines.append(
                f"| {c.pair} | {c.test_name} | {m.n_class0}+{m.n_class1} | {m.mmd_biased:.4f} | "
                f"{m.slack:.4f} | {lower_bound_text(m.mmd_lower, 4)} | **{_fmt_lower(c.epsilon_lower)}** |"
            )
        lines.append("")
    for c in family.certificates:
        lines.append(f"- {certificate_sentence(family, c)}")
    for method in dict.fromkeys(c.method for c in family.certificates):
        first = next(c for c in family.certificates if c.method == method)
        lines += ["", f"Assumptions of every {method} certificate:", ""]
        lines += [f"- {a}" for a in first.assumptions]
    lines.append("")
    lines += curve_lines(family, claim)
    lines += ["## Verdict", ""]
    if claim is None:
        lines.append("No claim was stated; no verdict.")
    else:
        verdict = refute(claim, family)
        match verdict:
            case Refuted():
                lines.append(f"**Refuted.** {str(verdict).removeprefix('Refuted: ')}")
            case Inconclusive():
                lines.append(f"**Inconclusive.** {str(verdict).removeprefix('Inconclusive: ')}")
        lines.append("")
        lines.append(
            "certify never says a mechanism is private: an inconclusive audit has not shown "
            "the claim to hold."
        )
    lines.append("")
    for name in figures:
        lines += [f"![{name}]({name})", ""]
    if man:
        lines += _manifest_md(man)
    return "\n".join(lines)


def describe_markdown(
    table: AuditTable,
    *,
    man: Mapping[str, Any] | None = None,
    title: str = "Descriptive audit",
    figures: Sequence[str] = (),
) -> str:
    """The report of descriptive routes, one section per status (Markdown)."""
    lines = [f"# {title}", "", f"{len(table.pairs)} pairs audited.", ""]
    if table.skipped:
        lines += ["Not run (the data of these pairs cannot support the method):", ""]
        lines += [f"- {line}" for line in table.skipped_lines()] + [""]
    groups = table.by_status()
    headings = {"Diagnostic": "Diagnostics", "PopulationEstimate": "Population estimates"}
    summaries = table.summaries()
    for status in ("Diagnostic", "PopulationEstimate"):
        if status not in groups:
            continue
        lines += [f"## {headings[status]}", "", STATUS_MEANING[status], ""]
        lines += [
            f"| method | pairs | median ({'score' if status == 'Diagnostic' else 'epsilon_estimate'}) "
            f"| +inf values | positive | exact (0,1) corners |",
            "|---|---|---|---|---|---|",
        ]
        for summary, corners in summaries:
            if summary.status != status:
                continue
            lines.append(
                f"| {_METHOD_TITLES.get(summary.method, summary.method)} | {summary.count} | "
                f"{_fmt(summary.median)} ({status}) | {summary.n_infinite} | {summary.n_positive} | "
                f"{'' if corners is None else corners} |"
            )
        lines.append("")
        for method in table.methods():
            group = [r for r in table.of_method(method) if r.status == status]
            if group:
                lines.append(f"Assumptions of {_METHOD_TITLES.get(method, method)}:")
                lines += [f"- {a}" for a in group[0].assumptions]
                lines.append("")
        if status == "Diagnostic":
            perms = [r for r in groups[status] if isinstance(r, Diagnostic) and r.method == "mmd_permutation"]
            if perms:
                ps = sorted(r.p_value or 1.0 for r in perms)
                lines.append(
                    f"MMD permutation p-values: smallest {ps[0]:.3g}, median {ps[len(ps) // 2]:.3g}; "
                    "each is a separate, uncorrected test of equal distributions."
                )
                lines.append("")
        if status == "PopulationEstimate":
            roc = [r for r in groups[status] if isinstance(r, PopulationEstimate) and r.method == "roc_oof"]
            inf_endpoint = sum(1 for r in roc if r.infinite_by_endpoint and not r.exact_corner)
            if roc:
                lines.append(
                    f"{inf_endpoint} of {len(roc)} infinite or finite ROC conversions are infinite "
                    "because of an empirical endpoint without the exact (0, 1) corner."
                )
                lines.append("")
    lines += [
        "## Certificates",
        "",
        "None: descriptive routes never produce certificates. To "
        "test a claim, pre-register a protocol and evaluate it once on reserved data.",
        "",
    ]
    for name in figures:
        lines += [f"![{name}]({name})", ""]
    if man:
        lines += _manifest_md(man)
    return "\n".join(lines)


_STYLE = (
    # text keeps a readable measure; tables may use the whole window (a summary of 11
    # status-labelled columns fits at 1280 px) and scroll inside their box, never off the page
    "body{font-family:sans-serif;margin:2em;line-height:1.45}"
    "h1,h2,h3,h4,p,ul,ol,pre,blockquote,figure{max-width:60em}"
    ".table{overflow-x:auto;max-width:100%;margin:1em 0}"
    "table{border-collapse:collapse;font-size:.85em}td,th{border:1px solid #999;padding:.25em .5em}"
    "th{background:#eee}img{max-width:100%}code{background:#f4f4f4}"
)


def markdown_to_html(markdown: str, images: Mapping[str, bytes], title: str) -> str:
    r"""Render report Markdown to self-contained HTML: CommonMark plus tables, figures inlined.

    Parameters
    ----------
    markdown : str
        The report text (CommonMark with pipe tables). Raw HTML in it is shown as text, never
        interpreted; a line break inside a paragraph stays a line break.
    images : Mapping[str, bytes]
        PNG bytes by the file name the Markdown refers to (``![caption](name.png)``). An image on
        a line of its own becomes a ``<figure>`` with its caption; a name not in ``images`` is
        left out.
    title : str
        The page title.

    Returns
    -------
    str
        One HTML document with no external resource and no script.

    Examples
    --------
    >>> page = markdown_to_html("# Bounds\n\n| pair | value |\n|---|---|\n| a, b | 1.5 |", {}, "t")
    >>> "<h1>Bounds</h1>" in page and "<td>1.5</td>" in page
    True
    >>> "&lt;script&gt;" in markdown_to_html("<script>alert(1)</script>", {}, "t")
    True
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table")
    tokens = md.parse(markdown)
    for k, token in enumerate(tokens):
        children = token.children or []
        if token.type != "inline" or len(children) != 1 or children[0].type != "image":
            continue
        # a paragraph holding one image only: a figure, or nothing when the image is unknown
        if children[0].attrGet("src") in images:
            tokens[k - 1].tag = tokens[k + 1].tag = "figure"
            children[0].meta["figure"] = True
        else:
            tokens[k - 1].hidden = tokens[k + 1].hidden = True
            token.children = []

    def image(self: Any, tokens: Sequence[Any], idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        data = images.get(str(token.attrGet("src")))
        if data is None:
            return ""
        alt = html.escape(self.renderInlineAsText(token.children or [], options, env))
        b64 = base64.b64encode(data).decode("ascii")
        caption = f"<figcaption>{alt}</figcaption>" if token.meta.get("figure") else ""
        return f'<img alt="{alt}" src="data:image/png;base64,{b64}">{caption}'

    md.add_render_rule("image", image)
    md.add_render_rule("table_open", lambda *args: '<div class="table"><table>\n')
    md.add_render_rule("table_close", lambda *args: "</table></div>\n")
    body = str(md.renderer.render(tokens, md.options, {}))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>\n"
        + body
        + "</body></html>\n"
    )


def safe_path(out_dir: str | os.PathLike[str], name: str) -> Path:
    """A path inside ``out_dir``; names that would escape it are refused."""
    try:
        base = Path(out_dir).resolve()
        target = (base / name).resolve()
    except (ValueError, OSError, RuntimeError) as exc:  # a NUL byte; a symlink loop
        raise DataError(f"output name {name!r} is not a usable path ({exc}).") from exc
    if base != target and base not in target.parents:
        raise DataError(f"output name {name!r} would leave the output folder {str(base)!r}.")
    return target


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write a file through a temporary file and a rename, so no half-written file remains."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_report(
    out_dir: str | os.PathLike[str],
    stem: str,
    markdown: str,
    figures: Sequence[Figure] = (),
    *,
    title: str = "certify report",
) -> tuple[Path, Path]:
    """Write ``stem.md`` (figures as PNG files beside it) and a self-contained ``stem.html``."""
    images: dict[str, bytes] = {}
    for caption, png in figures:
        name = re.sub(r"[^a-z0-9]+", "-", caption.lower()).strip("-") + ".png"
        images[name] = png
        write_atomic(safe_path(out_dir, name), png)
        markdown = markdown.replace(f"]({caption})", f"]({name})")
    md_path = safe_path(out_dir, f"{stem}.md")
    html_path = safe_path(out_dir, f"{stem}.html")
    write_atomic(md_path, markdown)
    write_atomic(html_path, markdown_to_html(markdown, images, title))
    return md_path, html_path


def png(fig: Any) -> bytes:
    """A matplotlib figure as PNG bytes (closes it)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()
