"""Report figures (matplotlib, Agg backend), returned as PNG bytes."""

from __future__ import annotations

import math

import numpy as np

from certify._core import lower_bound_text
from certify.claims import AnyClaim, Claim, tradeoff_curve
from certify.methods.audit import AuditTable
from certify.report._render import png
from certify.results import CertificateFamily, Diagnostic, ErrorRateEvidence, PopulationEstimate

__all__ = ["auc_histogram", "certificate_bars", "confidence_corners", "mmd_histogram", "tradeoff_region"]


def _plt() -> object:
    """Pyplot with the non-interactive backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def certificate_bars(family: CertificateFamily, claim: AnyClaim | None = None) -> bytes:
    """Bars of each certificate's epsilon_lower, with the claimed epsilon as a line (point claims)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 3.2))  # type: ignore[attr-defined]
    labels = [str(c.pair) for c in family.certificates]
    point = claim if isinstance(claim, Claim) else None
    values = [
        c.epsilon_lower_at(point.delta) if point is not None else c.epsilon_lower
        for c in family.certificates
    ]
    ax.bar(range(len(values)), values, color="#3b6ea8")
    ax.set_xticks(range(len(values)), labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("epsilon_lower (Certificate)")
    ax.set_title(f"Certified lower bounds, {family.confidence_level:g} simultaneous confidence")
    if point is not None:
        ax.axhline(
            point.epsilon, color="#c0392b", linestyle="--", label=f"claimed epsilon = {point.epsilon:g}"
        )
        ax.legend(fontsize=8)
    return png(fig)


def confidence_corners(family: CertificateFamily) -> bytes:
    """ROC space: each test's observed operating point and its confidence corner (U_FPR, 1 - U_FNR)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.5, 4.5))  # type: ignore[attr-defined]
    for c in family.certificates:
        if not isinstance(c.evidence, ErrorRateEvidence):
            continue
        ax.plot([c.fpr, c.u_fpr], [1 - c.fnr, 1 - c.u_fnr], color="#999", linewidth=0.8)
        ax.plot(c.fpr, 1 - c.fnr, "o", color="#3b6ea8", markersize=4)
        ax.plot(c.u_fpr, 1 - c.u_fnr, "s", color="#c0392b", markersize=4)
    xs = np.linspace(0, 1, 200)
    best = max(c.epsilon_lower for c in family.certificates)
    if best > 0 and math.isfinite(best):
        ax.plot(
            xs,
            np.minimum(1, math.exp(best) * xs),
            color="#2c7",
            linestyle=":",
            label=f"boundary at epsilon = {lower_bound_text(best)}",
        )
        ax.legend(fontsize=7, loc="lower right")
    ax.plot([0, 1], [0, 1], color="#ccc", linewidth=0.8)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title("observed (circle) and confidence corner (square)", fontsize=9)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    return png(fig)


def tradeoff_region(family: CertificateFamily, claim: AnyClaim | None = None) -> bytes:
    """Trade-off plane: each certificate's region of possible error rates against the claimed curve.

    With the family's confidence, a test's true (false-positive, false-negative) rates lie in the
    rectangle below its corner ``(U_FPR, U_FNR)``; the claim allows only rates on or above its
    trade-off curve (:func:`certify.claims.tradeoff_curve`). A corner below the curve refutes it.
    """
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.8, 4.5))  # type: ignore[attr-defined]
    xs = np.concatenate([np.geomspace(1e-6, 0.01, 60), np.linspace(0.01, 1.0, 140)])
    if claim is not None:
        ax.plot(xs, tradeoff_curve(claim, xs), color="#c0392b", label=f"claimed: {claim.describe()}")
    ax.plot([0, 1], [1, 0], color="#ccc", linewidth=0.8, label="no information")
    for k, c in enumerate(family.certificates):
        if not isinstance(c.evidence, ErrorRateEvidence):
            continue
        ax.add_patch(
            plt.Rectangle(  # type: ignore[attr-defined]
                (0.0, 0.0), c.u_fpr, c.u_fnr, facecolor="#3b6ea8", alpha=0.12, edgecolor="#3b6ea8",
                label="certified region (Certificate)" if k == 0 else None,
            )
        )
        ax.plot(c.u_fpr, c.u_fnr, "s", color="#3b6ea8", markersize=4)
    ax.set_xlabel("false positive rate (input a in the event)")
    ax.set_ylabel("false negative rate (input b outside it)")
    ax.set_title(f"true rates lie in the shaded region, {family.confidence_level:.4g} confidence", fontsize=8)
    ax.set_xlim(-0.01, 1.01)
    ax.set_ylim(-0.01, 1.01)
    ax.legend(fontsize=7, loc="upper right")
    return png(fig)


def mmd_histogram(table: AuditTable) -> bytes:
    """Histogram of the sample MMD values (PopulationEstimate details) across pairs."""
    plt = _plt()
    values = [
        float(r.details["mmd"])  # type: ignore[arg-type]
        for r in table.of_method("mmd_tv")
        if isinstance(r, PopulationEstimate) and r.details.get("mmd") is not None
    ]
    fig, ax = plt.subplots(figsize=(5, 3))  # type: ignore[attr-defined]
    ax.hist(values, bins=20, color="#7a5ea8")
    ax.set_xlabel("sample MMD (clipped square root of unbiased MMD^2)")
    ax.set_ylabel("pairs")
    ax.set_title("MMD across pairs (PopulationEstimate inputs, no confidence)", fontsize=9)
    return png(fig)


def auc_histogram(table: AuditTable) -> bytes:
    """Histogram of out-of-fold AUCs, and of permutation p-values when present."""
    plt = _plt()
    aucs = [
        r.auc for r in table.of_method("roc_oof") if isinstance(r, PopulationEstimate) and r.auc is not None
    ]
    ps = [
        r.p_value
        for r in table.of_method("mmd_permutation")
        if isinstance(r, Diagnostic) and r.p_value is not None
    ]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))  # type: ignore[attr-defined]
    axes[0].hist(aucs, bins=20, range=(0, 1), color="#3b6ea8")
    axes[0].set_xlabel("out-of-fold AUC")
    axes[0].set_title("ROC-HT OOF (PopulationEstimate)", fontsize=9)
    axes[1].hist(ps, bins=20, range=(0, 1), color="#a86e3b")
    axes[1].set_xlabel("MMD permutation p-value")
    axes[1].set_title("permutation tests (Diagnostic)", fontsize=9)
    return png(fig)
