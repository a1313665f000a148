"""Scripted judges in pure Python, on a simulated labelled golden set (the live ones, on the scripted
server: tests/test_judge_qualification_live.py).

The world: every golden-set case (data/golden_set/golden_set_v2.jsonl, its 102 ids; the cases' clinical
content is not used) has, per tier-4 dimension, a response
made of four parts, each of a quality 1-5; its true grade is the first part's quality ("the response leads
with its summary": the lead part carries the verdict, the other parts are supporting detail of any
quality). Clinicians grade the true grade (optionally with noise). Per case there are also three rubric
criteria, each covered (met) or not by one of the parts.

A judge is a function ``(world item, parts in the order shown, sample index) -> answer``. The harness asks
each item K times under the original order and K times under a seeded permutation (``order``) and hands
the answers to ``qualification.qualify``, as ``clineval judge qualify`` will.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from clineval.judging.qualification.labels import LabelSet, parse_labels
from clineval.judging.qualification.order import permuted
from clineval.judging.qualification.qualify import Key

DIMENSIONS = ("coherence", "completeness", "uncertainty_calibration", "differential_consideration")
GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_set" / "golden_set_v2.jsonl"
IDS = [json.loads(line)["id"] for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class Part:
    name: str
    quality: int  # 1-5
    covers: str | None  # the rubric criterion this part meets, if any


@dataclass(frozen=True)
class Item:
    key: Key
    parts: tuple[Part, ...]
    truth: int | bool


def world(seed: int = 7) -> list[Item]:
    """Grade items (case x dimension) and rubric items (case x criterion), reproducibly."""
    rng = random.Random(seed)
    items: list[Item] = []
    for case in IDS:
        for dim in DIMENSIONS:
            parts = tuple(Part(f"{dim}-{i}", rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5]), None) for i in range(4))
            items.append(Item(("grade", (case, dim)), parts, parts[0].quality))
        for c in range(3):
            criterion = f"criterion-{c}"
            met = rng.random() < 0.55
            parts = tuple(Part(f"p{i}", 3, criterion if (met and i == 1) else None) for i in range(4))
            items.append(Item(("met", (case, criterion)), parts, met))
    return items


Judge = Callable[[Item, Sequence[Part], int], int | bool | None]


def oracle(item: Item, shown: Sequence[Part], sample: int) -> int | bool:
    """Reads the content, whatever its order: the lead part's quality, or whether a part covers it."""
    if item.key[0] == "grade":
        lead = next(p for p in shown if p.name.endswith("-0"))
        return lead.quality
    return any(p.covers == item.key[1][1] for p in shown)


def constant(item: Item, shown: Sequence[Part], sample: int) -> int | bool:
    return 3 if item.key[0] == "grade" else True


def position_biased(item: Item, shown: Sequence[Part], sample: int) -> int | bool:
    """Primacy: grades whatever part is shown first; says "met" only when the covering part is among the
    first two shown. In the original order it is right every time."""
    if item.key[0] == "grade":
        return shown[0].quality
    return any(p.covers == item.key[1][1] for p in shown[:2])


def noisy(p: float) -> Judge:
    """The oracle, moved by ±1 grade (or its met flipped) with probability ``p`` per sample."""

    def judge(item: Item, shown: Sequence[Part], sample: int) -> int | bool:
        right = oracle(item, shown, sample)
        rng = random.Random(f"noise:{item.key}:{sample}:{len(shown) and shown[0].name}")
        if rng.random() >= p:
            return right
        if isinstance(right, bool):
            return not right
        return min(5, max(1, right + rng.choice([-1, 1])))

    return judge


def ask(
    judge: Judge, items: Sequence[Item], k: int, *, seed: int = 0, reorder: bool = False
) -> dict[Key, list]:
    """The judge's K answers per item, under the original or the seeded permuted order."""
    answers: dict[Key, list] = {}
    for item in items:
        shown = permuted(item.parts, seed, item.key) if reorder else list(item.parts)
        answers[item.key] = [judge(item, shown, s) for s in range(k)]
    return answers


def labels_for(
    items: Sequence[Item], reviewers: Sequence[str] = ("",), noise: float = 0.0, seed: int = 3
) -> LabelSet:
    """A labels file (as text, parsed) with each reviewer's label of every item (grades moved ±1 with
    probability ``noise`` per reviewer and item; met flipped with it)."""
    rng = random.Random(seed)
    lines = []
    for item in items:
        kind, (a, b) = item.key
        for reviewer in reviewers:
            value = item.truth
            if noise and rng.random() < noise:
                value = (
                    (not value)
                    if isinstance(value, bool)
                    else min(5, max(1, int(value) + rng.choice([-1, 1])))
                )
            row = {"case_id": a, "dimension" if kind == "grade" else "criterion": b, kind: value}
            if reviewer:
                row["reviewer"] = reviewer
            lines.append(json.dumps(row))
    return parse_labels("\n".join(lines), path="labels.jsonl")
