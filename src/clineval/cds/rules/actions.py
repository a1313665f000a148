"""The recommendation side of a guideline rule: is an action, a regimen or a forbidden action named?

A recommendation is a mapping of section name -> texts (``recommended_actions``, ``when_to_escalate``).
Each text is split into clauses (``;``, ``.``, " but "). A negation covers the action it is about, not
the whole clause (``clineval.cds.rules.negation``): "embolectomy (thrombolysis contraindicated)" names
embolectomy and no thrombolysis, "avoid delay: give thrombolysis now" names thrombolysis. A clause names
an action when one of its affirmed parts names the action or one of its synonyms (``rule_patient.names``,
forward only, at ``threshold``; a synonym that itself carries a negation cue, "PCI not available", is read
in the whole clause) and that term is not undercut: a part that also names a ``not_if_naming`` term counts
only through a term that names that term too (so "metoprolol (beta-blocker)" is not an evidence-based
beta-blocker while "metoprolol succinate" is).

* An expected action is found when some clause of the searched sections names it; an ``any_of`` group
  when one alternative is found; a regimen (``all_of``) when every member is found (on any lines).
* A forbidden action is a violation when some clause of *any* section names it (a recommendation to
  thrombolyse written under "when to escalate" is still a recommendation to thrombolyse) and no clause of
  any section names one of its ``unless_with`` companions. A contingency clause ("if", "should", "on" ...
  with a deterioration word: "thrombolysis if haemodynamic deterioration") is not counted.
* Negation is the same for both: an action named as contraindicated, withheld, avoided or stopped is
  never read as recommended, so it neither satisfies a required action nor violates a forbidden one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from clineval.cds.rules.model import (
    _CLAUSE,
    ActionGroup,
    ActionSpec,
    ExpectedAction,
    ForbiddenAction,
    Regimen,
)
from clineval.cds.rules.negation import affirmed_parts, carries_cue
from clineval.cds.rules.patient import names

Sections = Mapping[str, Sequence[str]]
# A contingency plan ("thrombolysis if he deteriorates") is not a recommendation to do it now.
CONTINGENCY = re.compile(
    r"\b(if|in case|in the event|should|on|upon)\b.*\b(deteriorat\w*|decompensat\w*|becomes? unstable|"
    r"unstable|instability|hypotensi\w*|shock|arrest\w*|fails?|failure)\b",
    re.IGNORECASE,
)


def _part_names(part: str, clause: str, spec: ActionSpec, threshold: float) -> str | None:
    """The term of ``spec`` that the affirmed ``part`` of ``clause`` names without being undercut, or
    None (a term carrying a negation cue is looked for in the whole clause)."""
    vetoes = [v for v in spec.not_if_naming if names(part, v)]
    for term in spec.terms:
        text = clause if carries_cue(term) else part
        if names(text, term, threshold) and all(names(term, v) for v in vetoes):
            return term
    return None


def clauses(text: str) -> list[str]:
    """The clauses of a recommendation line (split at ``;``, ``.``, " but "), negation left in."""
    return [c for c in _CLAUSE.split(text) if c.strip()]


def find_action(
    spec: ActionSpec,
    sections: Sections,
    section_names: Sequence[str],
    threshold: float,
    skip: re.Pattern[str] | None = None,
) -> dict[str, str] | None:
    """Where ``spec`` is named: {matched_term, matched_text, section}, or None (clauses matching ``skip``
    are ignored)."""
    for section in section_names:
        for text in sections.get(section, ()):
            for clause in clauses(text):
                if skip is not None and skip.search(clause):
                    continue
                for part in affirmed_parts(clause):
                    term = _part_names(part, clause, spec, threshold)
                    if term is not None:
                        return {"matched_term": term, "matched_text": text[:200], "section": section}
    return None


def _find_option(
    option: ActionSpec | Regimen, sections: Sections, section_names: Sequence[str], threshold: float
) -> dict[str, str] | None:
    if isinstance(option, ActionSpec):
        return find_action(option, sections, section_names, threshold)
    hits = [find_action(member, sections, section_names, threshold) for member in option.all_of]
    if any(h is None for h in hits):
        return None
    found = [h for h in hits if h is not None]
    return {
        "matched_term": " + ".join(h["matched_term"] for h in found),
        "matched_text": " | ".join(h["matched_text"] for h in found)[:400],
        "section": found[0]["section"],
    }


def find_expected(
    expected: ExpectedAction | ActionGroup, sections: Sections, section_names: Sequence[str], threshold: float
) -> dict[str, str] | None:
    """{expected, matched_term, matched_text, section} for the first alternative found, or None."""
    options: list[ActionSpec | Regimen] = (
        list(expected.any_of) if isinstance(expected, ActionGroup) else [expected]
    )
    for option in options:
        hit = _find_option(option, sections, section_names, threshold)
        if hit is not None:
            alternative = {} if option.label == expected.label else {"alternative": option.label}
            return {"expected": expected.label, **alternative, **hit}
    return None


def find_forbidden(forbidden: ForbiddenAction, sections: Sections, threshold: float) -> dict[str, str] | None:
    """{forbidden, matched_term, matched_text, section, reason} when the recommendation names the action
    and none of its ``unless_with`` companions; else None."""
    every = list(sections)
    hit = find_action(forbidden, sections, every, threshold, CONTINGENCY)
    if hit is None:
        return None
    if forbidden.unless_with:
        companion = ActionSpec(action=forbidden.unless_with[0], synonyms=forbidden.unless_with[1:])
        if find_action(companion, sections, every, threshold) is not None:
            return None
    return {"forbidden": forbidden.action, **hit, "reason": forbidden.reason}
