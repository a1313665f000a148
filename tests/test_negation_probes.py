"""Negation of an action is not the action (issue 22 item 11): probes for each negation cue, on both sides.

An action named as contraindicated, withheld, avoided or stopped is never read as recommending it:

* forbidden side: a high-risk PE two weeks after hip surgery (thrombolysis forbidden, ESC 2019 table 10)
  whose recommendation names thrombolysis only under a cue stays adherent (UFH + embolectomy given);
* required side: a COPD exacerbation (GOLD: SABA + systemic corticosteroid) whose recommendation names
  prednisolone only under a cue misses the corticosteroid.

Lookalikes, where a cue word does not scope over the action ("avoid delay: give thrombolysis now"), must
still count the action: the forbidden thrombolysis fails the PE case, the prednisolone passes the COPD one.
Every outcome below was decided by reading the sentence, not by running the engine.
"""

from __future__ import annotations

import pytest

from clineval.cds.rules.engine import evaluate_rules
from clineval.cds.rules.negation import affirmed_parts
from tests.test_guideline_probes import AECOPD, PE_POSTOP, PE_SHOCK

UFH, EMBOLECTOMY, SABA = "UFH bolus then infusion", "Surgical embolectomy", "Nebulised salbutamol 5 mg"
STEROID = "systemic corticosteroid"
THROMBOLYSIS = "systemic thrombolysis"

# (cue, the sentence with X for the action): the cue scopes over X
CUES: list[tuple[str, str]] = [
    ("X contraindicated", "X contraindicated: major surgery 2 weeks ago"),
    ("X is contraindicated", "X is contraindicated"),
    ("(X contraindicated)", "Monitor closely (X contraindicated)"),
    ("X: contraindicated", "X: contraindicated"),
    ("contraindication to X", "Absolute contraindication to X"),
    ("avoid X", "Avoid X"),
    ("avoiding X", "Avoiding X for now"),
    ("hold X", "Hold X"),
    ("X on hold", "X on hold"),
    ("X held", "X held for now"),
    ("no X because ...", "No X because of the recent operation"),
    ("no X", "No X"),
    ("do not give X", "Do not give X"),
    ("don't start X", "Don't start X"),
    ("should not give X", "You should not give X"),
    ("X should not be given", "X should not be given"),
    ("X is not indicated", "X is not indicated"),
    ("X not recommended", "X not recommended here"),
    ("X is not appropriate", "X is not appropriate"),
    ("discontinue X", "Discontinue X"),
    ("X discontinued", "X discontinued"),
    ("stop X", "Stop X"),
    ("X stopped", "X stopped on admission"),
    ("withhold X", "Withhold X"),
    ("X withheld", "X withheld"),
    ("X should be avoided", "X should be avoided"),
    ("not a candidate for X", "Not a candidate for X"),
    ("unsuitable for X", "Unsuitable for X"),
    ("never X", "Never X in this setting"),
    ("instead of X", "Supportive care instead of X"),
    ("rather than X", "Supportive care rather than X"),
    ("without X", "Supportive care without X"),
    ("patient declined X", "Patient declined X"),
    ("X refused", "X refused by the patient"),
    ("X unsafe", "X unsafe at present"),
    ("defer X", "Defer X"),
    ("X are contraindicated (list)", "NSAIDs and X are contraindicated"),
    ("X cannot be given", "X cannot be given here"),
    ("unable to give X", "Unable to give X"),
    ("patient refuses X", "The patient refuses X"),
]

# Lookalikes: a cue word whose scope does not reach X (X stays recommended)
LOOKALIKES: list[tuple[str, str]] = [
    ("avoid delay: give X now", "Avoid delay: give X now"),
    ("do not delay X", "Do not delay X"),
    ("avoid delaying X", "Avoid delaying X"),
    ("X without delay", "Give X without delay"),
    ("X should not be delayed", "X should not be delayed"),
    ("no contraindication to X", "No contraindication to X: give it now"),
    ("X is not contraindicated", "X is not contraindicated"),
    ("do not stop X", "Do not stop X"),
    ("hold pressure ..., start X", "Hold pressure on the puncture site, start X"),
    ("avoid hypotension, give fluids and X", "Avoid hypotension, give fluids and X"),
    ("avoid NSAIDs and give X", "Avoid NSAIDs and give X"),
    ("stop the bleeding ..., then X", "Stop the bleeding at the line site, then X"),
    ("no delay in giving X", "No delay in giving X"),
    ("X, no more than ...", "X, no more than one dose"),
    ("no other cause: give X", "No other cause found: give X"),
    ("X as no contraindication", "X as there is no contraindication"),
    ("X (avoid hypotension)", "X (avoid hypotension)"),
    ("we cannot delay X", "We cannot delay X"),
]

FORBIDDEN_X, REQUIRED_X = "systemic thrombolysis with alteplase", "oral prednisolone 30 mg"


def rule_result(
    patient: dict[str, object], actions: list[str], rule: str
) -> tuple[bool | None, list[str], list[str]]:
    sections = {"recommended_actions": actions, "when_to_escalate": []}
    r = next(r for r in evaluate_rules(patient, sections) if r.rule_id == rule)
    return r.adherent, list(r.missing), [f["forbidden"] for f in r.forbidden]


@pytest.mark.parametrize(("cue", "template"), CUES, ids=[c for c, _ in CUES])
def test_a_negated_forbidden_action_is_not_recommended(cue: str, template: str) -> None:
    text = template.replace("X", FORBIDDEN_X)
    assert rule_result(PE_POSTOP, [UFH, EMBOLECTOMY, text], "pe_high_risk") == (True, [], []), text


@pytest.mark.parametrize(("cue", "template"), CUES, ids=[c for c, _ in CUES])
def test_a_negated_required_action_is_missing(cue: str, template: str) -> None:
    text = template.replace("X", REQUIRED_X)
    assert rule_result(AECOPD, [SABA, text], "copd_exacerbation_acute") == (False, [STEROID], []), text


@pytest.mark.parametrize(("cue", "template"), LOOKALIKES, ids=[c for c, _ in LOOKALIKES])
def test_a_lookalike_still_recommends_the_forbidden_action(cue: str, template: str) -> None:
    text = template.replace("X", FORBIDDEN_X)
    found = rule_result(PE_POSTOP, [UFH, EMBOLECTOMY, text], "pe_high_risk")
    assert found == (False, [], [THROMBOLYSIS]), text


@pytest.mark.parametrize(("cue", "template"), LOOKALIKES, ids=[c for c, _ in LOOKALIKES])
def test_a_lookalike_still_recommends_the_required_action(cue: str, template: str) -> None:
    text = template.replace("X", REQUIRED_X)
    assert rule_result(AECOPD, [SABA, text], "copd_exacerbation_acute") == (True, [], []), text


ISSUE = (
    "Surgical embolectomy or catheter-directed therapy "
    "(systemic thrombolysis contraindicated: major surgery 2 weeks ago)"
)


def test_the_issue_recommendation_is_adherent() -> None:
    # measured on main (411f9a3): non-adherent (the whole line was skipped, embolectomy with it)
    assert rule_result(PE_POSTOP, ["UFH infusion", ISSUE], "pe_high_risk") == (True, [], [])
    assert rule_result(PE_SHOCK, ["UFH infusion", ISSUE], "pe_high_risk") == (True, [], [])
    # the negated part is cut out, the rest of the line stays
    assert affirmed_parts(ISSUE) == (
        "Surgical embolectomy or catheter-directed therapy (",
        ": major surgery 2 weeks ago)",
    )


def test_a_negation_reaches_only_its_own_part_of_a_line() -> None:
    # the cue after the action stops at the comma (singular); the one before it at "start"
    assert rule_result(PE_POSTOP, ["Start UFH, thrombolysis contraindicated", EMBOLECTOMY], "pe_high_risk")[0]
    assert rule_result(PE_POSTOP, ["Avoid thrombolysis, start UFH", EMBOLECTOMY], "pe_high_risk")[0]
    # a negated alternative does not veto the named one ("UFH, not LMWH" is UFH)
    assert rule_result(PE_POSTOP, ["UFH infusion, not LMWH", EMBOLECTOMY], "pe_high_risk") == (True, [], [])
    # a plural cue covers the list; a singular one its own item
    assert affirmed_parts("Salbutamol, ipratropium and prednisolone are contraindicated") == ()
    assert affirmed_parts("Salbutamol, prednisolone contraindicated") == ("Salbutamol,",)


def test_every_cue_and_lookalike_in_the_brief_is_probed() -> None:
    named = {c for c, _ in CUES} | {c for c, _ in LOOKALIKES}
    brief = {
        "X contraindicated", "avoid X", "hold X", "no X because ...", "do not give X",
        "X is not indicated", "discontinue X", "withhold X", "X should be avoided",
        "not a candidate for X", "avoid delay: give X now",
    }  # fmt: skip
    assert brief <= named
