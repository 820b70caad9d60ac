"""The four descriptive routes on two samples, dispatched by status.

Run: python docs/examples/descriptive_routes.py
"""

from __future__ import annotations

from typing import assert_never

import numpy as np

import certify as cf


def describe(result: cf.Result) -> str:
    """One line per result, naming the number by its status."""
    match result:
        case cf.Diagnostic():
            return f"{result.method}: score {result.score:.3f} (Diagnostic: no DP meaning)"
        case cf.PopulationEstimate():
            return (
                f"{result.method}: epsilon_estimate {result.epsilon_estimate:.3f} "
                "(PopulationEstimate: plug-in value, no confidence)"
            )
        case cf.Certificate():
            return f"{result.method}: epsilon_lower {result.epsilon_lower:.3f} (Certificate)"
        case _:
            assert_never(result)


def main() -> None:
    rng = np.random.default_rng(3)
    x_a = rng.standard_normal((60, 32))
    x_b = rng.standard_normal((60, 32)) + 0.3
    results: list[cf.Result] = [
        cf.gauss_mech(x_a, x_b, delta=1e-5),
        cf.kde_lr(x_a, x_b, alpha=0.01),
        cf.mmd_tv(x_a, x_b),
        cf.roc_oof(x_a, x_b, seed=0),
        cf.mmd_permutation_test(x_a, x_b, permutations=999, seed=0),
    ]
    for result in results:
        print(describe(result))
    roc = results[3]
    if isinstance(roc, cf.PopulationEstimate):
        print(f"ROC AUC {roc.auc:.3f}; exact (0, 1) corner observed: {roc.exact_corner}")
    diagnostics = [r for r in results if isinstance(r, cf.Diagnostic) and r.method == "gauss_mech"]
    print(cf.summarize(diagnostics))


if __name__ == "__main__":
    main()
