"""Curve claims (mu-GDP, rho-zCDP): certified parameters, power against a planted bug, validity, speed.

The Gaussian mechanism with sensitivity 1 and sigma 1 is exactly 1-GDP and 0.5-zCDP. For it,
print the mean certified ``mu_lower`` under ``GDPClaim(1.0)`` and ``rho_lower`` under
``ZCDPClaim(0.5)`` over seeds, beside the ceilings computed from the exact error rates (the
best threshold known in advance and every call reserved); the same mechanism with sigma 0.8
(a planted bug: 20% too little noise, truly 1.25-GDP and 0.78-zCDP) refuted under both
claims, and not refutable under the (epsilon, 1e-6) point the GDP claim implies; validity
(how often the certified parameter exceeds the truth, at small budgets); and the whole
audit's time.

Run from the repository root::

    python benchmarks/bench_claims.py                      # every part, the issue's settings
    python benchmarks/bench_claims.py --part power --seeds 10
    python benchmarks/bench_claims.py --part bug --seeds 20
    python benchmarks/bench_claims.py --part pairs --seeds 20
    python benchmarks/bench_claims.py --part validity --seeds 200
    python benchmarks/bench_claims.py --part ceiling

Each audit uses its own temporary ledger, so every one is a first evaluation (level 0.9696 of
the stated 0.95).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import logsumexp
from scipy.stats import beta as beta_dist
from scipy.stats import norm

import certify as cf
from certify.plan import rate_level
from certify.protocol.ledger import evaluation_share
from certify.stats.tradeoff import gdp_mu_lower, zcdp_rho_lower

FIRST_LEVEL_ALPHA = rate_level(0.05 * evaluation_share(1))
"""alpha_per_rate of a first evaluation at the stated 0.95."""


def gaussian(sigma: float) -> Callable[[Any, int, np.random.Generator], Any]:
    """The Gaussian mechanism x + N(0, sigma^2) (sensitivity 1 between inputs 0 and 1).

    The noise is rounded to a multiple of 2^-32, so adding it to 0 or 1 is exact: the law is the
    Gaussian's (discretized far below its scale) and the doubles' bits carry nothing more.
    ``x + rng.normal()`` in doubles is refuted through its bits (docs/bugs.md).
    """

    def mechanism(x: Any, n: int, rng: np.random.Generator) -> Any:
        return x[0] + np.round(rng.normal(0.0, sigma, size=n) * 2.0**32) / 2.0**32

    mechanism.__qualname__ = f"gaussian_sigma_{sigma:g}"
    return mechanism


def audit(
    sigma: float, calls: int, seed: int, claim: cf.AnyClaim | None,
    inputs: list[tuple[list[float], list[float]]] | None = None,
) -> cf.MechanismAudit:
    """One audit on its own ledger: of inputs 0 and 1, or of the candidate pairs ``inputs``."""
    ledger = cf.Ledger(os.path.join(tempfile.mkdtemp(prefix="bench-claims-"), "m.ledger"))
    kw: dict[str, Any] = {
        "calls": calls, "seed": seed, "ledger": ledger, "progress": False, "claim": claim
    }
    if inputs is None:
        return cf.audit_mechanism(gaussian(sigma), 0.0, 1.0, **kw)
    return cf.audit_mechanism(gaussian(sigma), inputs=inputs, **kw)


def _upper(k: float, n: int, alpha: float) -> float:
    """Clopper-Pearson upper bound at a real-valued count (as the criterion interpolates)."""
    return 1.0 if k >= n else float(beta_dist.isf(alpha, k + 1.0, n - k))


def binary_ceiling(mu: float, calls: int, kind: str) -> tuple[float, float]:
    """The best threshold's certified value at expected counts, every call reserved: (value, threshold)."""
    n = calls // 2
    best = (0.0, 0.0)
    for t in np.linspace(-4.0, mu + 4.0, 321):
        u0 = _upper(norm.sf(t) * n, n, FIRST_LEVEL_ALPHA)
        u1 = _upper(norm.cdf(t - mu) * n, n, FIRST_LEVEL_ALPHA)
        value = float(gdp_mu_lower(u0, u1) if kind == "mu" else zcdp_rho_lower(u0, u1, refine=True))
        if value > best[0]:
            best = (value, float(t))
    return best


def kbin_rho_ceiling(mu: float, calls: int, bins: int) -> float:
    """What a k-bin partition could certify for zCDP at expected counts, every call reserved.

    Each cell's probability under input b is bounded below and under input a above (and the
    other way round for the reverse divergence), one-sided Clopper-Pearson at
    ``alpha / (2 bins)`` each (a union bound over 2 bins bounds per direction); then
    ``D_lambda >= log(sum L_i^lambda U_i^(1 - lambda)) / (lambda - 1)`` (the sum grows in every
    ``p_i`` and falls in every ``q_i``). Edges: the best of a small search over quantile grids.
    Not implemented as a certificate: this measures whether it would pay.
    """
    n = calls // 2
    alpha = 1.0 - (1.0 - 0.05 * evaluation_share(1)) ** (1.0 / (2 * bins))  # 2k bounds per direction
    lams = 1.0 + np.geomspace(1e-3, 1e3, 200)
    best = 0.0
    for top in np.linspace(1.5, mu + 3.5, 9):
        edges = np.concatenate([[-np.inf], np.linspace(mu / 2 - (top - mu / 2), top, bins - 1), [np.inf]])
        p = norm.cdf(edges[1:] - mu) - norm.cdf(edges[:-1] - mu)  # input b
        q = norm.cdf(edges[1:]) - norm.cdf(edges[:-1])  # input a
        for hi, lo in ((p, q), (q, p)):  # D(hi || lo): lower bounds on hi, upper on lo
            low = np.array([beta_dist.ppf(alpha, k, n - k + 1) if k >= 1 else 0.0 for k in hi * n])
            up = np.array([_upper(k, n, alpha) for k in lo * n])
            keep = low > 0
            log_low, log_up = np.log(low[keep]), np.log(up[keep])
            values = [
                logsumexp(lam * log_low + (1.0 - lam) * log_up) / (lam - 1.0) / lam for lam in lams
            ]
            best = max(best, float(np.max(values)))
    return best


def part_ceiling() -> None:
    """The ceilings the issue quotes, computed from the exact error rates."""
    print("## Ceilings (exact rates, best threshold known in advance, every call reserved, level 0.9696)\n")
    print("| calls | mu_lower ceiling (threshold) | rho_lower ceiling, one event (threshold) |")
    print("|---|---|---|")
    for calls in (10**5, 10**6, 2 * 10**7):
        mu, t_mu = binary_ceiling(1.0, calls, "mu")
        rho, t_rho = binary_ceiling(1.0, calls, "rho")
        print(f"| {calls:.0e} | {mu:.4f} ({t_mu:.2f}) | {rho:.4f} ({t_rho:.2f}) |")
    print("\nA k-bin partition (a certificate certify does not issue; measured to see if it would pay):\n")
    print("| calls | " + " | ".join(f"k = {k}" for k in (2, 3, 4, 6, 8)) + " |")
    print("|---|" + "---|" * 5)
    for calls in (10**6, 2 * 10**7):
        row = " | ".join(f"{kbin_rho_ceiling(1.0, calls, k):.4f}" for k in (2, 3, 4, 6, 8))
        print(f"| {calls:.0e} | {row} |")
    print()


def part_power(seeds: int) -> None:
    """Mean certified mu and rho on the 1-GDP Gaussian, each audit targeting its claim."""
    print(f"## Gaussian mechanism, mu = 1 (sigma 1): certified parameters over {seeds} seeds\n")
    print("| claim | calls | mean | min | max | ceiling | mean time |")
    print("|---|---|---|---|---|---|---|")
    for row, (claim, kind, calls) in enumerate((
        (cf.GDPClaim(1.0), "mu", 10**5),
        (cf.GDPClaim(1.0), "mu", 10**6),
        (cf.ZCDPClaim(0.5), "rho", 10**6),
    )):
        values, times = [], []
        for seed in range(seeds):
            start = time.perf_counter()
            # a seed of its own per row: the same seed and budget are the same reserved calls
            a = audit(1.0, calls, 100 * row + seed, claim)
            times.append(time.perf_counter() - start)
            values.append(getattr(a.certificate, f"{kind}_lower"))
        ceiling = binary_ceiling(1.0, calls, kind)[0]
        print(
            f"| {claim.describe()} | {calls:.0e} | {np.mean(values):.4f} | {min(values):.4f} | "
            f"{max(values):.4f} | {ceiling:.4f} | {np.mean(times):.1f} s |"
        )
    print()


def part_bug(seeds: int) -> None:
    """The planted bug (sigma 0.8) under the curve claims and under the point one implies."""
    gdp, zcdp = cf.GDPClaim(1.0), cf.ZCDPClaim(0.5)
    point = gdp.implied_point(1e-6)
    print(f"## Planted bug: sigma 0.8 instead of 1 (truly 1.25-GDP, 0.78-zCDP), {seeds} seeds\n")
    print("| claim tested | calls | refuted | mean certified value |")
    print("|---|---|---|---|")
    rows: list[tuple[cf.AnyClaim, int, str]] = [
        (gdp, 10**5, "mu_lower"),
        (zcdp, 10**6, "rho_lower"),
        (point, 10**5, "epsilon"),
        (point, 10**6, "epsilon"),
    ]
    for row, (claim, calls, attr) in enumerate(rows):
        hits, values = 0, []
        for seed in range(seeds):
            a = audit(0.8, calls, 1000 + 100 * row + seed, claim)
            verdict = cf.refute(claim, a.family)
            hits += isinstance(verdict, cf.Refuted)
            c = a.certificate
            values.append(c.epsilon_lower_at(point.delta) if attr == "epsilon" else getattr(c, attr))
        what = "epsilon_lower at 1e-6" if attr == "epsilon" else attr
        print(f"| {claim.describe()} | {calls:.0e} | {hits}/{seeds} | {what} {np.mean(values):.4f} |")
    print()


def part_pairs(seeds: int) -> None:
    """The planted bug with a second, weaker candidate pair: the race must keep the pair that refutes.

    Inputs 0 against 1 (truly 1.25-GDP at sigma 0.8) and 0 against 0.75 (truly 0.9375-GDP: the
    claim holds there); each audit targets ``GDPClaim(1.0)`` and must choose the first pair to
    refute. (0.75, like 0 and 1, takes the noise's multiples of 2^-32 exactly.)
    """
    claim = cf.GDPClaim(1.0)
    print(f"## Planted bug (sigma 0.8) with two candidate pairs, {seeds} seeds\n")
    print("| claim | calls | refuted | chose 0 ~ 1 | mean mu_lower |")
    print("|---|---|---|---|---|")
    for row, calls in enumerate((10**5, 10**6)):
        hits, right, values = 0, 0, []
        for seed in range(seeds):
            a = audit(0.8, calls, 3000 + 100 * row + seed, claim, [([0.0], [1.0]), ([0.0], [0.75])])
            hits += isinstance(cf.refute(claim, a.family), cf.Refuted)
            right += {a.certificate.pair.a, a.certificate.pair.b} == {"[0.0]", "[1.0]"}
            values.append(a.certificate.mu_lower)
        print(
            f"| {claim.describe()} | {calls:.0e} | {hits}/{seeds} | {right}/{seeds} | "
            f"{np.mean(values):.4f} |"
        )
    print()


def part_validity(seeds: int) -> None:
    """How often the certified parameter exceeds the truth on the correct mechanism."""
    level = 1.0 - 0.05 * evaluation_share(1)
    print(f"## Validity: certified value above the truth, {seeds} seeds (allowed rate {1 - level:.4f})\n")
    print("| claim | truth | calls | above the truth | 95% upper bound on the rate | largest value |")
    print("|---|---|---|---|---|---|")
    cases = ((cf.GDPClaim(1.0), "mu_lower", 1.0), (cf.ZCDPClaim(0.5), "rho_lower", 0.5))
    for row, (claim, attr, truth) in enumerate(cases):
        for calls in (10**4, 10**5):
            values = [
                getattr(audit(1.0, calls, 5000 + 1000 * row + s, claim).certificate, attr)
                for s in range(seeds)
            ]
            above = sum(v > truth for v in values)
            upper = 1.0 if above == seeds else float(beta_dist.isf(0.05, above + 1, seeds - above))
            print(
                f"| {claim.describe()} | {truth:g} | {calls:.0e} | {above}/{seeds} | {upper:.4f} | "
                f"{max(values):.4f} |"
            )
    print()


def part_speed() -> None:
    """Whole-audit time of a GDP audit at 1e6 calls against a plain (epsilon) audit of the same calls."""
    print("## Speed: one audit at 1e6 calls (median of 3)\n")
    print("| audit | seconds | ratio to the epsilon audit |")
    print("|---|---|---|")
    times: dict[str, float] = {}
    cases = (("epsilon (no claim)", None), ("GDPClaim(1.0)", cf.GDPClaim(1.0)),
             ("ZCDPClaim(0.5)", cf.ZCDPClaim(0.5)))
    for row, (label, claim) in enumerate(cases):
        runs = []
        for seed in range(3):
            start = time.perf_counter()
            audit(1.0, 10**6, 9000 + 10 * row + seed, claim)
            runs.append(time.perf_counter() - start)
        times[label] = float(np.median(runs))
    base = times["epsilon (no claim)"]
    for label, t in times.items():
        print(f"| {label} | {t:.2f} | {t / base:.2f} |")
    print()


def main() -> None:
    """Parse arguments and run the parts."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parts = ("all", "ceiling", "power", "bug", "pairs", "validity", "speed")
    parser.add_argument("--part", choices=parts, default="all")
    parser.add_argument(
        "--seeds", type=int, help="seeds (default: 10 power, 20 bug and pairs, 200 validity)"
    )
    args = parser.parse_args()
    parts = parts[1:] if args.part == "all" else (args.part,)
    for part in parts:
        start = time.perf_counter()
        if part == "ceiling":
            part_ceiling()
        elif part == "power":
            part_power(args.seeds or 10)
        elif part == "bug":
            part_bug(args.seeds or 20)
        elif part == "pairs":
            part_pairs(args.seeds or 20)
        elif part == "validity":
            part_validity(args.seeds or 200)
        else:
            part_speed()
        print(f"({part}: {time.perf_counter() - start:.0f} s)\n", flush=True)


if __name__ == "__main__":
    main()
