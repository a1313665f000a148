"""Is a cited guideline row relevant to the action that cites it? (``guideline_citation``, tier 2)

A guideline row of the evidence table counts for ``guideline_citation_rate`` only when some recommended
action cites it (its ``id`` is in the action's ``evidence_refs``) and the row is **relevant** to one of the
actions citing it; any row typed ``guideline`` counted before, so two rows of constant text
("Clinical practice guideline", "Guideline") passed every treatment query (docs/runs/audit.md). Relevant means
either

(a) **it names the guideline of a rule the action satisfies**: the action names an action of a rule of the
    ruleset (``clineval.cds.rules.catalogue.rules_for_action``; whether that rule applies to the
    patient is tier 3's question, not this one), and the row's text, ``doc_id`` or ``chunk_id`` shares at
    least ``GUIDELINE_TERMS`` (2) distinctive stems with that rule's ``source`` and quoted guideline titles
    and years ("ESC 2021 heart failure guideline" and the ESC 2021 HF source share esc, 2021, heart,
    failure; "NICE NG138" shares nice, ng138), words every guideline title has (guideline, clinical,
    practice, management, treatment, acute...) aside; or
(b) **it shares the action's key terms**: a content stem of the action, the verbs and routes of a
    prescription aside (start, give, oral, IV, dose...), is in the row ("Loop diuretics for congestion"
    for "Start IV furosemide (loop diuretic)").

So a citation must be about the action or the guideline behind it; whether the guideline *supports* the
action is tier 4's question. Stems are ``clineval.text.matching.prepare``'s (abbreviations expanded).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clineval.cds.rules.catalogue import rules_for_action
from clineval.cds.rules.model import RuleSet
from clineval.core import EvidenceRow
from clineval.text.matching import prepare

GUIDELINE_TERMS = 2
_TITLE_WORDS = (
    "guideline guidelines clinical practice management treatment diagnosis recommendation recommendations "
    "adult adults acute chronic report society association statement update focused the of for and in on "
    "with evidence care patients patient et al section table chapter class level"
)
_ACTION_WORDS = (
    "start started give given continue consider if appropriate add use oral iv intravenous dose doses daily "
    "mg therapy treatment treat patient plus with and for the to of now urgent immediate"
)


def _stems(text: str) -> frozenset[str]:
    return prepare(text).stems if text.strip() else frozenset()


TITLE_STEMS = _stems(_TITLE_WORDS)
ACTION_STEMS = _stems(_ACTION_WORDS)
_GUIDELINES: dict[tuple[str, str, int], dict[str, frozenset[str]]] = {}


def guideline_stems(ruleset: RuleSet) -> dict[str, frozenset[str]]:
    """rule id -> the distinctive stems of its source and quoted guidelines (titles and years)."""
    key = (ruleset.source, ruleset.sha256, id(ruleset))
    found = _GUIDELINES.get(key)
    if found is None:
        found = {}
        for rule in ruleset.rules:
            text = " ".join([rule.source, *(f"{q.guideline} {q.year}" for q in rule.recommendation)])
            found[rule.id] = _stems(text) - TITLE_STEMS
        _GUIDELINES[key] = found
    return found


def row_text(row: EvidenceRow) -> str:
    return " ".join(p for p in (row.text, row.doc_id, row.chunk_id) if p)


def relevance(row: EvidenceRow, action: str, ruleset: RuleSet) -> str | None:
    """Why ``row`` is relevant to ``action`` (``guideline of <rule>`` / ``action terms``), or None."""
    stems = _stems(row_text(row))
    if not stems:
        return None
    by_rule = guideline_stems(ruleset)
    for rule_id in rules_for_action(action, ruleset):
        if len(stems & by_rule[rule_id]) >= GUIDELINE_TERMS:
            return f"guideline of {rule_id}"
    if stems & (_stems(action) - ACTION_STEMS - TITLE_STEMS):
        return "action terms"
    return None


def relevant_rows(
    rows: Sequence[EvidenceRow], citing: Mapping[str, Sequence[str]], ruleset: RuleSet
) -> tuple[dict[str, str], list[str], list[str]]:
    """({row id: why relevant}, uncited ids, irrelevant ids) of ``rows``; ``citing``: row id -> the texts
    of the actions citing it."""
    relevant: dict[str, str] = {}
    uncited: list[str] = []
    irrelevant: list[str] = []
    for row in rows:
        rid = row.id.strip()
        actions = citing.get(rid)
        if not actions:
            uncited.append(rid)
            continue
        why = next((w for a in actions if (w := relevance(row, a, ruleset)) is not None), None)
        if why is None:
            irrelevant.append(rid)
        else:
            relevant.setdefault(rid, why)
    return relevant, uncited, irrelevant
