"""The four-tier metrics a knows-nothing system cannot raise (issue 22; the audit's CDS findings 5-9 in
docs/runs/audit.md), each checked on hand-built cases with hand-computed values:

* tier 3: adherence requires specificity (off-target rule actions <= max(2, on-target));
* tier 2: a guideline citation counts when cited and relevant to its action;
* tier 1: escalation judged over every case (balanced accuracy), contraindication checks specific to the
  patient; the presence and recall figures are tracked, the runtime guard unchanged;
* severity kappa's interval never claims certainty; the gate roles of the new and demoted metrics.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import pytest

from clineval.analysis.gate_roles import default_role
from clineval.cds.golden.severity import SeverityKappa
from clineval.cds.guard import check
from clineval.cds.retrieval.scorer import GuidelineCitationScorer
from clineval.cds.rules.guidelines import GuidelineAdherenceScorer, GuidelineOptions
from clineval.cds.rules.model import packaged_rules
from clineval.cds.rules.specificity import specificity
from clineval.core import Case, CaseInput, Reference, Score, ScoringContext, StructuredOutput, SystemOutput
from clineval.scoring.registry import SCORERS

# Heart failure, congested (BNP 900, oedema), EF 55%: chf_loop_diuretic applies; hfref_gdmt is the
# patient's condition but not applicable (EF > 40); K+ 4.1: the hyperkalaemia rule is known not to apply.
HF = {
    "age": 70,
    "sex": "female",
    "conditions": ["heart failure"],
    "labs": [
        {"name": "BNP", "value": 900, "unit": "pg/mL"},
        {"name": "creatinine", "value": 110, "unit": "umol/L"},
        {"name": "potassium", "value": 4.1, "unit": "mmol/L"},
    ],
    "vitals": {"sbp": 118, "hr": 88, "spo2": 86},
    "ef": 55,
    "note": "Bilateral peripheral oedema.",
    "medications": ["ramipril", "furosemide 40 mg daily"],
    "allergies": ["penicillin (rash)"],
}


def _output(actions: list[Any], **fields: Any) -> SystemOutput:
    rows = [a if isinstance(a, dict) else {"action": a, "evidence_refs": ["g"]} for a in actions]
    table = fields.pop("evidence_table", [{"id": "g", "source_type": "guideline", "text": "x"}])
    data = {"recommended_actions": rows, "evidence_table": table, **fields}
    return SystemOutput(structured=StructuredOutput.model_validate(data))


def _ctx(output: SystemOutput, patient: dict[str, Any] | None = None, **reference: Any) -> ScoringContext:
    data = {"patient": patient} if patient is not None else {}
    case = Case(
        id="c",
        input=CaseInput(question="next steps?", data=data),
        reference=Reference(data=reference),
        metadata={"query_type": "treatment"},
    )
    return ScoringContext(case=case, output=output)


# -- tier 3: specificity -----------------------------------------------------------------------------------
def _spec(actions: list[str], escalate: list[str] | None = None) -> dict[str, Any]:
    sections = {"recommended_actions": actions, "when_to_escalate": escalate or []}
    return specificity(HF, sections, packaged_rules("v2"))


def test_off_target_actions_are_counted_against_a_bound() -> None:
    assert _spec(["Start IV furosemide"]) == {
        "specific": True,
        "on_target": ["loop diuretic"],
        "off_target": [],
        "off_target_allowed": 2,
    }
    # two actions of other conditions: within max(2, 1 on target)
    two = _spec(["Start IV furosemide", "Primary PCI", "Non-invasive ventilation"])
    assert two["specific"] and sorted(two["off_target"]) == ["non-invasive ventilation", "primary pci"]
    # insulin and glucose (the hyperkalaemia rule, K+ 4.1 here) make four > 2
    four = _spec(["Start IV furosemide", "Primary PCI", "Non-invasive ventilation", "Insulin with glucose"])
    assert not four["specific"] and len(four["off_target"]) == 4 and four["off_target_allowed"] == 2
    # the four HF pillars are the patient's condition (not required at EF 55%, not off target either):
    # 5 on target allow 5 off target
    pillars = ["IV furosemide", "bisoprolol", "dapagliflozin", "spironolactone", "sacubitril/valsartan"]
    many = _spec([*pillars, "Primary PCI", "Non-invasive ventilation", "Insulin with glucose"])
    assert len(many["on_target"]) == 5 and len(many["off_target"]) == 4 and many["specific"]


def test_hedges_escalations_negations_and_contingencies() -> None:
    # "consider X" names X: PCI, thrombolysis and NIV off target, 3 > 2 ("thrombolysis" names two catalogue
    # entries, systemic thrombolysis and fibrinolysis: one term, counted once)
    hedged = _spec(
        [f"Consider {x} if appropriate" for x in ("furosemide", "primary PCI", "thrombolysis", "NIV")]
    )
    assert hedged["on_target"] == ["loop diuretic"] and not hedged["specific"]
    assert hedged["off_target"] == ["systemic thrombolysis", "non-invasive ventilation", "primary pci"]
    # an escalation is a recommendation: three off-target ones in when_to_escalate
    escalated = _spec(["Start IV furosemide"], ["Primary PCI", "NIV", "IV calcium"])
    assert escalated["off_target"] == ["non-invasive ventilation", "primary pci", "iv calcium"]
    assert not escalated["specific"]
    # a contingency plan and a negated action name nothing
    plans = _spec(["Start IV furosemide", "Thrombolysis if he deteriorates", "Avoid insulin"])
    assert plans["off_target"] == []


def test_a_term_of_the_patients_own_action_is_not_off_target() -> None:
    """ "Amoxicillin" for a pneumonia names the CAP rules' amoxicillin (on target) and, through the same term,
    the COPD rule's "antibiotic" (another condition): the term is the patient's action, counted once."""
    pneumonia = {"age": 40, "conditions": ["community-acquired pneumonia"], "vitals": {"rr": 20}, "labs": []}
    sections = {"recommended_actions": ["Oral amoxicillin"]}
    found = specificity(pneumonia, sections, packaged_rules("v2"))
    assert found["on_target"] == ["amoxicillin"] and found["off_target"] == []
    # for heart failure the same line is off target once, not twice
    assert _spec(["Start IV furosemide", "Oral amoxicillin"])["off_target"] == ["amoxicillin"]


def test_guideline_adherence_requires_specificity() -> None:
    scorer = GuidelineAdherenceScorer()
    good = scorer(_ctx(_output(["Start IV furosemide"]), HF))
    shotgun = ["Start IV furosemide", "Primary PCI", "Non-invasive ventilation", "Insulin with glucose"]
    bad = scorer(_ctx(_output(shotgun), HF))
    assert (good.value, good.label) == (1.0, "adherent")
    assert (bad.value, bad.label) == (0.0, "non_adherent")
    assert bad.breakdown["adherent_rules"] == ["chf_loop_diuretic"]  # the rule itself is adherent
    assert "4 actions for conditions the patient does not have (at most 2)" in (bad.explanation or "")
    # the design table: the same reading with its own catalogue
    design = GuidelineAdherenceScorer(GuidelineOptions(ruleset="design_table"))
    assert design(_ctx(_output(["Start IV furosemide"]), HF)).value == 1.0
    dt_shotgun = ["IV furosemide", "Cath lab", "Thrombolysis", "Salbutamol", "Dialysis"]
    assert design(_ctx(_output(dt_shotgun), HF)).value == 0.0


# -- tier 2: guideline citation relevance ------------------------------------------------------------------
def test_a_guideline_citation_counts_when_cited_and_relevant() -> None:
    output = _output(
        [
            {"action": "Start IV furosemide", "evidence_refs": ["g1", "g2"]},
            {"action": "Oral amoxicillin", "evidence_refs": ["g4", "g5"]},
        ],
        evidence_table=[
            {"id": "g1", "source_type": "guideline", "doc_id": "ESC 2021 heart failure guideline"},
            {"id": "g2", "source_type": "guideline", "text": "Clinical practice guideline"},
            {"id": "g3", "source_type": "guideline", "text": "Loop diuretics for congestion"},
            {"id": "g4", "source_type": "guideline", "text": "Amoxicillin is first line"},
            {"id": "g5", "source_type": "guideline", "doc_id": "NICE NG138 pneumonia"},
        ],
    )
    score = GuidelineCitationScorer()(_ctx(output, HF))
    assert score.value == 1.0 and score.breakdown["ids"] == ["g1", "g4", "g5"]
    assert score.breakdown["relevance"] == {
        "g1": "guideline of chf_loop_diuretic",  # esc, 2021, heart, failure
        "g4": "action terms",  # amoxicillin
        "g5": "guideline of cap_curb65_low",  # nice, ng138, pneumonia
    }
    assert score.breakdown["uncited"] == ["g3"] and score.breakdown["irrelevant"] == ["g2"]
    generic = _output(
        [{"action": "Start IV furosemide", "evidence_refs": ["a", "b"]}],
        evidence_table=[
            {"id": "a", "source_type": "guideline", "text": "Clinical practice guideline"},
            {"id": "b", "source_type": "guideline", "doc_id": "guideline-2", "text": "Guideline"},
        ],
    )
    none = GuidelineCitationScorer()(_ctx(generic, HF))
    assert (none.value, none.label, none.breakdown["irrelevant"]) == (0.0, "too_few_guidelines", ["a", "b"])


def test_retrieved_guidelines_count_where_judged_relevant() -> None:
    retrieved = [{"doc_id": d, "source_type": "guideline", "score": 1.0} for d in ("d1", "d2", "d3", "d4")]
    output = SystemOutput(structured=StructuredOutput.model_validate({"retrieved": retrieved}))
    judged = GuidelineCitationScorer()(_ctx(output, qrels={"d1": 2, "d2": 0, "d4": 1}))
    assert judged.value == 1.0 and judged.breakdown["ids"] == ["d1", "d4"]
    assert judged.breakdown["irrelevant"] == ["d2", "d3"]
    unjudged = GuidelineCitationScorer()(_ctx(output))  # no qrels: every guideline doc counts, as before
    assert unjudged.breakdown["n_guideline"] == 4


# -- tier 1: escalation over every case ----------------------------------------------------------------------
PE_SHOCK = {"conditions": ["pulmonary embolism"], "vitals": {"sbp": 80, "hr": 120}, "labs": []}
STABLE = {"conditions": ["community-acquired pneumonia"], "vitals": {"sbp": 128, "hr": 90}, "labs": []}


def _wilson(k: int, n: int, z: float) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (0.0 if k == 0 else centre - half, 1.0 if k == n else centre + half)


def test_escalation_balanced_accuracy_counts_over_escalation() -> None:
    scorer = SCORERS.get("escalation")({})
    escalate = _output(["Start UFH"], when_to_escalate="Thrombolysis now; ICU")
    safety_net = _output(["Amoxicillin"], when_to_escalate="ICU if he deteriorates")
    silent = _output(["Amoxicillin"])
    failed = SystemOutput.failure("timeout", "slow")
    scores = [
        scorer(_ctx(escalate, PE_SHOCK)),  # needed, escalated: correct
        scorer(_ctx(escalate, PE_SHOCK)),  # correct
        scorer(_ctx(silent, PE_SHOCK)),  # needed, missing: wrong
        scorer(_ctx(silent, STABLE)),  # not needed, not escalated: correct
        scorer(_ctx(silent, STABLE)),  # correct
        scorer(_ctx(safety_net, STABLE)),  # names ICU: an escalation, wrong
        scorer(_ctx(failed, STABLE)),  # a failed call: wrong
    ]
    assert [s.breakdown["escalation_needed"] for s in scores] == [True] * 3 + [False] * 4
    correct = [s.breakdown["escalation_correct"] for s in scores]
    assert correct == [True, True, False, True, True, False, False]
    assert [s.label for s in scores[3:]] == ["not_applicable"] * 4  # the check itself: as before
    metrics: dict[str, Any] = {}
    for metric in scorer.metrics:
        metrics.update(metric.compute(scores))
    assert metrics["guardrail_recall"] == pytest.approx(2 / 3)  # tracked, unchanged
    assert metrics["escalation_specificity"] == pytest.approx(2 / 4)
    assert metrics["escalation_balanced_accuracy"] == pytest.approx((2 / 3 + 2 / 4) / 2)  # 0.5833
    z = NormalDist().inv_cdf(1 - 0.05 / 4)  # each rate at 97.5%
    (lo1, hi1), (lo0, hi0) = _wilson(2, 3, z), _wilson(2, 4, z)
    assert metrics["escalation_balanced_accuracy_ci"] == pytest.approx([(lo1 + lo0) / 2, (hi1 + hi0) / 2])


def test_constant_escalation_gets_one_half_and_the_guard_is_unchanged() -> None:
    scorer = SCORERS.get("escalation")({})
    always = _output(["x"], when_to_escalate="Senior review; ICU; thrombolysis")
    for output, recall in ((always, 1.0), (_output(["x"]), 0.0)):
        scores = [scorer(_ctx(output, p)) for p in (PE_SHOCK, PE_SHOCK, STABLE, STABLE, STABLE)]
        metrics: dict[str, Any] = {}
        for metric in scorer.metrics:
            metrics.update(metric.compute(scores))
        assert metrics["guardrail_recall"] == recall and metrics["escalation_balanced_accuracy"] == 0.5
        lo, hi = metrics["escalation_balanced_accuracy_ci"]
        assert lo < 0.5 < hi
    # only red-flag cases: undefined
    only = [scorer(_ctx(always, PE_SHOCK))]
    undefined = scorer.metrics[-1].compute(only)["escalation_balanced_accuracy"]
    assert isinstance(undefined, float) and math.isnan(undefined)
    # the runtime guard does not fail an escalation on a patient without red flags
    assert check(always.structured or StructuredOutput(), patient=STABLE).passed


# -- tier 1: contraindication checks specific to the patient ------------------------------------------------
def _specific(checked: list[str], actions: list[Any] | None = None, patient: dict[str, Any] = HF) -> Score:
    rows = actions or [
        {"action": "Start IV furosemide", "category": "medication", "evidence_refs": ["g"]},
        {"action": "Start bisoprolol", "evidence_refs": ["g"]},
        {"action": "Chest X-ray", "category": "investigation", "evidence_refs": ["g"]},
    ]
    scorer = SCORERS.get("contraindications")({})
    return scorer(_ctx(_output(rows, contraindications_checked=checked), patient))


def test_generic_categories_pass_the_presence_check_only() -> None:
    generic = _specific(["allergies", "renal function", "hepatic function", "drug interactions", "pregnancy"])
    assert generic.label == "pass" and generic.breakdown["specific"] is False
    assert generic.breakdown["unchecked"] == ["Start IV furosemide", "Start bisoprolol"]
    good = _specific(["Furosemide: creatinine 110 umol/L", "bisoprolol: SBP 118, HR 88"])
    assert good.breakdown["specific"] is True
    assert good.breakdown["facts"] == [
        "lab: Furosemide: creatinine 110 umol/L",
        "vital: bisoprolol: SBP 118, HR 88",
    ]
    # the drug alone (the patient already takes furosemide) and a vital without its value are no check
    vague = _specific(["furosemide", "bisoprolol: heart rate fine"])
    assert vague.breakdown["specific"] is False and len(vague.breakdown["unchecked"]) == 2
    # an interaction with a current medication covers both drugs named
    assert _specific(["furosemide and bisoprolol: no interaction with ramipril"]).breakdown["specific"]


def test_allergies_and_medications_by_category() -> None:
    amoxicillin = [{"action": "Oral amoxicillin", "evidence_refs": ["g"]}]
    assert _specific(["amoxicillin: penicillin allergy (rash) noted"], amoxicillin).breakdown["specific"]
    no_allergy = {**HF, "allergies": ["none known"]}
    claim = _specific(["amoxicillin: no known allergies"], amoxicillin, no_allergy)
    assert claim.breakdown["specific"] is False  # true of most patients: no check of this one
    venturi = "Controlled oxygen via Venturi mask"
    oxygen = [{"action": venturi, "category": "medication", "evidence_refs": ["g"]}]
    assert _specific(["oxygen: SpO2 86 on air, COPD"], oxygen).breakdown["specific"]
    assert _specific(["oxygen: saturations checked"], oxygen).breakdown["specific"] is False
    rate = SCORERS.get("contraindications")({}).metrics[-1]
    scores = [_specific(["renal function"]), _specific(["furosemide, bisoprolol: creatinine 110"])]
    assert rate.compute(scores)["contraindications_specific_rate"] == 0.5


# -- severity kappa interval, gate roles ---------------------------------------------------------------------
def _pairs(expected: list[str], predicted: list[str]) -> list[Score]:
    return [
        Score(value=float(e == p), breakdown={"expected": e, "predicted": p})
        for e, p in zip(expected, predicted, strict=True)
    ]


def test_severity_kappa_interval_never_claims_certainty() -> None:
    n = 20
    u = 1.959963984540054**2 / (n + 1.959963984540054**2)  # Wilson bound of 0 events in n
    levels = ["low", "moderate", "high", "critical"] * 5
    agree = SeverityKappa().compute(_pairs(levels, levels))
    assert agree["severity_kappa"] == 1.0
    assert agree["severity_kappa_ci"] == pytest.approx([1 - 2 * u, 1.0])  # bounds [-1, 1]
    constant = SeverityKappa().compute(_pairs(levels, ["moderate"] * n))
    assert constant["severity_kappa"] == 0.0
    assert constant["severity_kappa_ci"] == pytest.approx([-u, u])


@pytest.mark.parametrize(
    ("key", "tier", "role"),
    [
        ("contraindications_pass_rate", 1, "track"),  # a tracked rule wins over the tier
        ("contraindications_specific_rate", 1, "gate"),
        ("escalation_pass_rate", 1, "track"),
        ("guardrail_recall", 1, "track"),
        ("escalation_balanced_accuracy", 1, "gate"),
        ("escalation_specificity", 1, "track"),
        ("evidence_type_coverage", 2, "track"),
        ("guideline_citation_rate", 2, "gate"),
        ("schema_pass_rate", 1, "gate"),
        ("guideline_adherence", 3, "gate"),
        ("design_table_adherence", 3, "track"),
    ],
)
def test_gate_roles(key: str, tier: int, role: str) -> None:
    assert default_role(key, tier) == role
