"""The action catalogue of a guideline ruleset: every action a rule names, and which rules name it.

Tier 3 asks whether the applicable rules' actions are present; the catalogue answers the two questions
that keep a shotgun recommendation from passing (docs/cds/tier3_guidelines.md, "Specificity") and a generic
citation from counting (docs/cds/retrieval.md, "guideline_citation"):

* which catalogue actions a recommendation names, and whether each belongs to a condition the patient has
  (``clineval.cds.rules.specificity``);
* which rules an action satisfies, and so which guidelines it rests on
  (``clineval.cds.retrieval.citation_relevance``).

An **entry** is one action label (``ActionSpec.action``, case-folded) with every synonym any rule gives
it, and the ids of the rules that list it: as a required action, an alternative of an ``any_of`` group, or
a member of a regimen. Forbidden actions are not entries (a forbidden action named where its ``when``
holds is a violation of its own; where it does not, the rule has no opinion). Entries are matched like
expected actions (``clineval.cds.rules.actions.find_action``: forward naming, negation-aware, so "avoid
NSAIDs" names no NSAID), and contingency clauses ("thrombolysis if he deteriorates") are skipped, as for
forbidden actions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clineval.cds.rules.actions import CONTINGENCY, find_action
from clineval.cds.rules.model import ActionGroup, ActionSpec, Regimen, Rule, RuleSet
from clineval.text.matching import prepare

Sections = Mapping[str, Sequence[str]]


@dataclass(frozen=True)
class Entry:
    """One catalogue action: its label, a spec with every synonym, the rules that name it, and the
    content stems of each form of each term (a text that names the action has all of one of them)."""

    label: str
    spec: ActionSpec
    rule_ids: frozenset[str]
    needs: tuple[frozenset[str], ...] = ()

    def may_be_named(self, stems: frozenset[str]) -> bool:
        """False when no term can be named by a text with these stems (a cheap necessary condition of
        ``find_action``: forward containment and token recall 1.0 both need every content stem)."""
        return any(need <= stems for need in self.needs)


def _specs(rule: Rule) -> list[ActionSpec]:
    """Every action a rule's expected actions name (alternatives and regimen members included)."""
    out: list[ActionSpec] = []
    for item in rule.expected_actions:
        options: list[ActionSpec | Regimen] = list(item.any_of) if isinstance(item, ActionGroup) else [item]
        for option in options:
            out.extend(option.all_of if isinstance(option, Regimen) else [option])
    return out


_CATALOGUES: dict[tuple[str, str, int], tuple[Entry, ...]] = {}


def catalogue(ruleset: RuleSet) -> tuple[Entry, ...]:
    """The ruleset's entries, in the order the rules first name them (module docstring); built once per
    ruleset (keyed by its source, hash and identity: a ruleset is a frozen model)."""
    key = (ruleset.source, ruleset.sha256, id(ruleset))
    found = _CATALOGUES.get(key)
    if found is None:
        found = _CATALOGUES[key] = _build(ruleset)
    return found


def _build(ruleset: RuleSet) -> tuple[Entry, ...]:
    terms: dict[str, list[str]] = {}
    vetoes: dict[str, list[str]] = {}
    rules: dict[str, set[str]] = {}
    for rule in ruleset.rules:
        for spec in _specs(rule):
            key = spec.action.strip().lower()
            terms.setdefault(key, [])
            terms[key].extend(t for t in spec.terms if t not in terms[key])
            vetoes.setdefault(key, [])
            vetoes[key].extend(v for v in spec.not_if_naming if v not in vetoes[key])
            rules.setdefault(key, set()).add(rule.id)
    return tuple(
        Entry(
            key,
            ActionSpec(action=terms[key][0], synonyms=terms[key][1:], not_if_naming=vetoes[key]),
            frozenset(rules[key]),
            tuple(need for term in terms[key] for need in prepare(term).content if need),
        )
        for key in terms
    )


def named_entries(sections: Sections, ruleset: RuleSet, threshold: float = 1.0) -> list[tuple[Entry, str]]:
    """(entry, the term that names it) for each catalogue entry a recommendation names in any section
    (contingency clauses skipped)."""
    every = list(sections)
    stems = frozenset().union(*(prepare(t).stems for texts in sections.values() for t in texts))
    found = []
    for entry in catalogue(ruleset):
        if threshold >= 1.0 and not entry.may_be_named(stems):
            continue
        hit = find_action(entry.spec, sections, every, threshold, CONTINGENCY)
        if hit is not None:
            found.append((entry, hit["matched_term"]))
    return found


def rules_for_action(action: str, ruleset: RuleSet, threshold: float = 1.0) -> tuple[str, ...]:
    """The ids of the rules one of whose actions ``action`` names (in rule order; memoised)."""
    key = (action, ruleset.source, ruleset.sha256, id(ruleset), threshold)
    found = _BY_ACTION.get(key)
    if found is None:
        entries = named_entries({"recommended_actions": [action]}, ruleset, threshold)
        ids = {rule_id for entry, _ in entries for rule_id in entry.rule_ids}
        found = tuple(r.id for r in ruleset.rules if r.id in ids)
        if len(_BY_ACTION) >= _MAX_MEMO:
            _BY_ACTION.clear()
        _BY_ACTION[key] = found
    return found


_MAX_MEMO = 8192
_BY_ACTION: dict[tuple[str, str, str, int, float], tuple[str, ...]] = {}
