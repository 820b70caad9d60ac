"""Report any result with its status, and keep statuses apart when aggregating."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import assert_never

import certify as cf


def describe(result: cf.Result) -> str:
    """One line per result; the number is always named by its status."""
    match result:
        case cf.Diagnostic():
            return f"{result.method}: diagnostic score {result.score:.3f} (no DP meaning)"
        case cf.PopulationEstimate():
            value = "inf" if math.isinf(result.epsilon_estimate) else f"{result.epsilon_estimate:.3f}"
            return f"{result.method}: plug-in estimate {value} (no confidence)"
        case cf.Certificate():
            return (
                f"{result.method}: epsilon >= {result.epsilon_lower:.3f} with "
                f"{result.confidence_level:.0%} confidence"
            )
        case _:
            assert_never(result)


def medians(results: Sequence[cf.Result]) -> dict[str, float]:
    """The median per status and method, never across them."""
    diagnostics: dict[str, list[cf.Diagnostic]] = {}
    estimates: dict[str, list[cf.PopulationEstimate]] = {}
    certificates: dict[str, list[cf.Certificate]] = {}
    for r in results:
        match r:
            case cf.Diagnostic():
                diagnostics.setdefault(r.method, []).append(r)
            case cf.PopulationEstimate():
                estimates.setdefault(r.method, []).append(r)
            case cf.Certificate():
                certificates.setdefault(r.method, []).append(r)
            case _:
                assert_never(r)
    out: dict[str, float] = {}
    for method, ds in diagnostics.items():
        out[f"Diagnostic/{method}"] = cf.summarize(ds).median
    for method, es in estimates.items():
        out[f"PopulationEstimate/{method}"] = cf.summarize(es).median
    for method, cs in certificates.items():
        out[f"Certificate/{method}"] = cf.summarize(cs).median
    return out


def verdict_line(claim: cf.Claim, evidence: cf.Certificate | cf.CertificateFamily) -> str:
    """Test a claim; only certificates are accepted as evidence."""
    verdict = cf.refute(claim, evidence)
    if isinstance(verdict, cf.Refuted):
        return f"refuted: epsilon >= {max(verdict.epsilon_lower):.3f} > {claim.epsilon}"
    return f"inconclusive: best bound {verdict.best_epsilon_lower:.3f}"


def main() -> None:
    """Describe and summarize a few results."""
    results: list[cf.Result] = [
        cf.Diagnostic(method="gauss_mech", score=12.0, equation="Eq. 9"),
        cf.Diagnostic(method="gauss_mech", score=14.0, equation="Eq. 9"),
        cf.PopulationEstimate(method="roc_oof", epsilon_estimate=math.inf),
    ]
    for r in results:
        print(describe(r))
    print(medians(results))


if __name__ == "__main__":
    main()
