"""What can be reviewed on a stored case: one :class:`ReviewItem` per automated verdict (MCQ answer, DDx
equivalence pair, tier-1 check, tier-3 rule, judge dimension, other correct/incorrect label), read from the
scorers' breakdowns. The table of kinds, keys and corrected values is in
``clineval.view.review.adjudication``.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clineval.core import CaseResult

ITEM_KINDS = ("mcq", "ddx_pair", "check", "rule", "judge_dimension", "label")
VERDICTS = ("agree", "disagree")
UNPARSED = "unparsed"
PASS_FAIL = ("pass", "fail")
GRADES = (1, 2, 3, 4, 5)
_MCQ_LABELS = frozenset({"correct", "incorrect", UNPARSED})


@dataclass(frozen=True)
class ReviewItem:
    """One reviewable automated verdict of a case."""

    kind: str
    key: str
    scorer: str
    automated: dict[str, Any]  # {"value": ..., context}
    choices: tuple[Any, ...]
    title: str

    @property
    def value(self) -> Any:
        return self.automated["value"]


# -- what can be reviewed ---------------------------------------------------------------------------


def _letters(options: Sequence[str] | None, *seen: Any) -> tuple[str, ...]:
    """The option letters: given, else A-E extended to the furthest letter the scorer saw."""
    if options:
        return tuple(str(o) for o in options)
    letters = string.ascii_uppercase
    last = max(
        ["E", *(s.upper() for s in seen if isinstance(s, str) and len(s) == 1 and s.upper() in letters)]
    )
    return tuple(letters[: letters.index(last) + 1])


def _mcq(name: str, score: Mapping[str, Any], options: Sequence[str] | None) -> ReviewItem:
    bd = score.get("breakdown") or {}
    value = bd.get("extracted") or UNPARSED
    choices = (*_letters(options, bd.get("gold"), bd.get("extracted")), UNPARSED)
    automated = {"value": value, "label": score.get("label"), "gold": bd.get("gold")}
    return ReviewItem("mcq", name, name, automated, choices, f"{name}: extracted answer")


def _ddx(name: str, bd: Mapping[str, Any]) -> list[ReviewItem]:
    decisions = [d for d in bd.get("decisions") or [] if isinstance(d, Mapping)]
    items = []
    for d in decisions:
        if d.get("ground_truth") and d.get("system"):
            items.append((d["ground_truth"], d["system"], True, d.get("tier")))
    missed = [d["ground_truth"] for d in decisions if d.get("ground_truth") and not d.get("system")]
    extra = [d["system"] for d in decisions if d.get("system") and not d.get("ground_truth")]
    items += [(gt, sysname, False, None) for gt in missed for sysname in extra]
    return [
        ReviewItem(
            "ddx_pair",
            f"{name}|{gt}|{sysname}",
            name,
            {"value": eq, "ground_truth": gt, "system": sysname, "tier": tier},
            (True, False),
            f"{sysname} = {gt}?",
        )
        for gt, sysname, eq, tier in items
    ]


def _rules(name: str, bd: Mapping[str, Any]) -> list[ReviewItem]:
    return [
        ReviewItem(
            "rule",
            f"{name}:{row['rule_id']}",
            name,
            {"value": "pass" if row.get("adherent") else "fail", "missing": row.get("missing") or []},
            PASS_FAIL,
            f"rule {row['rule_id']}",
        )
        for row in bd.get("rules") or []
        if isinstance(row, Mapping) and row.get("applicable") is True and row.get("rule_id")
    ]


def _judge(name: str, bd: Mapping[str, Any]) -> list[ReviewItem]:
    grades = bd.get("grades") or {}
    dims = bd.get("dimensions") or {}
    return [
        ReviewItem(
            "judge_dimension",
            f"{name}:{dim}",
            name,
            {"value": int(grade), "samples": list((dims.get(dim) or {}).get("samples") or [])},
            GRADES,
            f"judge: {dim}",
        )
        for dim, grade in grades.items()
        if isinstance(grade, int | float) and not isinstance(grade, bool) and int(grade) in GRADES
    ]


def _score_items(name: str, score: Mapping[str, Any], options: Sequence[str] | None) -> list[ReviewItem]:
    label = score.get("label")
    bd = score.get("breakdown") or {}
    if "extracted" in bd and "gold" in bd and label in _MCQ_LABELS:
        return [_mcq(name, score, options)]
    if isinstance(bd.get("decisions"), list):
        return _ddx(name, bd)
    if isinstance(bd.get("rules"), list) and "rules_sha256" in bd:
        return _rules(name, bd)
    if isinstance(bd.get("grades"), Mapping):
        return _judge(name, bd)
    if label in PASS_FAIL and "passed" in bd:
        return [ReviewItem("check", name, name, {"value": label}, PASS_FAIL, f"check {name}")]
    if label in ("correct", "incorrect"):
        choices = ("correct", "incorrect")
        return [ReviewItem("label", name, name, {"value": label}, choices, f"{name}: label")]
    return []


def items_for(
    result: CaseResult | Mapping[str, Any], options: Sequence[str] | None = None
) -> list[ReviewItem]:
    """Every reviewable automated verdict of a stored case result (a model or its ``model_dump``), in
    scorer order. ``options``: the MCQ option letters, when known (else A-E, or further if seen)."""
    data = result.model_dump(mode="json") if isinstance(result, CaseResult) else result
    items: list[ReviewItem] = []
    for name, score in (data.get("scores") or {}).items():
        if isinstance(score, Mapping):
            items.extend(_score_items(str(name), score, options))
    return items
