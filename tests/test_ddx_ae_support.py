"""An exclusion in the transcript needs support (issue 22, the audit's ``all_excluded`` turns;
docs/ddx/ddx_scoring.md "What a knows-nothing system can no longer raise", rule 2): a ground truth ruled out
in the transcript is AE only when the diagnosis was considered first, put forward (named in no negated and
no conditional scope) in an earlier sentence that cites a finding of the case, or when the ruling-out
sentence itself gives a finding of the case as its reason. Otherwise it is an FN saying why. By hand.
"""

from __future__ import annotations

import pytest

from clineval.core.output import DifferentialItem as D
from clineval.core.output import TranscriptTurn as T
from clineval.ddx.classes import DdxDecision
from clineval.ddx.scorer import classify_differential, ddx_scores
from clineval.text.assertion import Passage, ruled_out_mentions, target_mentions

CASE = "A 19-year-old has fever and a headache for a day. There is no neck stiffness; no rash."
GT = ["viral infection", "bacterial meningitis"]
RULED_OUT = "Bacterial meningitis is ruled out."
Decided = tuple[DdxDecision, float]


def _meningitis(*texts: str, mode: str = "transcript", diff: list[D] | None = None) -> Decided:
    """The decision on bacterial meningitis (not in the list) and the case's CRQ, one turn per text."""
    turns = [T(round=i, agent="critic", phase="debate", text=t) for i, t in enumerate(texts, start=1)]
    items = diff if diff is not None else [D(diagnosis="Viral infection")]
    c = classify_differential(GT, items, turns, case_text=CASE, caa_support=mode)  # type: ignore[arg-type]
    d = next(x for x in c.decisions if x.ground_truth == "bacterial meningitis")
    crq = ddx_scores(c)["clinical_reasoning_quality"]
    assert isinstance(crq, float)
    return d, crq


def test_a_bare_ruling_out_is_no_exclusion() -> None:
    d, crq = _meningitis(RULED_OUT)
    assert d.cls == "FN" and crq == pytest.approx(1 / 2)  # (1 TP + 0 AE) / 2 ground truths; was 2 / 2
    assert d.explanation.startswith("ruled out without support: the transcript rules it out (1 mention(s)")
    assert d.evidence[0].text == RULED_OUT and d.evidence[0].trigger == "is ruled out"
    old, crq = _meningitis(RULED_OUT, mode="label")  # the behaviour before: any ruled-out mention
    assert old.cls == "AE" and crq == pytest.approx(1.0)


def test_put_forward_with_a_finding_then_ruled_out_is_ae() -> None:
    d, crq = _meningitis("Bacterial meningitis is possible given the fever and headache.", RULED_OUT)
    assert d.cls == "AE" and crq == pytest.approx(1.0)  # (1 TP + 1 AE) / 2
    assert d.evidence[0].text == RULED_OUT and d.evidence[0].round == 2
    assert d.evidence[0].trigger == "is ruled out; put forward in round 1 citing fever, headache"
    # put forward without a finding: still bare (the audit's "X is a possible diagnosis." turn)
    assert _meningitis("Bacterial meningitis is a possible diagnosis.", RULED_OUT)[0].cls == "FN"
    # the order counts: put forward only after it was ruled out
    later = "Bacterial meningitis is possible given the fever and headache."
    assert _meningitis(RULED_OUT, later)[0].cls == "FN"
    # a to-do, then done: "must be ruled out" puts it forward (possible, not supposed)
    todo = "Bacterial meningitis must be ruled out given the fever and headache."
    assert _meningitis(todo, RULED_OUT)[0].cls == "AE"
    # a supposition does not put it forward
    supposed = "If bacterial meningitis caused the fever and headache, we would see neck stiffness."
    assert _meningitis(supposed, RULED_OUT)[0].cls == "FN"


def test_a_ruling_out_that_gives_a_finding_of_the_case_is_ae() -> None:
    d, _ = _meningitis("Bacterial meningitis is unlikely: no neck stiffness.")  # the reason after the colon
    assert d.cls == "AE" and d.evidence[0].trigger == "unlikely; cites nuchal rigidity, neck stiffness"
    not_the_case_s = "Bacterial meningitis is unlikely given the normal CSF."
    assert _meningitis(not_the_case_s)[0].cls == "FN"


def test_a_quotation_or_a_shotgun_puts_nothing_forward() -> None:
    quoted = "Bacterial meningitis is possible: a 19-year-old has fever and a headache for a day."  # 12 words
    assert _meningitis(quoted, RULED_OUT)[0].cls == "FN"
    diff = [D(diagnosis=n) for n in ("Viral infection", "Migraine", "Sinusitis")]
    three = "Bacterial meningitis, migraine, sinusitis and viral infection are possible given the fever."
    assert _meningitis(three, RULED_OUT, diff=diff)[0].cls == "FN"  # 3 of the differential's names: shotgun
    two = "Bacterial meningitis and migraine are possible given the fever."
    assert _meningitis(two, RULED_OUT, diff=diff)[0].cls == "AE"


def test_the_audit_s_excluded_list_with_ruling_out_turns() -> None:
    """The all_excluded stand-in: the frequent names ``excluded``, each ruled out in a sentence of its own
    (and put forward first without a finding): no AE, CRQ 0 / 1 (the label alone: 1 / 1)."""
    names = ["Bacterial meningitis", "Migraine", "Sinusitis"]
    diff = [D(diagnosis=n, status="excluded", reasoning="ruled out") for n in names]
    bare = " ".join(f"{n} is ruled out." for n in names)
    forward = " ".join(f"{n} is a possible diagnosis." for n in names)
    for turns in ([bare], [forward, bare]):
        ts = [T(round=i, agent="critic", phase="debate", text=t) for i, t in enumerate(turns, start=1)]
        c = classify_differential(["bacterial meningitis"], diff, ts, case_text=CASE)
        d = c.decisions[0]
        assert (d.cls, d.status, c.ae_unsupported) == ("FN", "excluded", 1)
        assert d.explanation.startswith("excluded without support: 'Bacterial meningitis' has status")
        assert "putting it forward with a finding of the case" in d.explanation
        assert ddx_scores(c)["clinical_reasoning_quality"] == pytest.approx(0.0)  # 0 / (1 GT + 0 FP)
        label = classify_differential(["bacterial meningitis"], diff, ts, case_text=CASE, caa_support="label")
        assert ddx_scores(label)["clinical_reasoning_quality"] == pytest.approx(1.0)
    # the same excluded item, put forward with a finding of the case first: AE
    put = "Bacterial meningitis is possible given the fever."
    ts = [T(round=1, agent="a", text=put), T(round=2, agent="b", text=bare)]
    c = classify_differential(["bacterial meningitis"], diff, ts, case_text=CASE)
    assert c.decisions[0].cls == "AE" and ddx_scores(c)["clinical_reasoning_quality"] == pytest.approx(1.0)


def test_excluded_items_outside_the_ground_truth_are_not_considered() -> None:
    """Considered = every ground truth + FP + CAA + BROADER: an ``excluded`` name outside the ground truth
    (EXCLUDED) costs nothing and earns nothing, as the diagnoses LDDx teams rule out in their discussion."""
    diff = [D(diagnosis="Viral infection"), D(diagnosis="Migraine", status="excluded")]
    c = classify_differential(["viral infection"], diff, case_text=CASE)
    assert [d.cls for d in c.decisions] == ["TP", "EXCLUDED"] and c.considered == 1
    assert ddx_scores(c)["clinical_reasoning_quality"] == pytest.approx(1.0)  # 1 TP / 1


def test_target_mentions_say_what_was_put_forward_before() -> None:
    text = (
        "If sepsis were present, the lactate would be high. Sepsis is unlikely. Pneumonia must be ruled out. "
        "Pneumonia is ruled out. Asthma is less likely than pneumonia. Asthma is excluded:\nno wheeze."
    )
    read = target_mentions(["sepsis", "pneumonia", "asthma"], [Passage(text, round=3)])
    assert [(m.order, m.put_forward) for m in read.ruled_out["sepsis"]] == [(2, False)]  # "if": supposed
    assert [(m.order, m.put_forward) for m in read.ruled_out["pneumonia"]] == [(4, True)]
    assert [m.order for m in read.put_forward["pneumonia"]] == [3, 5]  # "must be ruled out", the comparison
    assert read.put_forward["sepsis"] == []
    asthma = read.ruled_out["asthma"]
    assert [(m.order, m.put_forward, m.reason) for m in asthma] == [(6, True, "no wheeze.")]
    assert ruled_out_mentions(["asthma"], [Passage(text)])["asthma"] == [
        m.__class__(m.target, m.sentence, m.trigger, Passage(text), True, 6, "no wheeze.") for m in asthma
    ]
    # a heading puts forward with the sentence after it
    listed = target_mentions(["sepsis"], [Passage("**Sepsis:**\nfever and hypotension. Sepsis is unlikely.")])
    assert listed.put_forward["sepsis"][0].sentence == "**Sepsis:** fever and hypotension."
