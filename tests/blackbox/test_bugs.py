"""The known-bug mechanisms: their laws, the bugs they show, their claims, the CLI and the reach."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import certify as cf
from certify.blackbox import BUGS, BugMechanism, curator_attack
from certify.blackbox import _bug_samplers as samplers
from certify.blackbox.reach import smallest_event_probability
from certify.cli import main

FLOAT_BUGS = ("TextbookLaplace", "InversionLaplace", "BoxMullerGaussian", "PolarGaussian", "ZigguratGaussian")


@pytest.mark.parametrize("name", sorted(BUGS))
def test_every_bug_claims_less_than_its_exact_loss_and_draws_its_shape(name: str) -> None:
    """Each entry's exact loss exceeds its claim; it draws n outputs of its dimension per input."""
    bug = BUGS[name]
    assert isinstance(bug, BugMechanism) and bug.name == name and bug.suite_name == name
    assert bug.true_epsilon > bug.claimed_epsilon
    for x in bug.input_pairs[0]:
        out = np.asarray(bug(np.array(x), 7, np.random.default_rng(0)))
        assert out.shape == ((7,) if bug.output_dim == 1 else (7, bug.output_dim))
        assert np.all(np.isfinite(out))


@pytest.mark.parametrize("name", FLOAT_BUGS)
def test_float_bugs_put_outputs_of_input_one_on_the_grid_of_two_to_minus_53(name: str) -> None:
    """On input 1 every output in (0, 1/2) is a multiple of 2**-53; on input 0 over 0.5% are not."""
    bug, rng = BUGS[name], np.random.default_rng(1)
    one, zero = bug(np.array([1.0]), 200_000, rng), bug(np.array([0.0]), 200_000, rng)

    def off_grid(y: np.ndarray) -> np.ndarray:
        return (y > 0) & (y < 0.5) & (np.mod(y, 2.0**-53) != 0)

    assert ((one > 0) & (one < 0.5)).sum() > 1000
    assert off_grid(one).sum() == 0
    assert off_grid(zero).mean() > 0.005


@pytest.mark.parametrize(
    ("sampler", "law"),
    [(samplers.box_muller, "norm"), (samplers.polar, "norm"), (samplers.ziggurat, "norm")],
)
def test_gaussian_samplers_draw_normal_noise(sampler: object, law: str) -> None:
    """Box-Muller, polar and ziggurat noise over sigma passes a KS test of N(0, 1) (p > 0.001)."""
    z = sampler(np.zeros(1), 200_000, np.random.default_rng(2)) / samplers.GAUSS_SIGMA  # type: ignore[operator]
    assert stats.kstest(z, law).pvalue > 1e-3


def test_inversion_laplace_draws_laplace_noise_of_scale_ten() -> None:
    """Inversion noise over 10 passes a KS test of the standard Laplace law (p > 0.001)."""
    z = samplers.inversion_laplace(np.zeros(1), 200_000, np.random.default_rng(3)) / 10.0
    assert stats.kstest(z, "laplace").pvalue > 1e-3


def test_ziggurat_tail_has_the_normal_tail_mass() -> None:
    """The share beyond r = 3.654 matches 2 P(Z > r) within five binomial standard errors."""
    z = samplers.ziggurat(np.zeros(1), 2_000_000, np.random.default_rng(4)) / samplers.GAUSS_SIGMA
    p = 2 * stats.norm.sf(3.6541528853610088)
    assert abs(np.mean(np.abs(z) > 3.6541528853610088) - p) < 5 * math.sqrt(p / 2_000_000)


def test_integer_noise_has_the_geometric_ratio_of_epsilon_one_tenth() -> None:
    """The unclamped count's noise has P(k + 1) / P(k) = e^-0.1 for k >= 0 (pooled over 0..9)."""
    out = samplers.unclamped_count(np.zeros(4), 2_000_000, np.random.default_rng(5))
    counts = np.bincount(out[(out >= 0) & (out <= 10)], minlength=11).astype(float)
    ratio = counts[1:].sum() / counts[:-1].sum()
    assert abs(ratio - math.exp(-0.1)) < 0.005


def test_nan_through_clip_flags_every_release_of_the_missing_row_and_no_other() -> None:
    """With one row missing the release is NaN every time; with none, never."""
    bug, rng = BUGS["NaNThroughClip"], np.random.default_rng(6)
    full, missing = (np.asarray(bug(np.array(x), 1000, rng)) for x in bug.input_pairs[0])
    assert full[:, 0].sum() == 0 and missing[:, 0].sum() == 1000
    assert np.all(missing[:, 1] == 0.0)


def test_curator_attack_leaks_at_its_rate_and_refuses_bad_probabilities() -> None:
    """The leak shows at rate p (within five standard errors); p outside (0, 1) is refused."""
    out = curator_attack(0.01)(np.zeros(1), 200_000, np.random.default_rng(7))
    rate = np.mean(out == samplers.CURATOR_JUMP)
    assert abs(rate - 0.01) < 5 * math.sqrt(0.01 / 200_000)
    for bad in (0.0, 1.0, -1.0, True):
        with pytest.raises(cf.ParameterError, match="p must be"):
            curator_attack(bad)


def test_bugs_refuse_bad_inputs() -> None:
    """A wrong length, a NaN or a bad n is a ParameterError naming the argument."""
    bug = BUGS["UnclampedBounds"]
    with pytest.raises(cf.ParameterError, match="length 4"):
        bug(np.zeros(3), 5, np.random.default_rng(0))
    with pytest.raises(cf.ParameterError, match="finite"):
        bug(np.array([0.0, 0.0, 0.0, np.nan]), 5, np.random.default_rng(0))
    with pytest.raises(cf.ParameterError, match="n must be"):
        bug(np.zeros(4), 0, np.random.default_rng(0))


def test_unclamped_bounds_is_refuted_below_its_exact_loss(ledger: cf.Ledger, seed: int) -> None:
    """At 300,000 calls the unclamped count is refuted at 0.1 with a bound at most its exact 0.6."""
    bug = BUGS["UnclampedBounds"]
    audit = cf.audit_mechanism(bug, inputs=list(bug.input_pairs), calls=300_000, ledger=ledger,
                               seed=seed, progress=False)
    assert 0.1 < audit.certificate.epsilon_lower <= 0.6
    assert isinstance(cf.refute(cf.Claim(bug.claimed_epsilon), audit.family), cf.Refuted)


def test_reach_shrinks_with_the_budget(ledger: cf.Ledger, seed: int) -> None:
    """Ten times the calls reach events about ten times rarer (between 5 and 20 times)."""
    bug = BUGS["CuratorAttack"]
    small, large = (
        cf.audit_mechanism(bug, 0.0, 1.0, calls=calls, ledger=ledger, seed=seed + k, progress=False)
        for k, calls in enumerate((100_000, 1_000_000))
    )
    ratio = smallest_event_probability(small) / smallest_event_probability(large)
    assert 5.0 < ratio < 20.0
    assert smallest_event_probability(large) < 1e-3


def test_cli_audits_a_bug_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The command audit-mechanism NaNThroughClip refutes its claim and the report states its reach."""
    import json

    code = main([
        "audit-mechanism", "NaNThroughClip", "--calls", "40000", "--json",
        "--ledger", str(tmp_path / "cli.ledger"), "--out", str(tmp_path / "report"),
    ])
    assert code == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["verdict"] == "Refuted" and summary["claimed_epsilon"] == 0.1
    assert 0.0 < summary["smallest_event_probability"] < 0.01
    assert "## Reach" in (tmp_path / "report" / "mechanism.md").read_text()


def test_a_bug_entry_whose_exact_loss_does_not_exceed_its_claim_is_refused() -> None:
    """Construction checks that the recorded exact loss violates the claim, and the field types."""
    good = BUGS["UnclampedBounds"]
    fields = {
        "name": "X", "claimed_epsilon": 0.1, "claimed_delta": 0.0, "input_pairs": good.input_pairs,
        "true_epsilon": 0.6, "true_epsilon_note": "n", "source": "s", "published": (),
        "output_dim": 1, "sampler": samplers.unclamped_count,
    }
    assert BugMechanism(**fields).true_epsilon == 0.6  # type: ignore[arg-type]
    for change, fragment in (({"true_epsilon": 0.1}, "above the claim"),
                             ({"output_dim": 0}, "output_dim"),
                             ({"published": [1.0]}, "PublishedBound"),
                             ({"claimed_delta": 1.0}, "claimed_delta")):
        with pytest.raises(cf.ParameterError, match=fragment):
            BugMechanism(**{**fields, **change})  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_many_valued_histogram_is_cut_on_held_out_calls(ledger: cf.Ledger) -> None:
    """At 1e7 calls, seed 10, the unclamped count is certified near its exact 0.6 (it was 0).

    Ordered and cut on the same development calls, the histogram of about 220 values chose a
    tail of values counted a few times each; cut on held-out calls it finds the real tail.
    """
    bug = BUGS["UnclampedBounds"]
    audit = cf.audit_mechanism(bug, inputs=list(bug.input_pairs), calls=10**7, ledger=ledger,
                               seed=10, progress=False)
    assert 0.55 < audit.certificate.epsilon_lower <= 0.6
