"""Aggregates of like with like (issue 22 item 8): a mean over tasks only across tasks of one system.

The demo (GPT-4 and GPT-3.5 on the same 200 MedQA questions) used to show "mean over tasks: accuracy 76.75%"
= (166 + 141) / 400, a figure that describes neither model. Now every report says there is no such mean and
which task ran which system; one system's tasks still get their mean (MIRAGE's "Avg" column)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from clineval.core import ComponentSpec, RunInfo, RunResult, SuiteSpec, TaskAggregate, TaskSpec
from clineval.core.system_identity import system_groups, system_key, system_name, task_system_names
from clineval.metrics.aggregate import overall_by_system, overall_scores
from clineval.report import build_report, render_html, render_markdown
from clineval.runs import run as api


def spec(type_: str, **args: Any) -> ComponentSpec:
    return ComponentSpec(type=type_, args=args)


def test_system_identity_and_names() -> None:
    gpt = spec("openai", model="gpt-4o", prompt="mcq_cot_v1", api_key_env="A")
    assert system_key(gpt) == system_key(spec("openai", model="gpt-4o", prompt="mcq_cot_v1", api_key_env="B"))
    assert system_key(gpt) != system_key(spec("openai", model="gpt-4o", prompt="ddx_json_v1"))
    assert system_key(gpt) != system_key(spec("openai", model="gpt-4o-mini", prompt="mcq_cot_v1"))
    one, two = spec("predictions", path="a/gpt4.jsonl"), spec("predictions", path="b/gpt35.jsonl")
    assert system_key(one) != system_key(two)
    assert system_key(spec("recorded")) == system_key(spec("recorded"))
    assert system_key(spec("ddxplus_differential", top_k=5)) != system_key(spec("ddxplus_differential"))
    assert [system_name(s) for s in (gpt, one)] == ["gpt-4o", "gpt4"]
    assert system_name(spec("callable", target="examples.longest_option:answer")) == "longest_option:answer"
    assert (
        system_name(spec("http", url="https://cds.example.org/v1/predict/")) == "cds.example.org/v1/predict"
    )
    assert system_name(spec("ddxplus_differential")) == "ddxplus differential"


def _task(tid: str, system: ComponentSpec) -> TaskSpec:
    return TaskSpec(id=tid, dataset=spec("medqa", path=f"{tid}.jsonl"), system=system, scorers=[spec("mcq")])


def _aggregate(accuracy: float, n: int, failed: int = 0) -> TaskAggregate:
    ci = [accuracy - 0.05, accuracy + 0.05]
    return TaskAggregate(
        scores={"accuracy": accuracy, "accuracy_ci": ci, "n": n, "n_failed": failed, "n_unscored": 0}
    )


GPT4O = spec("openai", model="gpt-4o", prompt="mcq_cot_v1")
MINI = spec("openai", model="gpt-4o-mini", prompt="mcq_cot_v1")
TASKS = [_task("medqa-4o", GPT4O), _task("medmcqa-4o", GPT4O), _task("medqa-mini", MINI)]
AGGREGATES = {
    "medqa-4o": _aggregate(0.80, 100),
    "medmcqa-4o": _aggregate(0.60, 300, 2),
    "medqa-mini": _aggregate(0.70, 100),
}


def test_overall_scores_average_only_one_system() -> None:
    systems = task_system_names(SuiteSpec(name="s", tasks=TASKS))
    assert systems == {"medqa-4o": "gpt-4o", "medmcqa-4o": "gpt-4o", "medqa-mini": "gpt-4o-mini"}
    # two systems: counts summed (100 + 300 + 100 cases, 2 failed), no metric averaged
    assert overall_scores(AGGREGATES, systems) == {
        "n": 500,
        "n_failed": 2,
        "n_unscored": 0,
        "n_tasks": 3,
        "n_systems": 2,
    }
    # each system's own mean over its tasks: gpt-4o (0.80 + 0.60) / 2 = 0.70 over 2 tasks; mini 0.70 alone
    by_system = overall_by_system(AGGREGATES, systems)
    assert list(by_system) == ["gpt-4o", "gpt-4o-mini"]
    assert by_system["gpt-4o"] == {
        "accuracy": pytest.approx(0.70),
        "n": 400,
        "n_failed": 2,
        "n_unscored": 0,
        "n_tasks": 2,
    }
    assert by_system["gpt-4o-mini"]["accuracy"] == 0.70 and by_system["gpt-4o-mini"]["n_tasks"] == 1
    # one system: the mean as before (and without systems, the old behaviour)
    one = {k: AGGREGATES[k] for k in ("medqa-4o", "medmcqa-4o")}
    assert overall_scores(one, systems)["accuracy"] == pytest.approx(0.70)
    assert overall_scores(one, systems)["n_systems"] == 1
    assert overall_scores(AGGREGATES)["accuracy"] == pytest.approx((0.80 + 0.60 + 0.70) / 3)


def _run(
    tasks: list[TaskSpec], aggregates: dict[str, TaskAggregate], provenance: dict[str, Any]
) -> RunResult:
    info = RunInfo(
        run_id="r1",
        suite=SuiteSpec(name="s", tasks=tasks),
        status="finished",
        created_at=datetime(2026, 12, 1, tzinfo=UTC),
        provenance=provenance,
    )
    return RunResult(info=info, results=[], aggregates=aggregates, overall=overall_scores(aggregates))


def test_reports_of_two_systems_show_each_systems_own_mean_and_no_mean_across() -> None:
    systems = task_system_names(SuiteSpec(name="s", tasks=TASKS))
    stored = {"overall_by_system": overall_by_system(AGGREGATES, systems)}
    run = _run(TASKS, AGGREGATES, stored)  # overall as an older finalize stored it: mean of all three
    report = build_report(run)
    assert "accuracy" not in report["overall_scores"] and report["overall_scores"]["n_systems"] == 2
    assert report["overall_by_system"]["gpt-4o"]["tasks"] == ["medqa-4o", "medmcqa-4o"]
    assert report["overall_by_system"]["gpt-4o"]["scores"]["accuracy"] == pytest.approx(0.70)
    assert report["overall_note"].startswith("No mean over all tasks: the 3 tasks ran 2 different systems")
    md = render_markdown(run)
    overall = md.split("## Overall")[1].split("\n## ")[0]
    assert "No mean over all tasks" in overall and "### Mean over the tasks of gpt-4o" in overall
    assert "70.00% [65.0, 75.0]" not in overall  # a mean has no interval: only the task rows carry them
    assert "| accuracy | 70.00% |" in overall and "gpt-4o-mini" not in overall.split("###")[1]
    html = render_html(run)
    assert "No mean over all tasks" in html and "Mean over the tasks of gpt-4o" in html
    assert "<th>System</th>" in html


def test_reports_of_one_system_show_its_mean_labelled() -> None:
    tasks = TASKS[:2]
    aggregates = {t.id: AGGREGATES[t.id] for t in tasks}
    run = _run(tasks, aggregates, {})
    report = build_report(run)
    assert report["overall_scores"]["accuracy"] == pytest.approx(0.70)
    assert report["overall_by_system"] == {
        "gpt-4o": {"type": "openai", "tasks": ["medqa-4o", "medmcqa-4o"], "scores": report["overall_scores"]}
    }
    md = render_markdown(run)
    assert "## Overall\n\nmean over the tasks of one system (gpt-4o).\n" in md
    assert "| Task | System |" not in md


def test_the_demo_no_longer_averages_gpt4_and_gpt35(tmp_path: Path) -> None:
    suite = Path(str(resources.files("clineval.demo") / "suite.yaml"))
    run = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None)
    )
    # GPT-4 166/200, GPT-3.5 141/200: the old "overall" (166 + 141) / 400 = 76.75% is shown nowhere
    assert run.aggregates["medqa-gpt-4-cot"].scores["accuracy"] == 166 / 200
    assert run.aggregates["medqa-gpt-35-cot"].scores["accuracy"] == 141 / 200
    report = json.loads(json.dumps(build_report(run)))
    assert "accuracy" not in report["overall_scores"] and report["overall_scores"]["n"] == 400
    assert [g["tasks"] for g in report["overall_by_system"].values()] == [
        ["medqa-gpt-4-cot"],
        ["medqa-gpt-35-cot"],
    ]
    assert list(report["overall_by_system"]) == [
        "medqa_cot_gpt-4-32k_first200",
        "medqa_cot_gpt-35-turbo-16k_first200",
    ]
    for text in (render_markdown(run), render_html(run)):
        assert "76.75" not in text and "No mean over all tasks: the 2 tasks ran 2 different systems" in text
    assert [g.name for g in system_groups(run.info.suite.tasks)] == list(report["overall_by_system"])


def test_the_combined_score_has_no_mean_across_systems() -> None:
    combined = ComponentSpec(
        type="combined_score", args={"name": "combined_score", "weights": {"diagnostics": 1.0}}
    )
    values = {"medqa-4o": 0.9, "medmcqa-4o": 0.7, "medqa-mini": 0.2}
    aggregates = {
        t: TaskAggregate(scores={**a.scores, "combined_score": values[t], "combined_score_ci": [0.0, 1.0]})
        for t, a in AGGREGATES.items()
    }
    for tasks, shown in ((TASKS, False), (TASKS[:2], True)):
        chosen = {t.id: aggregates[t.id] for t in tasks}
        info = RunInfo(
            run_id="r1",
            suite=SuiteSpec(name="s", tasks=tasks, combined=combined),
            status="finished",
            created_at=datetime(2026, 12, 1, tzinfo=UTC),
        )
        mean = sum(values[t.id] for t in tasks) / len(tasks)  # 0.60 over three tasks, 0.80 over gpt-4o's two
        run = RunResult(info=info, results=[], aggregates=chosen, overall={"combined_score": mean})
        md, html = render_markdown(run), render_html(run)
        assert (f"**combined_score = {mean:.4f}**" in md) is shown
        assert ("no mean over tasks, they ran 2 different systems" in md) is not shown
        assert ("combined_score = " in html) is shown
