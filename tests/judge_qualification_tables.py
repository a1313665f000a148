"""The pairs the reference comparison runs on: hand tables, random tables, and the scripted judges'
majority answers against the simulated labels (judge_qualification_sim).
Each is (name, kind, judge, reference)."""

from __future__ import annotations

import random

from clineval.judging.qualification.stability import majority
from tests.judge_qualification_sim import ask, constant, labels_for, noisy, oracle, position_biased, world


def expand(table: list[list[int]], values: list) -> tuple[list, list]:  # type: ignore[type-arg]
    """Rows judge, columns reference -> the paired ratings."""
    judge, ref = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            judge += [values[i]] * count
            ref += [values[j]] * count
    return judge, ref


HAND = [
    ("2x2 (clineval test)", "met", [[20, 5], [10, 15]]),
    (
        "5x5 (clineval test)",
        "grade",
        [[7, 2, 0, 0, 0], [1, 6, 3, 0, 0], [0, 2, 9, 2, 1], [0, 0, 3, 8, 2], [0, 0, 1, 2, 5]],
    ),
    ("5x5 grades 2,3,5 only", "grade", [[0] * 5, [0, 6, 2, 0, 1], [0, 3, 7, 0, 2], [0] * 5, [0, 1, 2, 0, 9]]),
    ("2x2 skewed", "met", [[40, 6], [2, 3]]),
]


def cases() -> list[tuple[str, str, list, list]]:  # type: ignore[type-arg]
    out: list[tuple[str, str, list, list]] = []  # type: ignore[type-arg]
    for name, kind, table in HAND:
        values = [True, False] if kind == "met" else [1, 2, 3, 4, 5]
        out.append((name, kind, *expand(table, values)))
    rng = random.Random(5)
    for n in (12, 40, 150):
        ref = [rng.choice([1, 2, 3, 3, 4, 4, 5]) for _ in range(n)]
        judge = [min(5, max(1, r + rng.choice([-2, -1, 0, 0, 0, 1]))) for r in ref]
        out.append((f"random grades n={n}", "grade", judge, ref))
        ref_m = [rng.random() < 0.6 for _ in range(n)]
        out.append((f"random met n={n}", "met", [r if rng.random() < 0.8 else not r for r in ref_m], ref_m))
    items = world()
    labels = labels_for(items)
    for jname, judge_fn, reorder in (
        ("noisy(0.2)", noisy(0.2), False),
        ("position-biased, permuted", position_biased, True),
        ("oracle", oracle, False),
        ("constant", constant, False),
    ):
        answers = ask(judge_fn, items, 3, reorder=reorder, seed=11)
        for kind, dim in (("grade", "completeness"), ("met", None)):
            keys = [(k, it) for (k, it) in answers if k == kind and (dim is None or it[1] == dim)]
            truth = labels.of_kind(kind)
            judge = [majority(answers[key]) for key in keys]
            ref = [truth[key[1]][""] for key in keys]
            out.append((f"{jname}: {dim or 'rubric'}", kind, judge, ref))
    return out
