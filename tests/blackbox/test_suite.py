"""Tests of the mechanism suite: registry, call contract, exact output laws and privacy-loss claims.

Statistical checks draw 200,000 calls from a generator seeded by the test's node id (``rng``
fixture) and compare binned frequencies with exact probabilities by a chi-square test, failing when
the p-value is below 1e-4. With a fixed seed each check is deterministic; for a correct mechanism
the chance that the seed lands in the rejection region is 1e-4. A wrong noise scale, law, threshold
or cutoff moves some bin probability by far more than the sampling error (a bin frequency's
standard error is at most 0.0012 at this size), so such an error fails the test.
"""

from __future__ import annotations

import itertools
import math
import pickle
import types
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

import attrs
import numpy as np
import pytest
from scipy import stats

from certify.blackbox import _suite_laws as laws
from certify.blackbox import suite
from certify.blackbox.suite import SUITE, SuiteMechanism
from certify.errors import ParameterError

N_CALLS = 200_000
MIN_P_VALUE = 1e-4

NAMES = (
    "LaplaceMechanism",
    "TruncatedGeometricMechanism",
    "NoisyHist1",
    "NoisyHist2",
    "ReportNoisyMax1",
    "ReportNoisyMax2",
    "ReportNoisyMax3",
    "ReportNoisyMax4",
    "SparseVectorTechnique1",
    "SparseVectorTechnique2",
    "SparseVectorTechnique3",
    "SparseVectorTechnique4",
    "SparseVectorTechnique5",
    "SparseVectorTechnique6",
    "Rappor",
    "OneTimeRappor",
    "LaplaceParallel",
    "SVT34Parallel",
    "PrefixSum",
    "NumericalSVT",
)
ONE_ENTRY = ("LaplaceMechanism", "TruncatedGeometricMechanism", "NoisyHist1", "NoisyHist2", "LaplaceParallel")
LOCAL = ("Rappor", "OneTimeRappor")


# ---------------------------------------------------------------------------------------------
# helpers


def chi_square_p_value(
    observed: Sequence[int] | np.ndarray, probabilities: Sequence[float] | np.ndarray
) -> float:
    """Chi-square goodness-of-fit p-value; cells expecting fewer than 5 counts are pooled."""
    obs = np.asarray(observed, dtype=np.float64)
    probs = np.asarray(probabilities, dtype=np.float64)
    assert abs(probs.sum() - 1.0) < 1e-7, probs.sum()
    expected = probs / probs.sum() * obs.sum()
    small = expected < 5.0
    if small.any():
        pooled_obs, pooled_exp = obs[small].sum(), expected[small].sum()
        obs, expected = obs[~small], expected[~small]
        if pooled_exp >= 5.0:
            obs, expected = np.append(obs, pooled_obs), np.append(expected, pooled_exp)
        else:
            obs[np.argmin(expected)] += pooled_obs
            expected[np.argmin(expected)] += pooled_exp
    return float(stats.chisquare(obs, expected).pvalue)


def laplace_bin_test(samples: np.ndarray, loc: float, scale: float, bins: int = 40) -> float:
    """p-value of Laplace(loc, scale) for ``samples`` on equal-probability bins."""
    p = np.linspace(0.0, 1.0, bins + 1)[1:-1]
    inner = loc - scale * np.sign(p - 0.5) * np.log1p(-2.0 * np.abs(p - 0.5))
    counts = np.bincount(np.searchsorted(inner, samples.ravel()), minlength=bins)
    cdf = np.concatenate(([0.0], laws.laplace_cdf(inner - loc, scale), [1.0]))
    return chi_square_p_value(counts, np.diff(cdf))


def pattern_counts(rows: np.ndarray) -> Counter[tuple[int, ...]]:
    """Counts of each output row, as tuples of ints."""
    keys, counts = np.unique(rows.astype(np.int64), axis=0, return_counts=True)
    return Counter({tuple(int(v) for v in k): int(c) for k, c in zip(keys, counts, strict=True)})


def pattern_test(rows: np.ndarray, probabilities: dict[tuple[int, ...], float]) -> float:
    """p-value of the exact pattern law; any row outside the law's support fails immediately."""
    counts = pattern_counts(rows)
    unknown = set(counts) - set(probabilities)
    assert not unknown, f"outputs outside the support: {sorted(unknown)[:3]}"
    keys = sorted(probabilities)
    return chi_square_p_value([counts.get(k, 0) for k in keys], [probabilities[k] for k in keys])


def vec(*values: float) -> np.ndarray:
    """A float input vector."""
    return np.array(values, dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# registry and metadata


def test_suite_keys_in_order() -> None:
    """SUITE lists exactly the twenty mechanisms, in the DP-Sniper evaluation order."""
    assert tuple(SUITE) == NAMES


def test_suite_is_read_only() -> None:
    """SUITE is a mapping proxy that refuses item assignment."""
    assert isinstance(SUITE, types.MappingProxyType)
    with pytest.raises(TypeError):
        SUITE["LaplaceMechanism"] = SUITE["NoisyHist1"]  # type: ignore[index]


@pytest.mark.parametrize("name", NAMES)
def test_entry_named_by_key(name: str) -> None:
    """Each entry is a SuiteMechanism whose name is its key."""
    mech = SUITE[name]
    assert isinstance(mech, SuiteMechanism)
    assert mech.name == name


@pytest.mark.parametrize("name", NAMES)
def test_violates_claim_agrees_with_true_epsilon(name: str) -> None:
    """violates_claim is true exactly when the known true epsilon exceeds the claim."""
    mech = SUITE[name]
    assert mech.true_epsilon is not None
    assert mech.violates_claim == (mech.true_epsilon > mech.claimed_epsilon)


def test_expected_violations() -> None:
    """The mechanisms known to violate their claims are the ten the derivations identify."""
    violating = {name for name, mech in SUITE.items() if mech.violates_claim}
    assert violating == {
        "TruncatedGeometricMechanism", "NoisyHist2", "ReportNoisyMax3", "ReportNoisyMax4",
        "SparseVectorTechnique3", "SparseVectorTechnique4", "SparseVectorTechnique5",
        "SparseVectorTechnique6", "SVT34Parallel", "PrefixSum",
    }


def test_inconsistent_claim_is_refused() -> None:
    """Constructing an entry whose violates_claim contradicts true_epsilon raises ParameterError."""
    mech = SUITE["NoisyHist2"]
    with pytest.raises(ParameterError, match="violates_claim must be true_epsilon > claimed_epsilon"):
        attrs.evolve(mech, violates_claim=False)


@pytest.mark.parametrize("name", NAMES)
def test_best_published_is_the_maximum(name: str) -> None:
    """best_published returns a bound whose epsilon_lower is the largest recorded."""
    mech = SUITE[name]
    best = mech.best_published()
    assert best is not None
    assert best in mech.published
    assert best.epsilon_lower == max(b.epsilon_lower for b in mech.published)


def test_best_published_none_without_bounds() -> None:
    """An entry without published bounds has no best bound."""
    assert attrs.evolve(SUITE["LaplaceMechanism"], published=()).best_published() is None


@pytest.mark.parametrize("name", NAMES)
def test_input_pairs_start_with_best_and_cover_published(name: str) -> None:
    """input_pairs starts with the best bound's pair, lists every published pair once, and is short."""
    mech = SUITE[name]
    best = mech.best_published()
    assert best is not None
    assert mech.input_pairs[0] == (best.input_a, best.input_b)
    keys = [frozenset(pair) for pair in mech.input_pairs]
    assert len(keys) == len(set(keys))
    for bound in mech.published:
        assert frozenset((bound.input_a, bound.input_b)) in keys
    assert len(mech.input_pairs) <= 10


@pytest.mark.parametrize("name", NAMES)
def test_input_pairs_are_neighbours(name: str) -> None:
    """Every listed pair is a pair of neighbours under the mechanism's relation."""
    mech = SUITE[name]
    for a, b in mech.input_pairs:
        diff = np.abs(np.subtract(a, b))
        if name in LOCAL:
            assert a != b
        else:
            assert 0.0 < diff.max() <= 1.0
        if name in ONE_ENTRY:
            assert np.count_nonzero(diff) == 1


@pytest.mark.parametrize("name", NAMES)
def test_published_bound_provenance(name: str) -> None:
    """Each mechanism has DP-Sniper logistic and MLP bounds at level 0.9 with their call counts."""
    mech = SUITE[name]
    tools = [b.tool for b in mech.published]
    assert tools[:2] == ["DP-Sniper (logistic)", "DP-Sniper (MLP)"]
    assert set(tools) <= {"DP-Sniper (logistic)", "DP-Sniper (MLP)", "StatDP"}
    pairs_searched = 4 if name in ONE_ENTRY + LOCAL else 16
    for bound in mech.published:
        assert bound.confidence_level == 0.9
        assert "eval_sp2021/reference-results/" in bound.reference
        if bound.tool.startswith("DP-Sniper"):
            assert bound.calls == pairs_searched * 53_500_000 + 400_000_000
        else:
            assert bound.calls is None


def test_published_bounds_respect_true_epsilon() -> None:
    """Published 0.9-level bounds exceed the true epsilon rarely (binomial 1e-4 quantile) and barely."""
    bounds = [(m.true_epsilon, b) for m in SUITE.values() for b in m.published]
    above = [(t, b) for t, b in bounds if t is not None and b.epsilon_lower > t]
    assert len(above) <= stats.binom.ppf(1 - 1e-4, len(bounds), 0.1)
    for true_epsilon, bound in above:
        assert true_epsilon is not None
        assert bound.epsilon_lower <= true_epsilon * (1 + 1e-3)


def test_published_values_spot_check() -> None:
    """Spot values match the artifact logs (final eps_lcb and best pair)."""
    best = SUITE["NoisyHist2"].best_published()
    assert best is not None
    assert (best.tool, best.epsilon_lower) == ("StatDP", 10.002168576736125)
    assert "statdp_2_data.log" in best.reference
    reg = SUITE["SparseVectorTechnique5"].published[0]
    assert reg.tool == "DP-Sniper (logistic)"
    assert reg.epsilon_lower == 1.7611853568928795
    assert reg.input_a == (2.0,) * 5 + (0.0,) * 5
    assert reg.input_b == (1.0,) * 10
    assert len(SUITE["NumericalSVT"].published) == 2


def test_published_bound_validation() -> None:
    """PublishedBound refuses a confidence level outside (0, 1) and inputs of different lengths."""
    good = SUITE["LaplaceMechanism"].published[0]
    with pytest.raises(ParameterError, match=r"confidence_level must be a float in \(0, 1\)"):
        attrs.evolve(good, confidence_level=1.5)
    with pytest.raises(ParameterError, match="input_b must be of the same length as input_a"):
        attrs.evolve(good, input_b=(0.0, 1.0))
    with pytest.raises(ParameterError, match="calls must be None or an integer >= 1"):
        attrs.evolve(good, calls=0)


def test_entries_are_immutable() -> None:
    """Assigning to a field of a suite entry or of a published bound raises."""
    mech = SUITE["LaplaceMechanism"]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        mech.claimed_epsilon = 1.0  # type: ignore[misc]
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        mech.published[0].epsilon_lower = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("name", ["SparseVectorTechnique3", "Rappor", "TruncatedGeometricMechanism"])
def test_pickle_round_trip(name: str) -> None:
    """A pickled entry is equal to the original and draws the same outputs from the same seed."""
    mech = SUITE[name]
    copy = pickle.loads(pickle.dumps(mech))
    assert copy == mech
    x = np.asarray(mech.input_pairs[0][0])
    expected = mech(x, 50, np.random.default_rng(3))
    np.testing.assert_array_equal(copy(x, 50, np.random.default_rng(3)), expected)


# ---------------------------------------------------------------------------------------------
# call contract


@pytest.mark.parametrize("name", NAMES)
def test_output_shape_dtype_and_kind(name: str, rng: np.random.Generator) -> None:
    """Outputs have shape (n,) or (n, output_dim) and the dtype that matches output_kind."""
    mech = SUITE[name]
    out = mech(np.asarray(mech.input_pairs[0][1]), 7, rng)
    assert out.shape == ((7,) if mech.output_dim == 1 else (7, mech.output_dim))
    assert out.dtype == (np.int64 if mech.output_kind == "discrete" else np.float64)
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_outputs(name: str) -> None:
    """The same seed gives the same outputs; another seed gives different ones."""
    mech = SUITE[name]
    x = np.asarray(mech.input_pairs[0][0])
    first = mech(x, 1000, np.random.default_rng(11))
    np.testing.assert_array_equal(first, mech(x, 1000, np.random.default_rng(11)))
    assert not np.array_equal(first, mech(x, 1000, np.random.default_rng(12)))


@pytest.mark.parametrize("name", NAMES)
def test_only_the_generator_is_used(name: str) -> None:
    """Calls neither read nor advance numpy's global random state."""
    mech = SUITE[name]
    x = np.asarray(mech.input_pairs[0][0])
    np.random.seed(1)
    state = np.random.get_state()
    first = mech(x, 200, np.random.default_rng(5))
    after = np.random.get_state()
    assert all(np.array_equal(a, b) for a, b in zip(state[1:3], after[1:3], strict=True))
    np.random.seed(2)
    np.testing.assert_array_equal(first, mech(x, 200, np.random.default_rng(5)))


@pytest.mark.parametrize("name", NAMES)
def test_discrete_outputs_in_their_alphabet(name: str, rng: np.random.Generator) -> None:
    """Discrete and flag outputs take only their documented values."""
    mech = SUITE[name]
    out = mech(np.asarray(mech.input_pairs[0][0]), 5000, rng)
    alphabet: dict[str, set[float]] = {
        "TruncatedGeometricMechanism": set(range(6)),
        "ReportNoisyMax1": set(range(5)),
        "ReportNoisyMax2": set(range(5)),
        "SparseVectorTechnique1": {-1, 0, 1},
        "SparseVectorTechnique2": {-1, 0, 1},
        "SparseVectorTechnique4": {-1, 0, 1},
        "SparseVectorTechnique5": {0, 1},
        "SparseVectorTechnique6": {0, 1},
        "Rappor": {0, 1},
        "OneTimeRappor": {0, 1},
    }
    if name in alphabet:
        assert set(np.unique(out).tolist()) <= alphabet[name]
    if name in ("SparseVectorTechnique3", "NumericalSVT", "SVT34Parallel"):
        assert set(np.unique(out[:, :10]).tolist()) <= {-1.0, 0.0, 1.0}
        values = out[:, 10:20]
        assert np.all(values[out[:, :10] != 1.0] == 0.0)
    if name == "SVT34Parallel":
        assert set(np.unique(out[:, 20:]).tolist()) <= {-1.0, 0.0, 1.0}


@pytest.mark.parametrize("name", NAMES)
def test_rejects_wrong_length(name: str, rng: np.random.Generator) -> None:
    """An input of the wrong length raises ParameterError naming the expected length."""
    mech = SUITE[name]
    length = len(mech.input_pairs[0][0])
    with pytest.raises(ParameterError, match=f"x must be a 1-D array of length {length}"):
        mech(np.zeros(length + 1), 10, rng)


@pytest.mark.parametrize("n", [0, -3])
def test_rejects_n_below_one(n: int, rng: np.random.Generator) -> None:
    """A call count below 1 raises ParameterError with the fix."""
    message = r"n must be an integer >= 1; got .*Pass the number of mechanism calls"
    with pytest.raises(ParameterError, match=message):
        SUITE["LaplaceMechanism"](vec(1.0), n, rng)


def test_rejects_bad_inputs(rng: np.random.Generator) -> None:
    """Two-dimensional, boolean, string and non-finite inputs raise ParameterError."""
    mech = SUITE["NoisyHist1"]
    with pytest.raises(ParameterError, match="x must be a 1-D array of length 5"):
        mech(np.zeros((1, 5)), 10, rng)
    with pytest.raises(ParameterError, match="x must be an array of integer or float dtype"):
        mech(np.ones(5, dtype=bool), 10, rng)
    with pytest.raises(ParameterError, match="x must be an array of integer or float dtype"):
        mech(np.array(["1"] * 5), 10, rng)
    with pytest.raises(ParameterError, match="x must be finite"):
        mech(vec(1.0, 1.0, np.nan, 1.0, 1.0), 10, rng)


def test_integer_inputs_are_checked(rng: np.random.Generator) -> None:
    """Counts must be integers in 0..5 and RAPPOR values integers; integer dtypes are accepted."""
    geometric = SUITE["TruncatedGeometricMechanism"]
    with pytest.raises(ParameterError, match="x must be in \\[0, 5\\]"):
        geometric(vec(6.0), 10, rng)
    with pytest.raises(ParameterError, match="x must be integer-valued"):
        geometric(vec(2.5), 10, rng)
    with pytest.raises(ParameterError, match="x must be integer-valued"):
        SUITE["Rappor"](vec(0.5), 10, rng)
    assert geometric(np.array([3]), 10, rng).shape == (10,)


# ---------------------------------------------------------------------------------------------
# exact output laws


def test_laplace_law(rng: np.random.Generator) -> None:
    """LaplaceMechanism draws x + Lap(10)."""
    out = SUITE["LaplaceMechanism"](vec(1.0), N_CALLS, rng)
    assert laplace_bin_test(out, 1.0, 10.0) > MIN_P_VALUE


def test_truncated_geometric_table_is_the_folded_geometric() -> None:
    """GeoSample's CDF table differences equal the folded two-sided geometric law, exactly."""
    d = suite._TG_DENOMINATOR
    for count in range(6):
        table = [0, *(int(v) for v in suite._TG_TABLES[count])]
        from_table = tuple(Fraction(b - a, d) for a, b in itertools.pairwise(table))
        assert from_table == laws.truncated_geometric_pmf(count, 5, 3)
        assert sum(from_table) == 1


@pytest.mark.parametrize("count", range(6))
def test_truncated_geometric_law(count: int, rng: np.random.Generator) -> None:
    """TruncatedGeometricMechanism's output frequencies match the exact pmf at every count."""
    out = SUITE["TruncatedGeometricMechanism"](vec(float(count)), N_CALLS, rng)
    pmf = [float(p) for p in laws.truncated_geometric_pmf(count, 5, 3)]
    assert chi_square_p_value(np.bincount(out, minlength=6), pmf) > MIN_P_VALUE


@pytest.mark.parametrize(("name", "scale"), [("NoisyHist1", 10.0), ("NoisyHist2", 0.1)])
def test_noisy_hist_law(name: str, scale: float, rng: np.random.Generator) -> None:
    """Each bin is its count plus independent Laplace noise of the algorithm's scale."""
    x = vec(0.0, 1.0, 1.0, 3.0, 1.0)
    out = SUITE[name](x, N_CALLS // 5, rng)
    assert laplace_bin_test(out - x, 0.0, scale) > MIN_P_VALUE
    corr = np.corrcoef(out, rowvar=False)
    assert np.max(np.abs(corr - np.eye(5))) < 5 / math.sqrt(N_CALLS // 5)


@pytest.mark.parametrize(
    ("name", "law"), [("ReportNoisyMax1", "laplace"), ("ReportNoisyMax2", "exponential")]
)
def test_report_noisy_max_index_law(name: str, law: laws.Law, rng: np.random.Generator) -> None:
    """The reported index follows the order-statistics integral for the algorithm's noise."""
    x = vec(40.0, 0.0, 20.0, 10.0, 30.0)
    probs = laws.noisy_max_index_probabilities(x, law, 20.0)
    out = SUITE[name](x, N_CALLS, rng)
    assert chi_square_p_value(np.bincount(out, minlength=5), probs) > MIN_P_VALUE


@pytest.mark.parametrize(
    ("name", "law"), [("ReportNoisyMax3", "laplace"), ("ReportNoisyMax4", "exponential")]
)
def test_report_noisy_max_value_law(name: str, law: laws.Law, rng: np.random.Generator) -> None:
    """The released maximum has CDF prod_j F(t - x_j) for the algorithm's noise."""
    x = vec(1.0, 0.0, 2.0, 2.0, 0.5)
    out = SUITE[name](x, N_CALLS, rng)
    inner = np.quantile(out, np.linspace(0, 1, 41)[1:-1])
    cdf = np.concatenate(([0.0], laws.noisy_max_value_cdf(x, law, 20.0, inner), [1.0]))
    counts = np.bincount(np.searchsorted(inner, out), minlength=40)
    assert chi_square_p_value(counts, np.diff(cdf)) > MIN_P_VALUE
    if law == "exponential":
        assert out.min() >= x.max()


SVT_BINARY = [
    ("SparseVectorTechnique1", 0.5, 20.0, 40.0),
    ("SparseVectorTechnique2", 1.0, 20.0, 40.0),
    ("SparseVectorTechnique4", 1.0, 40.0, 40.0 / 3.0),
]
SPREAD = (-30.0, 10.0, -20.0, 0.0, 25.0, -10.0, 5.0, 40.0, -5.0, 15.0)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "threshold", "rho", "nu"), SVT_BINARY)
def test_sparse_vector_binary_law(
    name: str, threshold: float, rho: float, nu: float, rng: np.random.Generator
) -> None:
    """SVT1, SVT2 and SVT4 (c = 1) output patterns follow the integral over the threshold noise."""
    x = vec(*SPREAD)
    probs = {p: laws.svt_pattern_probability(p, x, threshold, rho, nu) for p in laws.svt_patterns(10, 1)}
    assert pattern_test(SUITE[name](x, N_CALLS, rng), probs) > MIN_P_VALUE


@pytest.mark.slow
def test_sparse_vector_refresh_law(rng: np.random.Generator) -> None:
    """Alg. 2's threshold redraw after each answer of 1 gives the segment-product law (run at c = 2)."""
    x = vec(*SPREAD)
    out = suite._svt_flags(
        x, N_CALLS, rng, threshold=1.0, rho_scale=20.0, nu_scale=40.0, cutoff=2, refresh=True
    )
    patterns = laws.svt_patterns(10, 2)
    probs = {p: laws.refreshed_svt_pattern_probability(p, x, 1.0, 20.0, 40.0) for p in patterns}
    assert pattern_test(out, probs) > MIN_P_VALUE


@pytest.mark.slow
def test_sparse_vector_3_law(rng: np.random.Generator) -> None:
    """SVT3's flags follow its pattern law and the first released value follows the joint law."""
    x = vec(*SPREAD)
    out = SUITE["SparseVectorTechnique3"](x, N_CALLS, rng)
    flags = out[:, :10].astype(np.int64)
    probs = {p: laws.svt_pattern_probability(p, x, 1.0, 20.0, 20.0) for p in laws.svt_patterns(10, 1)}
    assert pattern_test(flags, probs) > MIN_P_VALUE
    first = flags[:, 0] == 1
    edges = np.array([-60.0, -30.0, -10.0, 0.0, 10.0, 20.0, 30.0, 45.0, 70.0, 120.0])
    cells = [
        laws.svt_value_probability(0, x, 1.0, 20.0, 20.0, lo, hi) for lo, hi in itertools.pairwise(edges)
    ]
    tail = laws.svt_value_probability(0, x, 1.0, 20.0, 20.0, -math.inf, edges[0])
    tail += laws.svt_value_probability(0, x, 1.0, 20.0, 20.0, edges[-1], math.inf)
    values = out[first, 10]
    counts = np.histogram(values, bins=edges)[0].tolist()
    observed = [*counts, int(first.sum()) - sum(counts), N_CALLS - int(first.sum())]
    expected = [*cells, tail, 1.0 - sum(cells) - tail]
    assert chi_square_p_value(observed, expected) > MIN_P_VALUE


@pytest.mark.slow
def test_sparse_vector_5_law(rng: np.random.Generator) -> None:
    """SVT5 answers 1 exactly for the queries at or above the noisy threshold, with the Laplace law."""
    x = vec(*SPREAD)
    support = {tuple(int(v >= x[k]) for v in x) for k in range(10)} | {(0,) * 10}
    probs = {p: laws.svt_noiseless_pattern_probability(p, x, 1.0, 20.0) for p in support}
    assert pattern_test(SUITE["SparseVectorTechnique5"](x, N_CALLS, rng), probs) > MIN_P_VALUE


@pytest.mark.slow
def test_sparse_vector_6_law(rng: np.random.Generator) -> None:
    """SVT6's first three answers follow the integral law and no answer is ever -1."""
    x = vec(*SPREAD)
    out = SUITE["SparseVectorTechnique6"](x, N_CALLS, rng)
    head = [(*p, -1, -1, -1, -1, -1, -1, -1) for p in laws.svt_patterns(3, None)]
    probs = {p[:3]: laws.svt_pattern_probability(p, x, 1.0, 20.0, 20.0) for p in head}
    assert pattern_test(out[:, :3], probs) > MIN_P_VALUE
    assert out.min() >= 0


@pytest.mark.slow
def test_svt34_parallel_law(rng: np.random.Generator) -> None:
    """Both halves of SVT34Parallel follow their c = 2 pattern laws and are independent."""
    x = vec(*SPREAD)
    out = SUITE["SVT34Parallel"](x, N_CALLS, rng)
    patterns = laws.svt_patterns(10, 2)
    alg3 = {p: laws.svt_pattern_probability(p, x, 1.0, 20.0, 40.0) for p in patterns}
    alg4 = {p: laws.svt_pattern_probability(p, x, 1.0, 40.0, 40.0 / 3.0) for p in patterns}
    assert pattern_test(out[:, :10], alg3) > MIN_P_VALUE
    assert pattern_test(out[:, 20:], alg4) > MIN_P_VALUE
    ones3 = (out[:, :10] == 1).sum(axis=1)
    ones4 = (out[:, 20:] == 1).sum(axis=1)
    table = np.array([[np.sum((ones3 == i) & (ones4 == j)) for j in range(3)] for i in range(3)])
    assert stats.chi2_contingency(table).pvalue > MIN_P_VALUE
    first = out[:, 0] == 1
    edges = np.array([-60.0, -20.0, 0.0, 20.0, 40.0, 70.0, 120.0])
    cells = [
        laws.svt_value_probability(0, x, 1.0, 20.0, 40.0, lo, hi) for lo, hi in itertools.pairwise(edges)
    ]
    counts = np.histogram(out[first, 10], bins=edges)[0].tolist()
    observed = [*counts, int(first.sum()) - sum(counts), N_CALLS - int(first.sum())]
    p_first = alg3_first = sum(v for p, v in alg3.items() if p[0] == 1)
    expected = [*cells, p_first - sum(cells), 1.0 - alg3_first]
    assert chi_square_p_value(observed, expected) > MIN_P_VALUE


@pytest.mark.slow
def test_numerical_svt_law(rng: np.random.Generator) -> None:
    """NumericalSVT's flags follow the c = 2 law and released values are fresh x_j + Lap(60)."""
    x = vec(*SPREAD)
    out = SUITE["NumericalSVT"](x, N_CALLS, rng)
    probs = {p: laws.svt_pattern_probability(p, x, 1.0, 30.0, 120.0) for p in laws.svt_patterns(10, 2)}
    assert pattern_test(out[:, :10], probs) > MIN_P_VALUE
    above = out[:, :10] == 1
    noise = (out[:, 10:] - x)[above]
    assert laplace_bin_test(noise, 0.0, 60.0, bins=30) > MIN_P_VALUE


@pytest.mark.parametrize("name", LOCAL)
@pytest.mark.parametrize("value", [0, -8])
def test_rappor_law(name: str, value: int, rng: np.random.Generator) -> None:
    """Reported bits are independent with the closed-form probability for their Bloom bit."""
    bloom = suite._bloom_bits(value)
    if name == "Rappor":
        probs = [laws.rappor_report_probability(j in bloom, 0.75, 0.45, 0.55) for j in range(20)]
    else:
        probs = [laws.permanent_response_probability(j in bloom, 0.95) for j in range(20)]
    out = SUITE[name](vec(float(value)), N_CALLS, rng)
    p = np.array(probs)
    z = (out.mean(axis=0) - p) / np.sqrt(p * (1 - p) / N_CALLS)
    assert np.max(np.abs(z)) < 5.0
    ones = np.zeros(21)
    ones[0] = 1.0
    for pj in p:
        ones = np.convolve(ones, [1 - pj, pj])[:21]
    assert chi_square_p_value(np.bincount(out.sum(axis=1), minlength=21), ones) > MIN_P_VALUE


def test_bloom_filter_hash() -> None:
    """MurmurHash3 matches reference vectors and the Bloom bits of 0 and 1 are DP-Sniper's."""
    assert suite._murmur3_32(b"", 0) == 0
    assert suite._murmur3_32(b"", 1) == 0x514E28B7
    assert suite._murmur3_32(b"test", 0) == 0xBA6BD213
    assert suite._murmur3_32(b"Hello, world!", 1234) == 0xFAF6CDB3
    assert suite._murmur3_32(b"The quick brown fox jumps over the lazy dog", 0) == 0x2E4FF723
    # the published classifier weights single out these bits (eval_sp2021 dd_search logs)
    assert suite._bloom_bits(0) == {0, 11, 18}
    assert suite._bloom_bits(1) == {3, 10, 13}


def test_laplace_parallel_law(rng: np.random.Generator) -> None:
    """LaplaceParallel draws twenty independent x + Lap(200) columns."""
    out = SUITE["LaplaceParallel"](vec(1.0), N_CALLS // 20, rng)
    assert laplace_bin_test(out, 1.0, 200.0) > MIN_P_VALUE
    corr = np.corrcoef(out, rowvar=False)
    assert np.max(np.abs(corr - np.eye(20))) < 5 / math.sqrt(N_CALLS // 20)


def test_prefix_sum_law(rng: np.random.Generator) -> None:
    """PrefixSum's increments are x_j + independent Lap(10) draws."""
    x = vec(*SPREAD)
    out = SUITE["PrefixSum"](x, N_CALLS // 10, rng)
    increments = np.diff(out, axis=1, prepend=0.0) - x
    assert laplace_bin_test(increments, 0.0, 10.0) > MIN_P_VALUE
    corr = np.corrcoef(increments, rowvar=False)
    assert np.max(np.abs(corr - np.eye(10))) < 5 / math.sqrt(N_CALLS // 10)


# ---------------------------------------------------------------------------------------------
# the stated true epsilons


def test_truncated_geometric_true_epsilon() -> None:
    """Adjacent counts' largest likelihood ratio is 9/8 at k = 3 (and 33/32 at the base-2 k = 5)."""
    for k, expected in ((3, Fraction(9, 8)), (5, Fraction(33, 32))):
        ratios = set()
        for count in range(5):
            p, q = laws.truncated_geometric_pmf(count, 5, k), laws.truncated_geometric_pmf(count + 1, 5, k)
            ratios |= {max(a / b, b / a) for a, b in zip(p, q, strict=True)}
        assert max(ratios) == expected
    assert suite._TG_K == 3
    assert SUITE["TruncatedGeometricMechanism"].true_epsilon == pytest.approx(math.log(9 / 8), rel=1e-15)


@pytest.mark.slow
def test_report_noisy_max_losses_attained() -> None:
    """RNM2's loss 0.1 is attained at (1,1,1,1,1) vs (0,2,2,2,2); RNM3's 0.25 for a shift of all answers."""
    p = laws.noisy_max_index_probabilities(vec(1, 1, 1, 1, 1), "exponential", 20.0)[0]
    q = laws.noisy_max_index_probabilities(vec(0, 2, 2, 2, 2), "exponential", 20.0)[0]
    assert math.log(p / q) == pytest.approx(SUITE["ReportNoisyMax2"].true_epsilon, rel=1e-8)
    ratio = laws.noisy_max_value_cdf(vec(1, 1, 1, 1, 1), "laplace", 20.0, 0.5)
    ratio = ratio / laws.noisy_max_value_cdf(vec(2, 2, 2, 2, 2), "laplace", 20.0, 0.5)
    assert math.log(float(ratio)) == pytest.approx(SUITE["ReportNoisyMax3"].true_epsilon, rel=1e-12)
    lap = laws.noisy_max_index_probabilities(vec(0, 200, 200, 200, 200), "laplace", 20.0)[0]
    lap2 = laws.noisy_max_index_probabilities(vec(-1, 201, 201, 201, 201), "laplace", 20.0)[0]
    assert math.log(lap / lap2) == pytest.approx(SUITE["ReportNoisyMax1"].true_epsilon, rel=1e-8)


def test_sparse_vector_3_loss_attained() -> None:
    """SVT3's loss 0.5 is attained: nine answers below then a released value in [0, 1]."""
    x = (1.0,) * 9 + (0.0,)
    x_prime = (2.0,) * 9 + (-1.0,)
    p = laws.svt_value_probability(9, x, 1.0, 20.0, 20.0, 0.0, 1.0)
    q = laws.svt_value_probability(9, x_prime, 1.0, 20.0, 20.0, 0.0, 1.0)
    assert math.log(p / q) == pytest.approx(SUITE["SparseVectorTechnique3"].true_epsilon, rel=1e-7)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "rho", "nu", "ones", "extra"),
    [
        ("SparseVectorTechnique1", 20.0, 40.0, 1, 0.0),
        ("SparseVectorTechnique4", 40.0, 40.0 / 3.0, 1, 0.0),
        ("NumericalSVT", 30.0, 120.0, 2, 2 / 60.0),
    ],
)
def test_sparse_vector_supremum_approached(name: str, rho: float, nu: float, ones: int, extra: float) -> None:
    """The loss of the extreme-input construction reaches the stated true epsilon (to 1e-6 at M = 800)."""
    m = 800.0
    grid = np.linspace(-3 * m - 3000, 3 * m + 3000, 1_000_001)
    below = 10 - ones
    x = (m,) * below + (-m,) * ones
    x_prime = (m + 1,) * below + (-m - 1,) * ones
    pattern = (0,) * below + (1,) * ones
    loss = laws.svt_log_pattern_probability(pattern, x, 1.0, rho, nu, grid)
    loss -= laws.svt_log_pattern_probability(pattern, x_prime, 1.0, rho, nu, grid)
    # NumericalSVT adds the released Lap(60) values, whose ratio is exactly e^(1/60) each here
    assert loss + extra == pytest.approx(SUITE[name].true_epsilon, abs=1e-6)


@pytest.mark.slow
def test_sparse_vector_6_and_parallel_suprema() -> None:
    """SVT6 reaches 0.5 on (M^5, -M^5); SVT34Parallel's 0.575 is Alg. 3's 0.25 plus Alg. 4's 0.325."""
    m = 800.0
    grid = np.linspace(-3 * m - 3000, 3 * m + 3000, 1_000_001)
    x, x_prime = (m,) * 5 + (-m,) * 5, (m + 1,) * 5 + (-m - 1,) * 5
    pattern = (0,) * 5 + (1,) * 5
    loss6 = laws.svt_log_pattern_probability(pattern, x, 1.0, 20.0, 20.0, grid)
    loss6 -= laws.svt_log_pattern_probability(pattern, x_prime, 1.0, 20.0, 20.0, grid)
    assert loss6 == pytest.approx(SUITE["SparseVectorTechnique6"].true_epsilon, abs=1e-6)
    x, x_prime = (m,) * 8 + (-m,) * 2, (m + 1,) * 8 + (-m - 1,) * 2
    pattern = (0,) * 8 + (1,) * 2
    loss4 = laws.svt_log_pattern_probability(pattern, x, 1.0, 40.0, 40.0 / 3.0, grid)
    loss4 -= laws.svt_log_pattern_probability(pattern, x_prime, 1.0, 40.0, 40.0 / 3.0, grid)
    alg3 = math.log(
        laws.svt_value_probability(9, (1.0,) * 9 + (0.0,), 1.0, 20.0, 40.0, 0.0, 1.0)
        / laws.svt_value_probability(9, (2.0,) * 9 + (-1.0,), 1.0, 20.0, 40.0, 0.0, 1.0)
    )
    assert alg3 == pytest.approx(10 / 40, rel=1e-7)
    assert (10 / 40) + loss4 == pytest.approx(SUITE["SVT34Parallel"].true_epsilon, abs=1e-6)


def test_rappor_true_epsilon() -> None:
    """RAPPOR's supremum needs two values with disjoint 4-bit Bloom sets; -8 and -6 are such values."""
    a, b = suite._bloom_bits(-8), suite._bloom_bits(-6)
    assert len(a) == len(b) == 4 and not a & b
    q_star = laws.rappor_report_probability(True, 0.75, 0.45, 0.55)
    p_star = laws.rappor_report_probability(False, 0.75, 0.45, 0.55)
    assert SUITE["Rappor"].true_epsilon == pytest.approx(8 * math.log(q_star / p_star), rel=1e-14)
    assert SUITE["Rappor"].claimed_epsilon == SUITE["Rappor"].true_epsilon
    one = laws.permanent_response_probability(True, 0.95)
    zero = laws.permanent_response_probability(False, 0.95)
    assert SUITE["OneTimeRappor"].true_epsilon == pytest.approx(8 * math.log(one / zero), rel=1e-14)


def test_infinite_losses_have_disjoint_supports(rng: np.random.Generator) -> None:
    """SVT5 on equal answers only outputs constant rows; RNM4 never outputs below max(x)."""
    svt5 = SUITE["SparseVectorTechnique5"]
    rows = svt5(vec(*(1.0,) * 10), 20_000, rng)
    assert np.all(rows == rows[:, :1])
    mixed = svt5(vec(*(2.0,) * 5, *(0.0,) * 5), 20_000, rng)
    assert np.any(np.all(mixed == (1,) * 5 + (0,) * 5, axis=1))
    assert SUITE["SparseVectorTechnique5"].true_epsilon == math.inf
    assert SUITE["ReportNoisyMax4"](vec(2, 2, 2, 2, 2), 20_000, rng).min() >= 2.0
