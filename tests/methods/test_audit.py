"""audit_pairs, AuditTable and select_pairs: sharing, grouping by status, selection on development data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from typeguard import suppress_type_checks

import certify as cf
from certify.methods import AuditTable, audit_pairs, gauss_mech, kde_lr, mmd_tv, roc_oof, select_pairs


@pytest.fixture
def table() -> cf.EmbeddingTable:
    """Eight identities in 12 dimensions; identity i is shifted by 0.15 i along the first axis."""
    rng = np.random.default_rng(11)
    labels = np.repeat([f"p{i}" for i in range(8)], 30)
    x = rng.normal(size=(240, 12))
    x[:, 0] += np.repeat(np.arange(8) * 0.15, 30)
    return cf.EmbeddingTable.from_arrays(labels, x)


@pytest.mark.slow
def test_audit_pairs_equals_routes_one_pair_at_a_time(table: cf.EmbeddingTable) -> None:
    """Shared per-identity work gives the same values as calling each route per pair."""
    pairs = cf.sample_pairs(table.identities, 5, seed=0)
    audit = audit_pairs(table, pairs, ("gauss_mech", "kde_lr", "mmd_tv", "roc_oof"))
    assert len(audit) == 20
    for p in pairs:
        a, b = table.rows(p.a), table.rows(p.b)
        got = {r.method: r for r in audit.results if r.pair == p}
        assert got["gauss_mech"].score == pytest.approx(gauss_mech(a, b).score, rel=1e-12)  # type: ignore[union-attr]
        assert got["kde_lr"].score == pytest.approx(kde_lr(a, b).score, rel=1e-12)  # type: ignore[union-attr]
        assert got["mmd_tv"] == mmd_tv(a, b, pair=p)
        assert got["roc_oof"] == roc_oof(a, b, pair=p)


@pytest.mark.slow
def test_audit_pairs_does_not_depend_on_n_jobs(table: cf.EmbeddingTable) -> None:
    """Two worker processes give results equal to one."""
    pairs = cf.sample_pairs(table.identities, 4, seed=1)
    methods = ("mmd_tv", "roc_oof", "mmd_permutation")
    one = audit_pairs(table, pairs, methods, permutations=99, n_jobs=1)
    two = audit_pairs(table, pairs, methods, permutations=99, n_jobs=2)
    assert one.results == two.results


def test_audit_table_groups_by_status_and_summarizes(table: cf.EmbeddingTable) -> None:
    """by_status keeps statuses apart; summaries report medians, infinities and exact corners."""
    pairs = cf.sample_pairs(table.identities, 6, seed=2)
    audit = audit_pairs(table, pairs, ("gauss_mech", "mmd_tv", "roc_oof"))
    groups = audit.by_status()
    assert {r.status for r in groups["Diagnostic"]} == {"Diagnostic"}
    assert {r.method for r in groups["PopulationEstimate"]} == {"mmd_tv", "roc_oof"}
    rows = {s.method: (s, c) for s, c in audit.summaries()}
    roc_values = [r.epsilon_estimate for r in audit.of_method("roc_oof")]  # type: ignore[union-attr]
    assert rows["roc_oof"][0].n_infinite == sum(math.isinf(v) for v in roc_values)
    assert rows["roc_oof"][1] is not None
    assert rows["gauss_mech"][1] is None
    assert rows["gauss_mech"][0].median == pytest.approx(
        float(np.median([r.score for r in audit.of_method("gauss_mech")]))  # type: ignore[union-attr]
    )


def test_to_pandas_keeps_status_and_infinity(table: cf.EmbeddingTable) -> None:
    """The DataFrame has one row per result with its status, and +inf survives."""
    pairs = cf.sample_pairs(table.identities, 3, seed=0)
    audit = audit_pairs(table, pairs, ("gauss_mech", "roc_oof"))
    df = audit.to_pandas()
    assert len(df) == 6
    assert set(df["status"]) == {"Diagnostic", "PopulationEstimate"}
    roc = df[df["method"] == "roc_oof"]
    assert (roc["value"] == [r.epsilon_estimate for r in audit.of_method("roc_oof")]).all()  # type: ignore[union-attr]


def test_audit_pairs_rejects_bad_pair_lists(table: cf.EmbeddingTable) -> None:
    """Unknown identities, duplicate pairs, empty lists and unknown methods are refused."""
    with pytest.raises(cf.DataError, match="not in this table"):
        audit_pairs(table, [cf.Pair("p0", "nobody")])
    with pytest.raises(cf.DataError, match="twice"):
        audit_pairs(table, [cf.Pair("p0", "p1"), cf.Pair("p1", "p0")])
    with pytest.raises(cf.DataError, match="at least one pair"):
        audit_pairs(table, [])
    with suppress_type_checks(), pytest.raises(cf.ParameterError, match="methods must be among"):
        audit_pairs(table, [cf.Pair("p0", "p1")], ("bogus",))  # type: ignore[arg-type]


def test_select_pairs_takes_the_most_distinguishable_disjoint_pairs(table: cf.EmbeddingTable) -> None:
    """The farthest-apart identities are chosen first, and no identity is reused."""
    candidates = [cf.Pair(a, b) for a, b in (("p0", "p7"), ("p0", "p1"), ("p6", "p7"), ("p1", "p6"))]
    chosen = select_pairs(table, candidates, k=2, disjoint=True)
    assert chosen[0] == cf.Pair("p0", "p7")
    assert chosen[1] == cf.Pair("p1", "p6")
    used = [i for p in chosen for i in p.as_tuple()]
    assert len(used) == len(set(used))


def test_select_pairs_reports_too_few_disjoint_pairs(table: cf.EmbeddingTable) -> None:
    """Asking for more disjoint pairs than exist raises DataError."""
    with pytest.raises(cf.DataError, match="only 1 pairs"):
        select_pairs(table, [cf.Pair("p0", "p1"), cf.Pair("p1", "p2")], k=2)


def test_audit_table_repr_counts() -> None:
    """An AuditTable reports its pair and result counts."""
    assert "0 pairs, 0 results" in repr(AuditTable([], []))


def test_a_route_that_cannot_run_on_a_pair_is_reported_and_the_rest_goes_on(rng: np.random.Generator) -> None:
    """KDE-LR on an identity with a constant coordinate is skipped for its pairs, with the reason."""
    rows = rng.normal(size=(90, 4))
    rows[:30, 2] = 0.5  # identity "flat" never varies in coordinate 2
    labels = np.repeat(["flat", "b", "c"], 30)
    table = cf.EmbeddingTable.from_arrays(labels, rows, normalize=False)
    pairs = [cf.Pair("flat", "b"), cf.Pair("b", "c"), cf.Pair("flat", "c")]
    audit = audit_pairs(table, pairs, ("gauss_mech", "kde_lr", "mmd_tv"))
    assert [(p, m) for p, m, _ in audit.skipped] == [(pairs[0], "kde_lr"), (pairs[2], "kde_lr")]
    assert "'flat' is constant in 1 coordinate(s) (first: coordinate 2)" in audit.skipped[0][2]
    assert [r.pair for r in audit.of_method("kde_lr")] == [pairs[1]]
    assert len(audit.of_method("gauss_mech")) == len(audit.of_method("mmd_tv")) == 3
    assert audit.of_method("kde_lr")[0] == kde_lr(table.rows("b"), table.rows("c"), pair=pairs[1])
    assert audit.skipped_lines() == [
        f"kde_lr not run on 2 of 3 pairs (flat~b, flat~c): {audit.skipped[0][2]}"
    ]
