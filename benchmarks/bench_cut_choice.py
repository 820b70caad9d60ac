"""A mechanism audit's threshold choice on one score: halves, pooled, and pooled with peeled levels.

A mechanism audit chooses each score's threshold on development calls with
:func:`certify.protocol.criterion.robust_cut`: the pessimistic bound (development rates at their
one-sided 5% Clopper-Pearson upper bounds) must hold on both halves of the calls. This study
asks what the other rules would certify, on laws whose every threshold has an exact value.
Each repetition draws ``n`` development calls per input; each rule chooses an orientation and a
threshold on them, and the choice is valued exactly: the bound the reserved test certifies, at
``--reserve-ratio`` (default 5) reserved calls per development call, when each reserved error
count is its expectation (one-sided
Clopper-Pearson upper bounds at ``alpha_per_rate``, Eq. 16, floored at 0). The same draws serve
every rule.

Rules:

``halves``
    :func:`~certify.protocol.criterion.robust_cut` at level 0.05 (the audit's rule).
``pooled``
    :func:`~certify.protocol.criterion.pessimistic_bound` at 0.05 on all development calls,
    largest over cuts (4,000 cuts at pooled quantiles, both orientations).
``peeled K``
    the same with a level that falls with the event's count: a cut whose event side holds
    ``k`` calls per input (its pooled count over the two inputs, halved) is judged at
    ``0.05 / (1 + j) ** 2``, ``j = ceil(log2(K / k))`` for ``k < K``: a union over dyadic shells
    of counts, so a tail event counted a few dozen times needs a far stricter level to win,
    while events counted ``K`` times or more keep 0.05.

Laws (the two inputs differ by a shift of 1):

``noisy-max``
    the largest of 5 coordinates, each plus Laplace noise of scale 20 (ReportNoisyMax3's pair
    of all ones against all zeros, as DP-Sniper defines it): the best event is ``max <= t`` near
    ``t = 1``, 3 to 4% of the calls.
``laplace``
    Laplace noise of scale 10 (LaplaceMechanism): every cut beyond both locations (below 0 or
    above 1) has the ratio ``e^0.1``; the best is counted most, near the median.
``gaussian``
    Gaussian noise of scale 1 (1-GDP): the ratio grows without bound in the tail; the best
    event is a tail (about 60 and 90 development calls per input on its side at 20,000 and
    61,666 calls).

Usage: ``python benchmarks/bench_cut_choice.py [--reps R] [--dev N ...] [--reserve-ratio X]
[--quick]``; prints, per
law and development size, each rule's mean, lowest and 10% quantile of the exact values over
the repetitions, with the best threshold's value.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from scipy.stats import beta, laplace, norm
from threadpoolctl import threadpool_limits

from certify.plan import rate_level
from certify.protocol.criterion import pessimistic_bound, robust_cut

ALPHA_PER_RATE = rate_level(0.05 * 6.0 / math.pi**2)
"""Level of each reserved rate's bound in a 95% audit that is its ledger's first evaluation
(test alpha ``0.05 * 6 / pi^2 = 0.0304``)."""

DEV_LEVEL = 0.05
"""Level of the pessimistic development rates, as :data:`certify.blackbox.events.DEV_LEVEL`."""

CUTS = 4_000
"""Cuts a pooled rule searches, at quantiles of the pooled development calls."""

Array = NDArray[np.float64]


class Law:
    """Outputs of one input: ``shift`` plus noise, the largest of ``width`` coordinates."""

    def __init__(self, name: str, noise: str, scale: float, width: int) -> None:
        self.name, self.noise, self.scale, self.width = name, noise, scale, width

    def draw(self, rng: np.random.Generator, shift: float, n: int) -> Array:
        size = (n, self.width)
        if self.noise == "laplace":
            noise = rng.laplace(scale=self.scale, size=size)
        else:
            noise = rng.normal(scale=self.scale, size=size)
        out: Array = (shift + noise).max(axis=1)
        return out

    def cdf(self, t: float, shift: float) -> float:
        law = laplace if self.noise == "laplace" else norm
        return float(law.cdf(t - shift, scale=self.scale)) ** self.width


LAWS = (
    Law("noisy-max", "laplace", 20.0, 5),
    Law("laplace", "laplace", 10.0, 1),
    Law("gaussian", "normal", 1.0, 1),
)


def exact_value(law: Law, orientation: int, threshold: float, reserve: int) -> float:
    """The bound a choice certifies at ``reserve`` calls per input when each count is its mean.

    Input ``a`` is shifted by 1 and input ``b`` by 0; the event is ``orientation * x >=
    orientation * threshold``, counted as an error under ``a`` and a hit under ``b``.
    """
    if orientation == 1:
        fp, fn = 1.0 - law.cdf(threshold, 1.0), law.cdf(threshold, 0.0)
    else:
        fp, fn = law.cdf(threshold, 1.0), 1.0 - law.cdf(threshold, 0.0)

    def upper(rate: float) -> float:
        k = rate * reserve
        return float(beta.ppf(1.0 - ALPHA_PER_RATE, k + 1.0, reserve - k))

    u0, u1 = upper(fp), upper(fn)
    ratios = ((1.0 - u1) / u0, (1.0 - u0) / u1)
    return max(math.log(r) if r > 0.0 else 0.0 for r in (*ratios, 1.0))


Level = Callable[[Array, int], Array]
"""``level(counts, n)``: the development level of each cut, from its event side's calls per input."""


def pooled_choice(a: Array, b: Array, reserve: int, level: Level) -> tuple[int, float]:
    """Orientation and threshold of the largest pessimistic bound on all calls, at per-cut levels."""
    n = a.size
    a, b = np.sort(a), np.sort(b)
    unique = np.unique(np.concatenate([a, b]))
    cuts = unique[np.unique(np.linspace(0, unique.size - 1, CUTS).astype(np.int64))]
    best = (-1.0, 1, float(cuts[0]))
    for orientation in (1, -1):
        if orientation == 1:  # event: score >= cut
            e0 = n - np.searchsorted(a, cuts, side="left")
            e1 = np.searchsorted(b, cuts, side="left")
        else:  # event: score <= cut
            e0 = np.searchsorted(a, cuts, side="right")
            e1 = n - np.searchsorted(b, cuts, side="right")
        # calls per input on the event's smaller side
        count = np.minimum(e0 + (n - e1), (n - e0) + e1) / 2.0
        levels = level(count, n)
        values = np.zeros(cuts.size)
        for value in np.unique(levels):
            at = levels == value
            values[at] = pessimistic_bound(
                e0[at].astype(np.float64), n, e1[at].astype(np.float64), n, reserve, reserve,
                ALPHA_PER_RATE, 0.0, float(value),
            )
        i = int(np.argmax(values))
        if values[i] > best[0]:
            best = (float(values[i]), orientation, float(cuts[i]))
    return best[1], best[2]


def peeled(full: float) -> Level:
    """Levels ``DEV_LEVEL / (1 + j) ** 2`` by dyadic shell ``j`` of counts below ``full``."""

    def level(count: Array, n: int) -> Array:
        shell = np.ceil(np.log2(np.maximum(full / np.maximum(count, 1.0), 1.0)))
        out: Array = DEV_LEVEL / (1.0 + shell) ** 2
        return out

    return level


def rules(reserve: int) -> dict[str, Callable[[Array, Array], tuple[int, float]]]:
    def halves(a: Array, b: Array) -> tuple[int, float]:
        o, t, _, _ = robust_cut([(a[::2], b[::2]), (a[1::2], b[1::2])], reserve, reserve, ALPHA_PER_RATE,
                                dev_level=DEV_LEVEL)
        return o, t

    def constant(count: Array, n: int) -> Array:
        return np.full(count.size, DEV_LEVEL)

    return {
        "halves": halves,
        "pooled": lambda a, b: pooled_choice(a, b, reserve, constant),
        "peeled 256": lambda a, b: pooled_choice(a, b, reserve, peeled(256.0)),
        "peeled 1024": lambda a, b: pooled_choice(a, b, reserve, peeled(1024.0)),
    }


def study(law: Law, n_dev: int, reserve: int, reps: int) -> None:
    chosen = rules(reserve)
    values: dict[str, list[float]] = {name: [] for name in chosen}
    for r in range(reps):
        rng = np.random.default_rng(1000 + r)
        a, b = law.draw(rng, 1.0, n_dev), law.draw(rng, 0.0, n_dev)
        for name, rule in chosen.items():
            values[name].append(exact_value(law, *rule(a, b), reserve))
    span = 8.0 * law.scale
    best = max(exact_value(law, o, t, reserve) for o in (1, -1) for t in np.linspace(-span, span, 1601))
    print(f"{law.name}, {n_dev} development and {reserve} reserved calls per input, {reps} draws;"
          f" best threshold {best:.4f}")
    for name, v in values.items():
        x = np.array(v)
        print(f"  {name:12s} mean {x.mean():.4f}  lowest {x.min():.4f}  10% {np.quantile(x, 0.1):.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=40)
    parser.add_argument("--dev", type=int, nargs="+", default=[20_000, 61_666])
    parser.add_argument("--reserve-ratio", type=float, default=5.0,
                        help="reserved calls per development call (default 5)")
    parser.add_argument("--quick", action="store_true", help="8 draws, 20,000 development calls")
    args = parser.parse_args()
    reps, sizes = (8, [20_000]) if args.quick else (args.reps, args.dev)
    with threadpool_limits(1):
        for law in LAWS:
            for n_dev in sizes:
                study(law, n_dev, int(args.reserve_ratio * n_dev), reps)


if __name__ == "__main__":
    main()
