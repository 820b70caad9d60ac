"""Auditor reports (Markdown and self-contained HTML), figures and run manifests."""

from certify.report._render import (
    certificate_sentence,
    describe_markdown,
    evaluation_markdown,
    file_sha256,
    manifest,
    markdown_to_html,
    safe_path,
    write_atomic,
    write_report,
)
from certify.report.figures import (
    auc_histogram,
    certificate_bars,
    confidence_corners,
    mmd_histogram,
    tradeoff_region,
)

__all__ = [
    "auc_histogram",
    "certificate_bars",
    "certificate_sentence",
    "confidence_corners",
    "describe_markdown",
    "evaluation_markdown",
    "file_sha256",
    "manifest",
    "markdown_to_html",
    "mmd_histogram",
    "safe_path",
    "tradeoff_region",
    "write_atomic",
    "write_report",
]
