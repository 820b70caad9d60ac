"""Many pairs at once: shared per-identity work, results grouped by status, and pair selection."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypeAlias, final

import numpy as np
from numpy.typing import NDArray

from certify._core import Pair, check_delta, check_int
from certify.data import EmbeddingTable
from certify.errors import DataError, ParameterError
from certify.methods import routes
from certify.results import (
    Certificate,
    Diagnostic,
    PopulationEstimate,
    Result,
    StatusName,
    Summary,
    summarize,
)
from certify.stats import gaussmech as _gm
from certify.stats import kde as _kde

__all__ = ["AuditTable", "MethodName", "audit_pairs", "select_pairs"]

MethodName: TypeAlias = Literal["gauss_mech", "kde_lr", "mmd_tv", "roc_oof", "mmd_permutation"]
ALL_METHODS: Final[tuple[MethodName, ...]] = (
    "gauss_mech",
    "kde_lr",
    "mmd_tv",
    "roc_oof",
    "mmd_permutation",
)
_STATUS_ORDER: Final[tuple[StatusName, ...]] = ("Diagnostic", "PopulationEstimate", "Certificate")


def _value(result: Result) -> float:
    """The number a result carries (its status's own field)."""
    match result:
        case Diagnostic():
            return result.score
        case PopulationEstimate():
            return result.epsilon_estimate
        case Certificate():
            return result.epsilon_lower


@final
class AuditTable:
    """Results of several routes on several pairs, kept apart by status.

    Attributes
    ----------
    results : tuple of Result
        Every result, in pair order then method order.
    pairs : tuple of Pair
        The pairs audited.
    timings : Mapping[str, float]
        Seconds spent per method.
    skipped : tuple of (Pair, str, str)
        ``(pair, method, reason)`` for every method that could not run on a pair (e.g. KDE-LR
        on an identity with a constant coordinate); the other pairs and methods still ran.
    """

    __slots__ = ("pairs", "results", "skipped", "timings")

    def __init__(
        self,
        results: Sequence[Result],
        pairs: Sequence[Pair],
        timings: dict[str, float] | None = None,
        skipped: Sequence[tuple[Pair, str, str]] = (),
    ) -> None:
        self.results: tuple[Result, ...] = tuple(results)
        self.pairs: tuple[Pair, ...] = tuple(pairs)
        self.timings: dict[str, float] = dict(timings or {})
        self.skipped: tuple[tuple[Pair, str, str], ...] = tuple(skipped)

    def skipped_lines(self) -> list[str]:
        """One line per method and reason: the pairs it could not run on, and why."""
        grouped: dict[tuple[str, str], list[Pair]] = {}
        for pair, method, reason in self.skipped:
            grouped.setdefault((method, reason), []).append(pair)
        lines = []
        for (method, reason), pairs in grouped.items():
            names = ", ".join(str(p) for p in pairs[:5]) + (", ..." if len(pairs) > 5 else "")
            lines.append(f"{method} not run on {len(pairs)} of {len(self.pairs)} pairs ({names}): {reason}")
        return lines

    def by_status(self) -> dict[StatusName, tuple[Result, ...]]:
        """Results grouped by status (only statuses present)."""
        out: dict[StatusName, tuple[Result, ...]] = {}
        for status in _STATUS_ORDER:
            group = tuple(r for r in self.results if r.status == status)
            if group:
                out[status] = group
        return out

    def methods(self) -> tuple[str, ...]:
        """Methods present, in first-seen order."""
        return tuple(dict.fromkeys(r.method for r in self.results))

    def of_method(self, method: str) -> tuple[Result, ...]:
        """Results of one method."""
        return tuple(r for r in self.results if r.method == method)

    def summaries(self) -> list[tuple[Summary, int | None]]:
        """Per method: median and counts, plus the exact-corner count for ROC routes (else None)."""
        out: list[tuple[Summary, int | None]] = []
        for status in _STATUS_ORDER:
            for method in self.methods():
                group = [r for r in self.of_method(method) if r.status == status]
                if not group:
                    continue
                corners: int | None = None
                if method == "roc_oof":
                    corners = sum(
                        1 for r in group if isinstance(r, PopulationEstimate) and r.exact_corner is True
                    )
                out.append((summarize(group), corners))
        return out

    def to_pandas(self) -> Any:
        """One row per (pair, method): status, value name, value (inf kept), details.

        Returns
        -------
        pandas.DataFrame
            Requires pandas (``pip install pandas``).
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("AuditTable.to_pandas needs pandas: pip install pandas") from exc
        rows: list[dict[str, Any]] = []
        for r in self.results:
            row: dict[str, Any] = {
                "pair_a": r.pair.a if r.pair else None,
                "pair_b": r.pair.b if r.pair else None,
                "method": r.method,
                "status": r.status,
                "value_name": {"Diagnostic": "score", "PopulationEstimate": "epsilon_estimate"}.get(
                    r.status, "epsilon_lower"
                ),
                "value": _value(r),
            }
            if not isinstance(r, Certificate):
                row.update(dict(r.details))
            rows.append(row)
        return pd.DataFrame(rows)

    def __len__(self) -> int:
        return len(self.results)

    def __repr__(self) -> str:
        return f"AuditTable({len(self.pairs)} pairs, {len(self.results)} results)"


def _check_pairs(table: EmbeddingTable, pairs: Sequence[Pair]) -> list[Pair]:
    """Validate pairs against a table: Pair objects, known identities, no duplicates."""
    out: list[Pair] = []
    seen: set[frozenset[str]] = set()
    for p in pairs:
        if not isinstance(p, Pair):
            raise ParameterError(f"pairs must contain Pair objects; got {p!r}.")
        for ident in p.as_tuple():
            table.rows(ident)
        key = frozenset(p.as_tuple())
        if key in seen:
            raise DataError(f"pair {p} appears twice in the pair list; each pair once.")
        seen.add(key)
        out.append(p)
    if not out:
        raise DataError("pairs must name at least one pair.")
    return out


def _pair_routes(
    x_a: NDArray[np.float64],
    x_b: NDArray[np.float64],
    pair: Pair,
    methods: tuple[str, ...],
    roc_folds: int,
    roc_delta: float,
    permutations: int,
    seed: int,
) -> tuple[list[Result | tuple[str, str]], dict[str, float]]:
    """The per-pair routes (MMD-TV, ROC out of fold, permutation test) for one pair, timed.

    A route the pair's data cannot support (a :class:`DataError`) is returned as its reason.
    """
    out: list[Result | tuple[str, str]] = []
    spent: dict[str, float] = {}
    for m in methods:
        t0 = time.perf_counter()
        try:
            if m == "mmd_tv":
                out.append(routes.mmd_tv(x_a, x_b, pair=pair))
            elif m == "roc_oof":
                out.append(routes.roc_oof(x_a, x_b, folds=roc_folds, delta=roc_delta, seed=seed, pair=pair))
            elif m == "mmd_permutation":
                out.append(routes.mmd_permutation_test(x_a, x_b, permutations, seed, pair=pair))
        except DataError as exc:
            out.append((m, str(exc)))
        spent[m] = time.perf_counter() - t0
    return out, spent


def _kde_bandwidth(rows: NDArray[np.float64], ident: str) -> NDArray[np.float64] | str:
    """An identity's KDE bandwidths, or why KDE-LR cannot score it (a constant coordinate)."""
    constant = np.flatnonzero(rows.min(axis=0) == rows.max(axis=0))
    if constant.size > 0:
        return (
            f"identity {ident!r} is constant in {constant.size} coordinate(s) (first: coordinate "
            f"{int(constant[0])}), where KDE-LR has no bandwidth; drop constant columns to run it"
        )
    try:
        return _kde.silverman_bandwidth(rows)
    except DataError as exc:
        return f"identity {ident!r}: {exc}"


def audit_pairs(
    table: EmbeddingTable,
    pairs: Sequence[Pair],
    methods: Sequence[MethodName] = ("gauss_mech", "kde_lr", "mmd_tv", "roc_oof"),
    *,
    gauss_delta: float = 1e-5,
    kde_alpha: float = 0.01,
    roc_delta: float = 0.0,
    roc_folds: int = 5,
    permutations: int = 10_000,
    seed: int = 0,
    n_jobs: int = 1,
    progress: bool | Callable[[int, int], None] = False,
) -> AuditTable:
    """Run several audit routes on many pairs, sharing per-identity work.

    Parameters
    ----------
    table : EmbeddingTable
        The rows to audit (development data when pairs are to be certified later).
    pairs : sequence of Pair
        Distinct pairs of identities in ``table``.
    methods : sequence of str
        Any of ``"gauss_mech"``, ``"kde_lr"``, ``"mmd_tv"``, ``"roc_oof"``, ``"mmd_permutation"``.
    gauss_delta, kde_alpha, roc_delta, roc_folds, permutations, seed
        Route parameters (App. D defaults). ``seed`` seeds the folds and permutations of every
        pair alike.
    n_jobs : int, default 1
        Worker processes for the per-pair routes (MMD-TV, ROC, permutation tests); KDE-LR runs
        compiled on all cores regardless. Results do not depend on ``n_jobs``.
    progress : bool or callable, default False
        True prints progress to stderr; a callable receives ``(done, total)``.

    Returns
    -------
    AuditTable

    Raises
    ------
    DataError
        On unknown identities, duplicate pairs or an empty list.
    ParameterError
        On an unknown method or out-of-range parameter.

    Notes
    -----
    GaussMech means and residual scales and KDE bandwidths and sorted coordinates are computed
    once per identity and reused for every pair that contains it; KDE-LR scores all pairs in one
    compiled batch. Each result keeps its own status.

    A route that a pair's data cannot support (KDE-LR on an identity with a constant
    coordinate, or a :class:`DataError` of a per-pair route) is not run on that pair; the pair,
    the method and the reason are kept in :attr:`AuditTable.skipped`, and the other pairs and
    methods still run.

    Examples
    --------
    >>> import numpy as np, certify as cf
    >>> rng = np.random.default_rng(0)
    >>> t = cf.EmbeddingTable.from_arrays(np.repeat(["a", "b", "c"], 20), rng.normal(size=(60, 4)))
    >>> audit = audit_pairs(t, cf.sample_pairs(t.identities, 3, seed=0), ("gauss_mech", "mmd_tv"))
    >>> sorted(audit.by_status())
    ['Diagnostic', 'PopulationEstimate']
    """
    checked = _check_pairs(table, pairs)
    skipped: list[tuple[Pair, str, str]] = []
    chosen = list(dict.fromkeys(methods))
    for m in chosen:
        if m not in ALL_METHODS:
            raise ParameterError(f"methods must be among {ALL_METHODS}; got {m!r}.")
    gd = check_delta(gauss_delta, "gauss_delta")
    if "gauss_mech" in chosen and gd == 0.0:
        raise ParameterError("gauss_delta must be in (0, 1); got 0.0.")
    rd = check_delta(roc_delta, "roc_delta")
    check_int(roc_folds, "roc_folds", 2)
    check_int(permutations, "permutations", 1)
    n_jobs = check_int(n_jobs, "n_jobs", 1)
    idents = sorted({i for p in checked for i in p.as_tuple()})
    index = {name: k for k, name in enumerate(idents)}
    timings: dict[str, float] = dict.fromkeys(chosen, 0.0)
    by_method: dict[str, list[Result]] = {m: [] for m in chosen}
    report = _progress_reporter(progress)
    sizes = {p: (table.counts[p.a], table.counts[p.b]) for p in checked}

    if "gauss_mech" in chosen:
        t0 = time.perf_counter()
        moments = {i: _gm.identity_moments(table.rows(i)) for i in idents}
        for p in checked:
            (mu_a, s_a), (mu_b, s_b) = moments[p.a], moments[p.b]
            by_method["gauss_mech"].append(
                Diagnostic(
                    method="gauss_mech",
                    score=_gm.gauss_mech_from_moments(mu_a, s_a, mu_b, s_b, gd),
                    pair=p,
                    delta=gd,
                    assumptions=routes.ASSUMPTIONS["gauss_mech"],
                    equation="Eq. 9",
                    n_samples=sizes[p],
                    parameters={"delta": gd, "dimension": table.dimension},
                )
            )
        timings["gauss_mech"] = time.perf_counter() - t0
    if "kde_lr" in chosen:
        t0 = time.perf_counter()
        rows = [table.rows(i) for i in idents]
        bws = [_kde_bandwidth(r, i) for i, r in zip(idents, rows, strict=True)]
        cannot = {i: h for i, h in zip(idents, bws, strict=True) if isinstance(h, str)}
        scorable = [p for p in checked if p.a not in cannot and p.b not in cannot]
        skipped += [(p, "kde_lr", cannot.get(p.a) or cannot[p.b]) for p in checked if p not in scorable]
        scores = _kde.kde_lr_pairs(
            rows,
            [(index[p.a], index[p.b]) for p in scorable],
            alpha=kde_alpha,
            # an identity that cannot be scored is in no scored pair; its entry is never read
            bandwidths=[np.ones(table.dimension) if isinstance(h, str) else h for h in bws],
        )
        for p, score in zip(scorable, scores.tolist(), strict=True):
            by_method["kde_lr"].append(
                Diagnostic(
                    method="kde_lr",
                    score=score,
                    pair=p,
                    assumptions=routes.ASSUMPTIONS["kde_lr"],
                    equation="Eq. 10-11",
                    n_samples=sizes[p],
                    parameters={"alpha": float(kde_alpha), "grid_points": 201, "floor": 1e-12},
                )
            )
        timings["kde_lr"] = time.perf_counter() - t0
    per_pair = tuple(m for m in chosen if m in ("mmd_tv", "roc_oof", "mmd_permutation"))
    if per_pair:
        jobs = (
            (table.rows(p.a), table.rows(p.b), p, per_pair, roc_folds, rd, permutations, seed)
            for p in checked
        )
        if n_jobs == 1:
            outputs: Any = (_pair_routes(*job) for job in jobs)
        else:
            from joblib import Parallel, delayed

            outputs = Parallel(n_jobs=n_jobs, return_as="generator")(
                delayed(_pair_routes)(*job) for job in jobs
            )
        for done, (pair, (results, spent)) in enumerate(zip(checked, outputs, strict=True), start=1):
            for r in results:
                if isinstance(r, tuple):
                    skipped.append((pair, *r))
                else:
                    by_method[r.method].append(r)
            for m, secs in spent.items():
                timings[m] += secs
            report(done, len(checked))
    else:
        report(len(checked), len(checked))
    found = {(r.pair, r.method): r for m in chosen for r in by_method[m]}
    ordered = [found[p, m] for p in checked for m in chosen if (p, m) in found]
    return AuditTable(ordered, checked, timings, skipped)


def _progress_reporter(progress: bool | Callable[[int, int], None]) -> Callable[[int, int], None]:
    """A progress callback: user-supplied, a stderr printer, or a no-op."""
    if callable(progress):
        return progress
    if progress is not True:
        return lambda done, total: None
    start = time.perf_counter()

    def show(done: int, total: int) -> None:
        elapsed = time.perf_counter() - start
        eta = elapsed / done * (total - done)
        sys.stderr.write(f"\r  pairs {done}/{total}  elapsed {elapsed:5.1f}s  eta {eta:5.1f}s")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def select_pairs(
    development: EmbeddingTable,
    pairs: Sequence[Pair],
    k: int,
    *,
    disjoint: bool = True,
    folds: int = 5,
    seed: int = 0,
) -> list[Pair]:
    """Choose the ``k`` most distinguishable pairs on development data.

    Parameters
    ----------
    development : EmbeddingTable
        Development rows only (``split.development``); never the reserved split.
    pairs : sequence of Pair
        Candidate pairs (e.g. the first 100 of :func:`certify.sample_pairs`).
    k : int
        How many to select.
    disjoint : bool, default True
        Do not reuse an identity across selected pairs (paper Sec. 5.3).
    folds, seed : int
        Cross-validation settings of the out-of-fold scoring.

    Returns
    -------
    list of Pair
        In decreasing order of distinguishability.

    Raises
    ------
    DataError
        If fewer than ``k`` pairs can be selected under the constraints.

    Notes
    -----
    Pairs are ranked by out-of-fold AUC of the default logistic regression (decision-function
    scores, so no saturation ties), ties broken by the GaussMech score. Both are computed on
    development data, so the selection leaves the reserved split untouched.
    """
    k = check_int(k, "k", 1)
    checked = _check_pairs(development, pairs)
    ranked: list[tuple[float, float, int, Pair]] = []
    for idx, p in enumerate(checked):
        x_a, x_b = development.rows(p.a), development.rows(p.b)
        est = routes.roc_oof(x_a, x_b, folds=folds, seed=seed, response="decision_function", pair=p)
        gm = _gm.gauss_mech_score(x_a, x_b, delta=1e-5)
        ranked.append((-(est.auc or 0.0), -gm, idx, p))
    ranked.sort()
    chosen: list[Pair] = []
    used: set[str] = set()
    for *_, p in ranked:
        if disjoint and (p.a in used or p.b in used):
            continue
        chosen.append(p)
        used.update(p.as_tuple())
        if len(chosen) == k:
            return chosen
    raise DataError(
        f"only {len(chosen)} pairs could be selected of k={k}"
        f"{' without reusing an identity' if disjoint else ''}; offer more candidate pairs."
    )
