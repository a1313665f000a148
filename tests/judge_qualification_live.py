"""Scripted judges on the local OpenAI-compatible test server, for real ``clineval judge qualify`` runs.

The world: ``N`` cases of the golden set (data/golden_set/golden_set_v2.jsonl, ids only), each with a
predictions answer of four lines ``"q<g> ..."``; the first line is the lead whose quality ``g`` (1-5) is the
true coherence grade, the other three lines are supporting detail of other qualities. One clinician's
labels give the true grade. The judge prompt quotes the response as a JSON string right after
``<<<RESPONSE\\n``, so what the judge sees first is ``<<<RESPONSE\\n"q<n>``.

* oracle: a rule per case on the case's own words (anywhere in the response) -> the true grade;
* constant: every reply ``{"grade": 3}``;
* position-biased: a rule per leading quality ``<<<RESPONSE\\n"q<n>`` -> grade n: right in the original
  order (the lead comes first), wrong when the permuted order puts another line first;
* noisy: the oracle, but on every third case its samples walk ``[g, g', g]`` (g' one grade off): the
  majority is right, the item flips.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from clineval.testing import Reply, Rule, Script
from tests.judge_qualification_sim import IDS

N = 30
DIMENSION = "coherence"
JUDGE_MODEL = "judge-model"


def world(seed: int = 5) -> dict[str, list[int]]:
    """Per case: the qualities of its four lines (the first is the true grade)."""
    rng = random.Random(seed)
    found = {}
    for i, case_id in enumerate(IDS[:N]):
        lead = 1 + i % 5
        others = [q for q in (1, 2, 3, 4, 5) if q != lead]
        rng.shuffle(others)
        found[case_id] = [lead, *others[:3]]
    return found


def answer(case_id: str, qualities: list[int]) -> str:
    words = ["leads with the assessment", "adds a finding", "adds a test", "adds a caveat"]
    return "\n".join(f"q{q} {case_id} {w}." for q, w in zip(qualities, words, strict=True))


def grade(value: int, why: str = "scripted") -> Reply:
    return Reply(content=json.dumps({"grade": value, "injection": False, "reason": why}))


def write_suite(tmp_path: Path, judge_url: str) -> Path:
    rows = world()
    data = tmp_path / "cases.jsonl"
    data.write_text(
        "".join(json.dumps({"id": c, "question": f"Assess case {c}.", "answer": ""}) + "\n" for c in rows)
    )
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": c, "output": answer(c, q)}) + "\n" for c, q in rows.items()))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"""name: judged
tasks:
  - id: t
    dataset: {{format: jsonl, path: {data}}}
    system: {{type: predictions, path: {preds}}}
    scorers:
      - judge_dimensions: {{dimensions: [{DIMENSION}]}}
    judge:
      base_url: {judge_url}
      model: {JUDGE_MODEL}
"""
    )
    return suite


def write_labels(path: Path, flat: bool = False) -> Path:
    rows = [
        {"case_id": c, "dimension": DIMENSION, "grade": 4 if flat else q[0], "reviewer": "dr_a"}
        for c, q in world().items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def script(kind: str) -> Script:
    rows = world()
    if kind == "constant":
        return Script(latency_s=0.0, model=JUDGE_MODEL, answer_format=grade(3).content or "")
    if kind == "position":
        rules = [Rule(match=f'<<<RESPONSE\n"q{n} ', replies=[grade(n)]) for n in range(1, 6)]
        return Script(latency_s=0.0, model=JUDGE_MODEL, rules=rules)
    rules = []
    for i, (case_id, q) in enumerate(rows.items()):
        g = q[0]
        off = g + 1 if g < 5 else g - 1
        replies = [grade(g), grade(off), grade(g)] if kind == "noisy" and i % 3 == 0 else [grade(g)]
        rules.append(Rule(match=f" {case_id} leads", replies=replies))
    return Script(latency_s=0.0, model=JUDGE_MODEL, rules=rules)
