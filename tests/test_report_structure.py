"""The static report's structure (issue 14 item 3): the four-tier scorecard, a chart per headline metric
per stratum, tables that scroll inside their card, sample cases with question / extracted / gold, the model
comparison chart on the demo, and the loud banner when a component failed on most cases."""

from __future__ import annotations

import math
import re
import sys
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import pytest
from rich.console import Console

from clineval.analysis.degradation import assess
from clineval.core import (
    CaseInput,
    CaseResult,
    ComponentSpec,
    RunInfo,
    RunResult,
    Score,
    SuiteSpec,
    SystemOutput,
    TaskAggregate,
    TaskSpec,
)
from clineval.datasets.registry import DATASETS
from clineval.report import ReportContext, build_report, print_run_summary, render_html, render_markdown
from clineval.report.sections.cases import case_fields
from clineval.runs import run as api

ROOT = Path(__file__).resolve().parents[1]
XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def four_tier(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    sys.path.insert(0, str(ROOT / "examples" / "cds_recommender"))
    from run_four_tier import run

    return run(tmp_path_factory.mktemp("four_tier"))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    folder = tmp_path_factory.mktemp("demo")
    suite = Path(str(resources.files("clineval.demo") / "suite.yaml"))
    request = api.RunRequest(suite_path=suite, store_url=f"sqlite:///{folder}/s.db", cache_path=None)
    return api.run_suite(request)


def context_for(run: RunResult) -> ReportContext:
    """What the CLI hands the report: the suite's scorers as built, and the dataset loader."""
    return ReportContext(
        scorers=api.scorers_for(run.info.suite),
        load_dataset=lambda fmt, options, base: DATASETS.get(fmt)(options, base),
    )


def _tables_outside_scroll(page: str) -> int:
    return len(re.findall(r'(?<!<div class="scroll">)<table', page))


def test_four_tier_scorecard_grouped_by_tier(four_tier: RunResult) -> None:
    scores = four_tier.aggregates["golden"].scores
    rules = [k.removeprefix("adherence_") for k in scores if k.startswith("adherence_") and "_ci" not in k]
    assert len(rules) >= 10
    context = context_for(four_tier)
    assert "<h3>Tier 1" not in render_html(four_tier)  # no scorers given: the flat metric list
    page = render_html(four_tier, context=context)
    titles = re.findall(r"<h3>(Tier \d: [^<]*)</h3>", page)
    assert titles == [
        "Tier 1: structural and safety checks",
        "Tier 2: retrieval / citations",
        "Tier 3: guideline adherence",
        "Tier 4: scoped LLM judge (never gates)",
    ]
    tier1 = page[page.index("Tier 1: structural") : page.index("Tier 2: retrieval")]
    assert "schema_pass_rate" in tier1 and "latency_p95_total" in tier1 and "judge_" not in tier1
    tier3 = page[page.index("Tier 3: guideline") : page.index("Tier 4: scoped")]
    assert "<th>Rule</th><th>n applicable</th><th>Adherence</th><th>95% CI</th>" in tier3
    assert tier3.count('<tr><td class="mono">') == len(rules)
    assert (
        '<td class="mono">copd_exacerbation_acute</td><td class="num">16</td><td class="num">100.00%</td>'
        in tier3
    )
    assert "adherence_" not in tier3 and "n_applicable_" not in tier3  # no interleaved per-rule metrics
    tier4 = page[page.index("Tier 4: scoped") :]
    assert "judge error rate: <strong>0.00%</strong>" in tier4 and "judge_coherence" in tier4
    assert "<h3>Overall</h3>" not in page  # one task: the scorecard, not the alphabetical list again

    md = render_markdown(four_tier, context=context)
    assert "### Tier 3: guideline adherence" in md and "| Rule | n applicable | Adherence | 95% CI |" in md
    assert "| pe_stable | " in md and "| adherence_pe_stable |" not in md

    report = build_report(four_tier, context=context)
    tiers = report["scorecard"]["golden"]
    assert [t["tier"] for t in tiers] == [1, 2, 3, 4]
    assert sorted(tiers[2]["rules"]) == sorted(rules) and "guideline_adherence" in tiers[2]["metrics"]
    assert report["banners"] == [] and report["comparisons"] == []


def test_a_chart_per_headline_metric_per_stratum(four_tier: RunResult) -> None:
    page = render_html(four_tier)
    strata = four_tier.aggregates["golden"].strata
    expected = 0
    for values in strata.values():
        metrics = {k for scores in values.values() for k in scores if f"{k}_ci" in scores and k not in ("n",)}
        expected += sum(
            1
            for m in metrics
            if any(isinstance(s.get(m), float) and not math.isnan(s[m]) for s in values.values())  # type: ignore[arg-type]
        )
    charts = re.findall(r'<svg class="chart" .*?aria-label="([^"]*)"', page)
    assert len(charts) == expected > 2 * len(strata)
    assert "guideline_adherence by condition" in charts and "schema_pass_rate by split" in charts


def test_tables_scroll_inside_their_card(four_tier: RunResult, demo: RunResult) -> None:
    for run in (four_tier, demo):
        page = render_html(run, context=context_for(run))
        assert page.count("<table") > 5 and _tables_outside_scroll(page) == 0
        assert ".scroll { overflow-x: auto;" in page and "overflow-wrap: break-word" in page


def test_demo_comparison_chart_and_sample_cases(demo: RunResult) -> None:
    page = render_html(demo, context=context_for(demo))
    (chart,) = re.findall(r'<svg class="chart comparison".*?</svg>', page, flags=re.S)
    groups = ["all", *demo.aggregates["medqa-gpt-4-cot"].strata["meta_info"]]
    assert chart.count('<rect class="bar"') == 2 * len(groups) == chart.count('class="whisker"')
    assert "medqa-gpt-4-cot" in chart and "medqa-gpt-35-cot" in chart
    assert "Model comparison: accuracy on medqa" in page
    report = build_report(demo)
    (comparison,) = report["comparisons"]
    assert comparison["tasks"] == ["medqa-gpt-4-cot", "medqa-gpt-35-cot"]
    assert (
        comparison["groups"][0]["values"]["medqa-gpt-4-cot"]
        == demo.aggregates["medqa-gpt-4-cot"].scores["accuracy"]
    )
    assert "## Model comparison: accuracy on medqa" in render_markdown(demo)

    rows = re.findall(r"<tr><td>medqa-[^<]*</td>.*?</tr>", page.split("<h2>Sample cases</h2>")[1], flags=re.S)
    incorrect = [r for r in rows if ">incorrect</span>" in r]
    assert rows and incorrect
    question = re.search(r'<td class="question">([^<]*)</td>', incorrect[0])
    extracted = re.search(r'<td class="answer extracted">([^<]*)</td>', incorrect[0])
    gold = re.search(r'<td class="answer gold">([^<]*)</td>', incorrect[0])
    assert question and len(question.group(1)) > 40  # the question, read back from the packaged dataset
    assert extracted and re.match(r"[A-E]\. \S", extracted.group(1))  # the letter and its option text
    assert gold and re.match(r"[A-E]\. \S", gold.group(1)) and gold.group(1) != extracted.group(1)


def test_case_fields_from_breakdown_and_input() -> None:
    result = CaseResult(
        task_id="t",
        case_id="c",
        output=SystemOutput(text="I pick C"),
        scores={"mcq": Score(value=0.0, label="incorrect", breakdown={"extracted": "C", "gold": "A"})},
        reference="A",
    )
    given = CaseInput(question=f"Which one? {XSS} " + "word " * 200, options={"A": "Aspirin", "C": XSS})
    fields = case_fields(result, {("t", "c"): given})
    assert fields["label"] == "incorrect" and fields["gold"] == "A. Aspirin"
    assert fields["extracted"] == f"C. {XSS}" and fields["question"].endswith("…")
    assert case_fields(result, {}) == {"label": "incorrect", "extracted": "C", "gold": "A", "question": ""}


def _judge_failed_run() -> RunResult:
    spec = TaskSpec(
        id="cds",
        dataset=ComponentSpec(type="jsonl", args={"path": "x.jsonl"}),
        system=ComponentSpec(type="predictions"),
        scorers=[ComponentSpec(type="judge_dimensions")],
    )
    judged = {"equivalence_judge": [{"key": "k", "error": "connection: refused", "sample": 0}]}
    results = [
        CaseResult(
            task_id="cds",
            case_id=f"c{i}",
            output=SystemOutput(text=f"answer {i}", raw=judged),
            scores={"judge_dimensions": Score(value=math.nan, label="failed")},
        )
        for i in range(4)
    ]
    aggregate = TaskAggregate(
        scores={"judge_coherence": math.nan, "judge_sample_error_rate": 1.0, "n": 4, "n_failed": 0}
    )
    info = RunInfo(
        run_id="r-judge-down",
        suite=SuiteSpec(name="judge down", tasks=[spec]),
        status="finished",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    info = info.model_copy(update={"provenance": {"degradation": assess(results)}})
    return RunResult(info=info, results=results, aggregates={"cds": aggregate})


def test_banner_when_the_judge_failed_on_most_cases() -> None:
    run = _judge_failed_run()
    line = "task cds: judge failed on 4/4 cases (100%): connection 4"
    assert build_report(run)["banners"] == [line]
    page = render_html(run)
    banner = page.index('<div class="banner" role="alert" id="failure-banner">')
    assert banner < page.index("<h2>Headline</h2>") and f"<li>{line}</li>" in page
    md = render_markdown(run)
    assert md.split("\n")[2:5] == [
        "> **⚠ FAILED ON MOST CASES: the affected numbers are not meaningful.**",
        ">",
        f"> - **{line}**",
    ]
    console = Console(record=True, width=200, color_system=None)
    print_run_summary(run, console)
    assert f"FAILED ON MOST CASES: {line}" in console.export_text()


def test_no_banner_below_half() -> None:
    run = _judge_failed_run()
    fine = {"equivalence_judge": [{"key": "k", "error": None, "sample": 0}]}
    healthy = [
        r.model_copy(update={"case_id": f"ok{i}", "output": SystemOutput(text="ok", raw=fine)})
        for i, r in enumerate(run.results[:2])
    ]
    results = [*run.results[:2], *healthy]
    info = run.info.model_copy(update={"provenance": {"degradation": assess(results)}})
    mostly_ok = run.model_copy(
        update={
            "info": info,
            "results": results,
            "aggregates": {"cds": TaskAggregate(scores={"judge_sample_error_rate": 0.5, "n": 4})},
        }
    )
    assert build_report(mostly_ok)["banners"] == []
    assert 'id="failure-banner"' not in render_html(mostly_ok)
