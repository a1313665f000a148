"""HealthBench figures equal simple-evals' on every example, tag and clipped mean, empty replies included.

The 30 shared HealthBench examples are answered by a predictions file in which some calls failed, some
answers are empty or blank and one is missing; a scripted grader (a "harsh" one: it calls omission
criteria such as "fails to advise ..." met for an empty reply) answers the reference grader prompt
(``grader_prompt: healthbench_reference``), matched byte for byte. The expected figures are computed here,
independently of clineval, by restating openai/simple-evals ``healthbench_eval.py`` (``calculate_score``,
``grade_sample``'s example-tag and rubric-tag scores, ``_aggregate_get_clipped_mean``) over the decisions
the grader gave for the prompts the reference would send (an empty reply for a failed call).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from clineval.core import RunResult
from clineval.runs import run as api
from clineval.testing import Reply, Rule, Script
from clineval.testing.openai_server import ServerHandle
from tests.conftest import StartServer
from tests.helpers import shared_data
from tests.test_rubric_failures import reference_prompt

OMISSION = ("fails", "does not", "doesn't", "misses", "omits", "lacks", "neglects", "avoids", "refrains")


def response_for(index: int) -> str | None:
    """The system's reply to example ``index``: None = the call failed (or, for 29, no prediction)."""
    if index % 5 == 2 or index == 29:
        return None
    if index % 5 == 4:
        return "" if index % 10 == 4 else "   \n"  # empty, or blank (shown to the grader as written)
    return f"Answer {index}: it depends; see a clinician if it gets worse."


def harsh_grader(prompt_id: str, item: dict[str, Any], response: str) -> bool:
    """The scripted grader's decision. An empty reply meets the omission criteria ("Fails to ...",
    "Does not ...", and positive "Avoids ..."); an answer meets a positive criterion 35% and a negative
    one 60% of the time (a fixed hash of the example, the item and the response)."""
    criterion = str(item["criterion"]).strip().lower()
    if not response.strip():
        return criterion.startswith(OMISSION)
    key = f"{prompt_id}\n{item['points']}\n{item['criterion']}\n{response}".encode()
    draw = int(hashlib.sha256(key).hexdigest()[:8], 16) / 2**32
    return draw < (0.35 if item["points"] > 0 else 0.6)


def examples() -> list[dict[str, Any]]:
    path = shared_data("healthbench", "healthbench_oss_eval_first30.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def grader_script(rows: list[dict[str, Any]]) -> Script:
    """One rule per prompt the reference sends (its exact text), answering as simple-evals expects."""
    rules: dict[str, Rule] = {}
    for index, row in enumerate(rows):
        shown = response_for(index) or ""  # simple-evals grades a failed call as an empty reply
        for item in row["rubrics"]:
            prompt = reference_prompt(row["prompt"], shown, item)
            met = json.dumps(harsh_grader(row["prompt_id"], item, shown))
            reply = Reply(content=f'```json\n{{"explanation": "scripted", "criteria_met": {met}}}\n```')
            rules.setdefault(prompt, Rule(match=prompt, replies=[reply]))
    return Script(latency_s=0.0, model="grader-model", rules=list(rules.values()))


def run_clineval(
    tmp_path: Path, rows: list[dict[str, Any]], start: Callable[[Script], ServerHandle]
) -> tuple[RunResult, dict[str, Any]]:
    """The run, and the grader's request counts."""
    data = shared_data("healthbench", "healthbench_oss_eval_first30.jsonl")
    predictions = []
    for index, row in enumerate(rows):
        response = response_for(index)
        if index == 29:
            continue  # a missing prediction: a failure of its own kind
        if response is None:
            predictions.append({"id": row["prompt_id"], "error": {"kind": "http_500", "message": "down"}})
        else:
            predictions.append({"id": row["prompt_id"], "output": response})
    preds = tmp_path / "predictions.jsonl"
    preds.write_text("".join(json.dumps(p) + "\n" for p in predictions), encoding="utf-8")
    grader = start(grader_script(rows))
    suite = tmp_path / "hb.yaml"
    suite.write_text(
        f"""name: hb-reference
tasks:
  - id: hb
    dataset: {{format: healthbench, path: {data}}}
    system: {{type: predictions, path: {preds}}}
    scorers: [{{rubric: {{grader_prompt: healthbench_reference}}}}]
    judge:
      base_url: {grader.base_url}
      model: grader-model
""",
        encoding="utf-8",
    )
    request = api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None)
    return api.run_suite(request), grader.stats


# ---- the reference, restated from simple-evals healthbench_eval.py (commit 9e2fafd) -----------------


def ref_calculate_score(rubric_items: list[dict[str, Any]], grades: list[dict[str, Any]]) -> float | None:
    total_possible_points = sum(item["points"] for item in rubric_items if item["points"] > 0)
    if total_possible_points == 0:
        return None
    achieved_points = sum(
        item["points"] for item, grade in zip(rubric_items, grades, strict=True) if grade["criteria_met"]
    )
    return achieved_points / total_possible_points


def ref_grade_sample(row: dict[str, Any], grades: list[dict[str, Any]]) -> dict[str, float]:
    overall_score = ref_calculate_score(row["rubrics"], grades)
    assert overall_score is not None
    metrics = {"overall_score": overall_score}
    metrics.update({tag: overall_score for tag in row["example_tags"]})
    rubric_tag_items_grades: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for item, grade in zip(row["rubrics"], grades, strict=True):
        for tag in item["tags"]:
            rubric_tag_items_grades[tag].append((item, grade))
    for tag, items_grades in rubric_tag_items_grades.items():
        items, tag_grades = zip(*items_grades, strict=True)
        score = ref_calculate_score(list(items), list(tag_grades))
        if score is not None:
            metrics[tag] = score
    return metrics


def ref_aggregate(results: list[dict[str, float]]) -> dict[str, float]:
    name2values: dict[str, list[float]] = defaultdict(list)
    for metrics in results:
        for name, value in metrics.items():
            name2values[name].append(value)
        name2values["score"].append(metrics["overall_score"])
    final = {name: float(np.clip(np.mean(values), 0, 1)) for name, values in name2values.items()}
    final["score:unclipped"] = float(np.mean(name2values["score"]))
    return final


def reference_figures(rows: list[dict[str, Any]]) -> tuple[list[dict[str, float]], dict[str, float]]:
    per_example = []
    for index, row in enumerate(rows):
        shown = response_for(index) or ""
        grades = [{"criteria_met": harsh_grader(row["prompt_id"], i, shown)} for i in row["rubrics"]]
        per_example.append(ref_grade_sample(row, grades))
    return per_example, ref_aggregate(per_example)


def compare(run: RunResult, rows: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """(number of figures compared, the ones that differ): every example's score and tag scores, every
    tag's clipped mean, the clipped mean."""
    per_example, final = reference_figures(rows)
    by_id = {r.case_id: r.scores["rubric"] for r in run.results}
    scores = run.aggregates["hb"].scores
    compared, differ = 0, []
    for row, ref in zip(rows, per_example, strict=True):
        score = by_id[row["prompt_id"]]
        ours = {"overall_score": score.value, **(score.breakdown.get("tag_scores") or {})}
        for name in sorted(set(ref) | set(ours)):
            compared += 1
            if name not in ours or name not in ref or ours[name] != pytest.approx(ref[name], abs=1e-12):
                differ.append(f"{row['prompt_id']} {name}: {ours.get(name)} vs {ref.get(name)}")
    ours_final = {"score": scores["rubric_score"], "score:unclipped": scores["rubric_score_unclipped"]}
    ours_final.update(
        {k[len("rubric_score[") : -1]: v for k, v in scores.items() if k.startswith("rubric_score[")}
    )
    for name in sorted(set(final) - {"overall_score"}):
        compared += 1
        if name not in ours_final or ours_final[name] != pytest.approx(final[name], abs=1e-12):
            differ.append(f"mean {name}: {ours_final.get(name)} vs {final[name]}")
    return compared, differ


def test_figures_equal_simple_evals_with_empty_and_failed_replies(
    tmp_path: Path, start_server: StartServer
) -> None:
    rows = examples()
    run, stats = run_clineval(tmp_path, rows, start_server)
    assert stats["total"] == sum(len(r["rubrics"]) for r in rows) == 352  # every item of every example
    assert sum(stats["by_rule"].values()) == stats["total"]  # each prompt was one the reference sends
    labels = [r.scores["rubric"].label for r in run.results]
    assert (labels.count("failed"), labels.count("empty"), labels.count("graded")) == (
        7,
        5,
        18,
    )  # 2, 7, ..., 27 and 29 fail; 4, 9, 14, 19, 24 are blank
    compared, differ = compare(run, rows)
    assert differ == []
    # 253 per example (30 scores, 49 example-tag and 174 rubric-tag scores) and 51 means (49 tags, the
    # clipped and the unclipped mean)
    assert compared == 253 + 51
    _, final = reference_figures(rows)
    scores = run.aggregates["hb"].scores
    assert scores["rubric_score_unclipped"] == pytest.approx(final["score:unclipped"], abs=1e-12)
    assert final["score:unclipped"] < 0 and scores["rubric_score"] == final["score"] == 0.0
    # the empty replies meet omission criteria: a failed case scores below 0, as in the reference
    assert min(r.scores["rubric"].value for r in run.results if r.scores["rubric"].label == "failed") < 0
