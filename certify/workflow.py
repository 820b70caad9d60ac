"""The auditor's two stages as functions: pre-register on development data, evaluate once."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from certify.data import EmbeddingTable, sample_pairs
from certify.methods.audit import select_pairs
from certify.protocol import FixedTest, Protocol, SealedProtocol
from certify.protocol.families import BoundPlan
from certify.protocol.files import AuditPlan
from certify.protocol.ledger import Ledger

__all__ = ["Preregistration", "candidate_rule", "plan_estimator", "preregister"]


@attrs.frozen
class Preregistration:
    """What the development stage chose and sealed.

    Attributes
    ----------
    sealed : SealedProtocol
        Ready to evaluate once.
    candidates : tuple of tuple of str
        The candidate pairs scored on development data.
    selected : tuple of tuple of str
        The pairs chosen, in order.
    """

    sealed: SealedProtocol
    candidates: tuple[tuple[str, str], ...]
    selected: tuple[tuple[str, str], ...]


def plan_estimator(plan: AuditPlan) -> object:
    """The classifier a plan names, unfitted."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=plan.C, solver="lbfgs", max_iter=plan.max_iter)


def preregister(
    plan: AuditPlan,
    table: EmbeddingTable,
    ledger: Ledger,
    *,
    progress: Callable[[str], None] | None = None,
) -> Preregistration:
    """Run the development stage of an audit plan and seal it.

    Parameters
    ----------
    plan : AuditPlan
        A validated protocol file.
    table : EmbeddingTable
        The whole table; it is split here with the plan's ``dev_fraction`` and ``split_seed``.
    ledger : Ledger
        Records the pre-registration; the same ledger must be used to evaluate.
    progress : callable, optional
        Receives short status lines.

    Returns
    -------
    Preregistration

    Notes
    -----
    Candidate pairs are the first ``plan.candidates`` of a seeded shuffle of all pairs (Sec. 5.1);
    the ``plan.select`` most distinguishable are chosen on development data (without reusing an
    identity when ``disjoint``), one test is fitted per selected pair on development rows, and the
    protocol is sealed. No reserved row is read. With ``threshold = "max_bound"`` each test's
    threshold maximizes what its certificate is expected to certify in the terms of the file's
    claim (``mu_lower`` for a GDP claim, and so on), at the reserved split's counts.
    """
    say = progress or (lambda line: None)
    split = table.split(plan.dev_fraction, plan.split_seed)
    dev = split.development
    candidates = sample_pairs(dev.identities, count=plan.candidates, seed=plan.pair_seed)
    rule = candidate_rule(plan.candidates, len(dev.identities))
    say(f"scoring {rule} on development data")
    chosen = select_pairs(
        dev, candidates, k=plan.select, disjoint=plan.disjoint, folds=plan.folds, seed=plan.cv_seed
    )
    protocol = Protocol(
        name=plan.name,
        confidence_level=plan.confidence_level,
        delta=plan.delta,
        family_size=plan.family_size,
        annotations={
            "plan": attrs.asdict(plan),
            "candidate_pairs": [list(p.as_tuple()) for p in candidates],
            "candidates": {"requested": plan.candidates, "scored": len(candidates), "rule": rule},
            "selected_pairs": [list(p.as_tuple()) for p in chosen],
        },
    )
    estimator = plan_estimator(plan)
    claim = plan.claim()
    size = plan.family_size or len(chosen)
    for i, pair in enumerate(chosen, start=1):
        say(f"fitting test {i}/{len(chosen)} for pair {pair}")
        bound_plan = (
            BoundPlan.for_pair(split.reserved, pair, size, plan.confidence_level, plan.delta)
            if plan.threshold == "max_bound" else None
        )
        protocol.register(
            FixedTest.fit(
                estimator,
                dev,
                pair,
                threshold=plan.threshold,
                folds=plan.folds,
                seed=plan.cv_seed,
                name=plan.classifier,
                plan=bound_plan,
                claim=claim if bound_plan is not None else None,
            )
        )
    sealed = protocol.seal(split.reserved, ledger)
    return Preregistration(
        sealed=sealed,
        candidates=tuple(p.as_tuple() for p in candidates),
        selected=tuple(p.as_tuple() for p in chosen),
    )


def candidate_rule(requested: int, identities: int) -> str:
    """The one rule for a number of candidate pairs, stated as records and reports print it.

    ``requested`` is at most the number of pairs scored: the first ``requested`` of the seeded
    shuffle, or all pairs when the identities form fewer (:func:`certify.sample_pairs`).

    Examples
    --------
    >>> candidate_rule(100, 10)
    'all 45 pairs of 10 identities (100 requested; candidates are at most the pairs there are)'
    >>> candidate_rule(20, 10)
    'the first 20 of 45 pairs of 10 identities (seeded shuffle)'
    """
    total = identities * (identities - 1) // 2
    if requested == total:
        return f"all {total} pairs of {identities} identities"
    if requested > total:
        return (
            f"all {total} pairs of {identities} identities ({requested} requested; candidates are at "
            "most the pairs there are)"
        )
    return f"the first {requested} of {total} pairs of {identities} identities (seeded shuffle)"
