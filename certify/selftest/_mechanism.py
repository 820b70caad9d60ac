"""Tight cases through the mechanism route: the level an audit states must be the level it has.

A black-box audit (:func:`certify.audit_mechanism`) seals its one test against a
:class:`~certify.data.stream.ReservedStream`; the ledger numbers the evaluation ``k`` and the
seal fixes the level ``1 - 0.05 * 6 / (pi^2 k^2)`` and each rate's one-sided level from it. Here
randomized response at epsilon 5, whose optimal event makes the certified bound tight, runs
through that very path (``Protocol.seal(stream, ledger)`` -> ``evaluate``) as evaluations 1
and 2 of one mechanism in a fresh ledger. The exact failure probability of a certificate is
then computed at the level the sealed path *issued*, and compared with the level the audit
states: a seal that spends more than its share (``rate_level(10 * alpha)``, say) shows as a
failure probability above nominal, and every issued certificate is also re-derived
independently (``1 - sqrt(1 - 0.05 * 6 / (pi^2 k^2))``, Clopper-Pearson, Eq. 16).
"""

from __future__ import annotations

import math
import tempfile
import uuid
from pathlib import Path
from typing import Any, Final, final

import numpy as np
from numpy.typing import NDArray

from certify.errors import CertifyError
from certify.selftest._tight import (
    CONFIDENCE_LEVEL,
    Injection,
    TightCase,
    TightCoverage,
    _exact_family_failure,
    _flip,
    check_injection,
)
from certify.stats.binomial import clopper_pearson_upper, epsilon_lower_from_error_bounds

__all__ = ["MECHANISM_CASE", "MECHANISM_EVALUATIONS", "expected_rate_level", "run_mechanism_cases"]

MECHANISM_CASE: Final = TightCase("randomized_response", 5.0, 1, 8400, 8400)
"""Randomized response at epsilon 5, one test per family (an audit's), 8400 reserved calls per input.

At evaluation 1 a correct certify fails with probability 0.0279 against the nominal 0.0304
(the size where the binomial lattice leaves the bound least conservative)."""
MECHANISM_EVALUATIONS: Final = (1, 2)
"""The evaluations of one mechanism run in a fresh ledger."""


def _share(k: int) -> float:
    """``0.05 * 6 / (pi^2 k^2)``: the error evaluation ``k`` may spend, computed here afresh."""
    return (1.0 - CONFIDENCE_LEVEL) * 6.0 / (math.pi**2 * k * k)


def expected_rate_level(k: int) -> float:
    """Each rate's one-sided level at evaluation ``k`` of a one-test audit: ``1 - sqrt(1 - share)``.

    Examples
    --------
    >>> round(expected_rate_level(1), 6), round(expected_rate_level(2), 6)
    (0.015315, 0.003807)
    """
    return 1.0 - math.sqrt(1.0 - _share(k))


def _injected_level(k: int, inject: Injection, issued: float) -> float:
    """The rate level a certificate is computed at, with the injected bug."""
    if inject == "mechanism_level":  # the seal spends ten times its share
        return 1.0 - math.sqrt(1.0 - 10.0 * _share(k))
    if inject == "no_evaluation_share":  # every evaluation spends the whole budget
        return 1.0 - math.sqrt(CONFIDENCE_LEVEL)
    if inject == "no_bonferroni":
        return 1.0 - CONFIDENCE_LEVEL
    return issued


@final
class _RandomizedResponse:
    """Randomized response as ``mechanism(x, n, rng)``: ``x[0]`` kept w.p. ``e^eps / (1 + e^eps)``."""

    def __init__(self, epsilon: float) -> None:
        self.flip = _flip(epsilon)

    def __call__(self, x: NDArray[Any], n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        flipped = rng.random(n) < self.flip
        out: NDArray[np.float64] = np.where(flipped, 1 - x[0], x[0]).astype(np.float64)
        return out


def _issued(case: TightCase, seed: np.random.SeedSequence) -> list[tuple[float | None, bool]]:
    """Evaluations 1, 2, ... through seal/evaluate: per evaluation, the issued rate level and a match flag.

    The flag is False when sealing or evaluating fails, or the certificate's level, rate level,
    evaluation number or bound differs from the independent derivation.
    """
    from certify._core import Pair
    from certify.data.draws import canonical_input, input_label
    from certify.data.stream import ReservedStream
    from certify.protocol import FixedTest, LinearScore, Protocol
    from certify.protocol.ledger import Ledger
    from certify.results import ErrorRateEvidence

    mechanism = _RandomizedResponse(case.epsilon)
    x0, x1 = canonical_input(0), canonical_input(1)
    a, b = input_label(x0), input_label(x1)
    out: list[tuple[float | None, bool]] = []
    # a fresh identity makes every run new data for the in-process guard (which remembers spent
    # streams for the whole process); no number depends on it
    identity = f"selftest:randomized_response#{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory(prefix="certify-selftest-") as folder:
        ledger = Ledger(Path(folder) / "mechanism.ledger")
        for k, child in zip(MECHANISM_EVALUATIONS, seed.spawn(len(MECHANISM_EVALUATIONS)), strict=True):
            run_seed = int(child.generate_state(1, dtype=np.uint32)[0])
            development = f"selftest-mechanism-{k}-{run_seed}"
            try:
                stream = ReservedStream.create(
                    mechanism, {a: x0, b: x1}, {a: case.n_class0, b: case.n_class1},
                    identity=identity, name="randomized_response",
                    seed=run_seed, calls=case.n_class0 + case.n_class1, width=1,
                    development_fingerprint=development,
                )
                test = FixedTest(
                    pair=Pair(a, b), model=LinearScore((1.0,), 0.0), threshold=case.threshold,
                    orientation=1, development_fingerprint=development, name="optimal_event",
                    development_auc=0.5,
                )
                protocol = Protocol(f"selftest-mechanism-{k}", confidence_level=CONFIDENCE_LEVEL)
                protocol.register(test)
                sealed = protocol.seal(stream, ledger)
                family = sealed.evaluate()
            except CertifyError:
                out.append((None, False))
                continue
            cert = family.certificates[0]
            alpha = expected_rate_level(k)
            evidence = cert.evidence
            matches = (
                isinstance(evidence, ErrorRateEvidence)
                and sealed.record.content["protocol"].get("evaluation") == k
                and math.isclose(family.confidence_level, 1.0 - _share(k), rel_tol=1e-12)
                and math.isclose(cert.alpha_per_rate, alpha, rel_tol=1e-12)
                and math.isclose(
                    cert.epsilon_lower,
                    epsilon_lower_from_error_bounds(
                        clopper_pearson_upper(evidence.false_positives, case.n_class0, alpha),
                        clopper_pearson_upper(evidence.false_negatives, case.n_class1, alpha),
                        0.0,
                    ),
                    rel_tol=1e-12, abs_tol=1e-15,
                )
            )
            out.append((float(cert.alpha_per_rate), bool(matches)))
    return out


def run_mechanism_cases(
    inject: Injection = "none", *, case: TightCase = MECHANISM_CASE, seed: int = 0
) -> tuple[TightCoverage, ...]:
    """Exact failure probability of evaluations 1 and 2 of a mechanism audit at the levels issued.

    Parameters
    ----------
    inject : str, default "none"
        A known bug (:data:`certify.selftest.INJECTIONS`): ``"mechanism_level"`` bounds each
        rate at ``1 - sqrt(1 - 10 share)`` (a seal spending ten times its share),
        ``"no_evaluation_share"`` at the whole budget of a claim for every evaluation (reruns
        pay nothing), ``"no_bonferroni"`` at 0.05; ``"normal_approximation"`` and
        ``"reused_rows"`` as for the table cases.
    case : TightCase, default MECHANISM_CASE
        A case with one pair (an audit certifies one pair).
    seed : int, default 0
        Seed of the sealed-path calls.

    Returns
    -------
    tuple of TightCoverage
        One per evaluation ``k`` (``evaluation = k``), with ``nominal = 0.05 * 6 / (pi^2 k^2)``,
        the error the audit states for it; flagged when the exact failure probability at the
        issued level (with the bug) exceeds it; inconsistent also when the sealed path failed
        or issued a certificate that differs from the independent derivation.

    Examples
    --------
    >>> [(round(c.rate, 4), round(c.nominal, 4)) for c in run_mechanism_cases()]
    [(0.0279, 0.0304), (0.0052, 0.0076)]
    >>> [c.flagged for c in run_mechanism_cases("mechanism_level")]
    [True, True]
    """
    injection = check_injection(inject)
    issued = _issued(case, np.random.SeedSequence(seed, spawn_key=(7,)))
    out = []
    for k, (alpha, matches) in zip(MECHANISM_EVALUATIONS, issued, strict=True):
        level = _injected_level(k, injection, expected_rate_level(k) if alpha is None else alpha)
        rate = _exact_family_failure(case, injection, level)
        out.append(
            TightCoverage(case, injection, "exact", rate, 0, 0, rate, _share(k), 1, int(not matches), k)
        )
    return tuple(out)
