"""What a stand-in may know about a task: its cases, its scorers, and the constant pools drawn from them.

A stand-in knows nothing about the case in front of it beyond what a system would be shown (the question,
its options, the patient record). What it may know about the *task* is what a knows-nothing system could be
tuned to: the label distribution (the most frequent diagnoses, problems and actions of the audited cases, so
that "the best constant answer" is really the best one), the set of labels (every diagnosis of the sample,
every problem), and the data the task's own scorers ship (every action any guideline rule names, every
escalation term of the red-flag file, every agent of the DDx action map). Pools are computed once per task.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clineval.core import Case, Scorer

SEVERITIES = ("low", "moderate", "high", "critical")
DDX_CONSTANT_SIZES = (1, 3, 5, 10)  # the constant differential: the k most frequent ground truths


def is_mcq(case: Case) -> bool:
    """A multiple-choice case: options, or a gold letter."""
    gold = case.reference.answer or ""
    return bool(case.input.options) or (len(gold) == 1 and gold.isalpha() and gold.isupper())


def is_ddx(case: Case) -> bool:
    return any(g.strip() for g in case.reference.differential)


def patient_of(case: Case) -> Mapping[str, Any] | None:
    """The patient record of a CDS case (``input.data["patient"]``), else None."""
    patient = case.input.data.get("patient")
    return patient if isinstance(patient, Mapping) else None


def letters_of(case: Case) -> list[str]:
    """The case's option letters (A-D when it only has a gold letter)."""
    if case.input.options:
        return list(case.input.options)
    gold = case.reference.answer or "D"
    return [chr(c) for c in range(ord("A"), ord(max(gold, "D")) + 1)]


def _ranked(names: Iterable[str]) -> tuple[str, ...]:
    """Distinct names, most frequent first (case-insensitive counting, the most common spelling kept; ties
    by name so the order is reproducible)."""
    counts: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = {}
    for name in names:
        text = name.strip()
        if text:
            key = text.lower()
            counts[key] += 1
            spellings.setdefault(key, Counter())[text] += 1
    order = sorted(counts, key=lambda k: (-counts[k], k))
    return tuple(spellings[k].most_common(1)[0][0] for k in order)


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def case_text(case: Case) -> str:
    """What the system is shown, as text: question, options, vignette, contexts, and the patient record."""
    parts = [case.input.vignette or "", case.input.question or ""]
    parts += [f"{k}. {v}" for k, v in case.input.options.items()]
    parts += list(case.input.context)
    patient = patient_of(case)
    if patient is not None:
        parts += [f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in patient.items()]
    conversation = case.input.data.get("conversation")
    if isinstance(conversation, list):
        parts += [str(turn.get("content", "")) for turn in conversation if isinstance(turn, Mapping)]
    return "\n".join(dict.fromkeys(p.strip() for p in parts if p and p.strip()))


def _rule_actions(scorers: Sequence[Scorer]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(every expected action, every forbidden action) of the rules of the task's guideline scorers."""
    expected: list[str] = []
    forbidden: list[str] = []
    for scorer in scorers:
        ruleset = getattr(scorer, "ruleset", None)
        for rule in getattr(ruleset, "rules", ()) or ():
            for item in rule.expected_actions:
                for option in getattr(item, "any_of", None) or [item]:
                    parts = getattr(option, "all_of", None) or [option]
                    expected.extend(str(p.action) for p in parts)
            forbidden.extend(str(f.action) for f in getattr(rule, "forbidden_actions", ()) or ())
    return tuple(dict.fromkeys(expected)), tuple(dict.fromkeys(forbidden))


def _escalation_terms(scorers: Sequence[Scorer], cases: Sequence[Case]) -> tuple[str, ...]:
    """Every escalation term of the task's red-flag file(s), and every escalation reason of the cases."""
    terms: list[str] = []
    for scorer in scorers:
        red_flags = getattr(getattr(scorer, "config", None), "red_flags", None)
        for flag in getattr(red_flags, "flags", ()) or ():
            terms.extend(str(t) for t in flag.escalate_terms)
    for case in cases:
        terms.extend(_strings(case.reference.data.get("escalation_reasons")))
    return tuple(dict.fromkeys(t for t in terms if t.strip()))


def _treatments() -> tuple[str, ...]:
    """Every agent of the packaged DDx action map (TM-SM); empty where the map does not exist."""
    try:
        from clineval.ddx.treatment import load_action_map
    except ImportError:  # a clineval before the action map (the audit's "before" column)
        return ()
    return tuple(dict.fromkeys(a for row in load_action_map().rows for a in row.actions))


@dataclass(frozen=True)
class AuditContext:
    """One task as the stand-ins see it (module docstring)."""

    task_id: str
    cases: Sequence[Case]
    scorers: Sequence[Scorer]
    letters: tuple[str, ...]
    diagnoses: tuple[str, ...]  # ground-truth diagnoses of the cases, most frequent first
    problems: tuple[str, ...]  # golden-set expected problems, most frequent first
    actions: tuple[str, ...]  # golden-set expected actions, most frequent first
    rule_actions: tuple[str, ...]
    forbidden_actions: tuple[str, ...]
    escalation_terms: tuple[str, ...]
    treatments: tuple[str, ...]

    @classmethod
    def of(cls, task_id: str, cases: Sequence[Case], scorers: Sequence[Scorer]) -> AuditContext:
        letters = sorted({letter for c in cases if is_mcq(c) for letter in letters_of(c)})
        expected, forbidden = _rule_actions(scorers)
        any_ddx = any(is_ddx(c) for c in cases)
        return cls(
            task_id=task_id,
            cases=cases,
            scorers=scorers,
            letters=tuple(letters),
            diagnoses=_ranked(g for c in cases for g in c.reference.differential),
            problems=_ranked(p for c in cases for p in _strings(c.reference.data.get("expected_problems"))),
            actions=_ranked(a for c in cases for a in _strings(c.reference.data.get("expected_actions"))),
            rule_actions=expected,
            forbidden_actions=forbidden,
            escalation_terms=_escalation_terms(scorers, cases),
            treatments=_treatments() if any_ddx else (),
        )

    def has(self, kind: str) -> bool:
        """Whether some case is of ``kind``: ``mcq``, ``ddx``, ``cds`` or ``text`` (none of the others)."""
        return any(kind_of(c) == kind for c in self.cases)


def kind_of(case: Case) -> str:
    """``ddx`` (a ground-truth differential), ``cds`` (a patient record), ``mcq`` (options), else ``text``."""
    if is_ddx(case):
        return "ddx"
    if patient_of(case) is not None:
        return "cds"
    return "mcq" if is_mcq(case) else "text"
