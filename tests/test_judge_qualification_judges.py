"""Scripted judges on the simulated labelled golden set: constant (κ 0, not qualified), oracle (κ 1,
qualified), position-biased (caught by order sensitivity), noisy (caught by stability)."""

from __future__ import annotations

import json

import pytest

from clineval.judging.qualification import KappaUndefinedError, Thresholds, as_dict, qualify
from tests.judge_qualification_sim import (
    Item,
    Judge,
    ask,
    constant,
    labels_for,
    noisy,
    oracle,
    position_biased,
    world,
)

K = 3


def run(judge: Judge, items: list[Item], **labels_options: object):
    labels = labels_for(items, **labels_options)  # type: ignore[arg-type]
    return qualify(labels, ask(judge, items, K), ask(judge, items, K, reorder=True), seed=11)


@pytest.fixture(scope="module")
def items() -> list[Item]:
    return world()


def group(result, name):
    return next(g for g in result.groups if g.figures.group == name)


def test_constant_judge_has_kappa_exactly_zero_and_is_not_qualified(items: list[Item]) -> None:
    result = run(constant, items)
    assert not result.qualified and result.exit_code == 1
    for g in result.groups:
        assert (
            g.figures.agreement.kappa.kappa == 0.0
        )  # exactly: the clinician labels vary, the judge does not
        assert any(r.startswith("kappa 0.000 < 0.6") for r in g.reasons)
        assert g.figures.agreement.kappa.interval is None  # no sampling interval: zero by construction
        assert g.figures.stability.flip_rate == 0.0 and g.figures.order.share == 0.0  # steady, and useless
    assert len(result.groups) == 5  # four dimensions and the pooled rubric


def test_oracle_has_kappa_one_and_qualifies(items: list[Item]) -> None:
    result = run(oracle, items)
    assert result.qualified and result.exit_code == 0 and result.reasons == []
    for g in result.groups:
        fig = g.figures.agreement.kappa
        assert fig.kappa == 1.0 and fig.n == g.figures.compared == g.figures.labelled
        low, high = fig.interval
        assert high == 1.0 and 0.4 < low < 1.0  # never [1, 1]: 102 or 306 items cannot prove perfection
        assert g.figures.agreement.bias.value == 0.0


def test_position_biased_judge_is_caught_by_order_sensitivity_alone(items: list[Item]) -> None:
    result = run(position_biased, items)
    assert not result.qualified
    for g in result.groups:
        # in the original order it agrees perfectly and is perfectly stable: only the permutation shows it
        assert g.figures.agreement.kappa.kappa == 1.0 and g.figures.stability.flip_rate == 0.0
        assert g.figures.order.share > 0.2  # grades: ~3/4 of items; rubric: the met half, ~half of those
        assert [r.split(" ")[:2] for r in g.reasons] == [["order", "sensitivity"]]


def test_noisy_judge_is_caught_by_stability(items: list[Item]) -> None:
    result = run(noisy(0.2), items)
    assert not result.qualified
    for g in result.groups:
        st = g.figures.stability
        assert st.flip_rate > 0.4  # 1 - 0.8³ ≈ 0.49 of items have a dissenting sample
        assert st.sample_flip_rate < st.flip_rate  # clineval's per-sample figure is smaller
        assert any(r.startswith("flip rate") for r in g.reasons)
        if g.figures.order.share > 0.1:
            assert "sampling noise" in " ".join(g.notes)
        # its majority of 3 still agrees well: κ alone would have qualified it
        assert g.figures.agreement.kappa.kappa > 0.6


def test_a_judge_within_every_threshold_passes_with_a_small_noise(items: list[Item]) -> None:
    result = run(noisy(0.02), items)
    assert result.qualified, result.reasons


def test_labels_without_variance_are_bad_input(items: list[Item]) -> None:
    flat = [Item(i.key, i.parts, 4 if i.key[0] == "grade" else i.truth) for i in items]
    with pytest.raises(
        KappaUndefinedError, match=r"coherence \(grade\): every one of the 102 clinician labels is 4"
    ):
        run(oracle, flat)


def test_several_clinicians_give_a_ceiling_and_the_judge_a_comparable_figure(items: list[Item]) -> None:
    result = run(oracle, items, reviewers=("dr_a", "dr_b", "dr_c"), noise=0.25)
    g = group(result, "coherence")
    ceiling = g.figures.ceiling
    assert g.figures.reviewers == 3 and len(ceiling.clinician_pairs) == 3 and len(ceiling.judge_pairs) == 3
    # the oracle knows the truth; each clinician is noisy: the judge beats the clinicians' mutual agreement
    assert ceiling.judge > ceiling.clinicians
    # against the consensus (median of 3) the oracle agrees better than against any single clinician
    assert g.figures.agreement.kappa.kappa > ceiling.judge
    rubric = group(result, "rubric")
    assert rubric.figures.reference_ties == 0  # three reviewers: no tie


def test_thresholds_are_applied_and_the_record_serialises(items: list[Item]) -> None:
    result = qualify(
        labels_for(items),
        ask(noisy(0.2), items, K),
        ask(noisy(0.2), items, K, reorder=True),
        thresholds=Thresholds(max_flip_rate=0.9, max_order_change=0.9),
    )
    assert result.qualified
    record = json.loads(json.dumps(as_dict(result)))
    assert record["qualified"] is True and len(record["labels_hash"]) == 64
    assert record["thresholds"]["max_flip_rate"] == 0.9
    assert {g["group"] for g in record["groups"]} == {
        "coherence",
        "completeness",
        "uncertainty_calibration",
        "differential_consideration",
        "rubric",
    }


def test_without_a_reordered_pass_or_with_one_sample_the_verdict_says_not_measured(items: list[Item]) -> None:
    labels = labels_for(items)
    result = qualify(labels, ask(oracle, items, 1))
    g = result.groups[0]
    assert not result.qualified
    assert "stability not measured (K = 1 samples; at least 2 needed)" in g.reasons
    assert "order sensitivity not measured" in g.reasons


def test_judge_errors_make_items_undecided(items: list[Item]) -> None:
    def failing(item: Item, shown, sample):  # type: ignore[no-untyped-def]
        return None if item.key[1][0].startswith("gs2-pneumonia") else oracle(item, shown, sample)

    result = run(failing, items)
    g = group(result, "coherence")
    assert g.figures.undecided == 15 and g.figures.compared == 87
    assert any("no judge majority on 15 of 102 items" in r for r in g.reasons)
    assert g.figures.stability.error_rate == pytest.approx(15 / 102)


def test_agreement_can_be_measured_on_the_votes_a_run_takes(items: list[Item]) -> None:
    """A task whose scorer asks one sample (rubric's default) is qualified on single samples' agreement;
    stability still uses all K."""
    labels = labels_for(items)
    judge = noisy(0.2)
    three = qualify(labels, ask(judge, items, K), ask(judge, items, K, reorder=True), seed=11)
    one = qualify(labels, ask(judge, items, K), ask(judge, items, K, reorder=True), seed=11, vote_samples=1)
    r3, r1 = group(three, "rubric").figures, group(one, "rubric").figures
    assert r1.agreement.kappa.kappa < r3.agreement.kappa.kappa  # a single sample is noisier than a majority
    assert r1.stability == r3.stability
    assert one.vote_samples == 1 and as_dict(one)["vote_samples"] == 1
    with pytest.raises(ValueError, match="vote_samples"):
        qualify(labels, ask(judge, items, K), vote_samples=0)
