"""Reports render what RunResult holds: JSON, Markdown, HTML (escaped, self-contained), JSONL, console."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest
from rich.console import Console

from clineval.core import (
    CaseResult,
    ComponentSpec,
    RunInfo,
    RunResult,
    Score,
    StructuredOutput,
    SuiteSpec,
    SystemOutput,
    TaskAggregate,
    TaskSpec,
)
from clineval.report import (
    build_report,
    print_run_summary,
    print_runs_table,
    render_html,
    render_markdown,
    write_reports,
)

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_ATTR = '"><img src=x onerror=alert(2)>'
NAN = math.nan


def task(task_id: str, stratify: list[str]) -> TaskSpec:
    return TaskSpec(
        id=task_id,
        dataset=ComponentSpec(type="jsonl", args={"path": f"{task_id}.jsonl"}, content_hash="d" * 64),
        system=ComponentSpec(type="predictions"),
        scorers=[ComponentSpec(type="mcq")],
        stratify=stratify,
    )


def case(
    task_id: str,
    case_id: str,
    scores: dict[str, Score],
    *,
    text: str | None = "B",
    error: tuple[str, str] | None = None,
    structured: StructuredOutput | None = None,
) -> CaseResult:
    output = (
        SystemOutput.failure(error[0], error[1], latency_s=2.0)
        if error
        else SystemOutput(text=text, structured=structured, latency_s=0.5)
    )
    return CaseResult(
        task_id=task_id,
        case_id=case_id,
        output=output,
        scores=scores,
        metadata={"meta_info": "step1"},
        reference="B",
    )


@pytest.fixture
def run() -> RunResult:
    suite = SuiteSpec(
        name="demo <suite>",
        source="suites/demo.yaml",
        tasks=[task("medqa", ["meta_info"]), task("ddx", ["specialty"])],
    )
    medqa = TaskAggregate(
        scores={
            "accuracy": 0.8397,
            "accuracy_ci": [0.818, 0.859],
            "unparsed_rate": 0.0125,
            "failed_rate": 0.003,
            "macro_f1": NAN,
            "n": 1273,
            "n_failed": 4,
            "n_unscored": 16,
        },
        strata={
            "meta_info": {
                "step1": {"accuracy": 0.85, "accuracy_ci": [0.82, 0.88], "n": 600},
                "step2&3": {"accuracy": 0.83, "accuracy_ci": [0.80, 0.86], "n": 672},
                f"{XSS_SCRIPT} | x": {"accuracy": 1.0, "accuracy_ci": [0.2, 1.0], "n": 1},
            }
        },
    )
    ddx = TaskAggregate(
        scores={
            "top1_accuracy": 0.41,
            "top1_accuracy_ci": [0.35, 0.47],
            "top5_accuracy": 0.72,
            "top5_accuracy_ci": [0.66, 0.78],
            "n": 240,
            "n_failed": 0,
            "n_unscored": 0,
        },
        strata={
            "specialty": {
                "cardiology": {"top1_accuracy": 0.5, "top1_accuracy_ci": [0.4, 0.6], "n": 100},
                XSS_ATTR: {"top1_accuracy": NAN, "top1_accuracy_ci": None, "n": 0},
            }
        },
    )
    results = [
        case("medqa", "q1", {"mcq": Score(value=1.0, label="correct")}),
        case("medqa", "q2", {"mcq": Score(value=0.0, label="incorrect")}, text=f"I think {XSS_SCRIPT} C"),
        case("medqa", "q3", {"mcq": Score(value=NAN, label="unparsed")}, text=XSS_ATTR),
        case("medqa", "q4", {"mcq": Score(value=NAN, label="failed")}, error=("timeout", "no reply in 30 s")),
        case("medqa", "q5", {"mcq": Score(value=NAN, label="failed")}, error=("timeout", "no reply in 30 s")),
        case("medqa", "q6", {"mcq": Score(value=NAN, label="failed")}, error=("http_500", XSS_SCRIPT)),
        case(
            "ddx",
            "d1",
            {"ddx": Score(value=0.0, breakdown={"matched": []})},
            text=None,
            structured=StructuredOutput(answer=XSS_ATTR),
        ),
    ]
    info = RunInfo(
        run_id="20240501-abcdef",
        suite=suite,
        status="finished",
        created_at=datetime(2024, 5, 1, 12, tzinfo=UTC),
        finished_at=datetime(2024, 5, 1, 13, tzinfo=UTC),
        provenance={
            "versions": {"clineval": "0.1.0", "python": "3.11"},
            "dataset_hashes": {"medqa": "d" * 64},
            "timings": {"wall_s": 12.5},
            "note": XSS_SCRIPT,
        },
    )
    return RunResult(
        info=info,
        results=results,
        aggregates={"medqa": medqa, "ddx": ddx},
        overall={"combined": 0.61, "combined_ci": [0.57, 0.65]},
    )


def strict_loads(text: str) -> object:
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))


def test_build_report_passes_aggregates_through(run: RunResult) -> None:
    report = build_report(run)
    for key in (
        "run_id",
        "suite",
        "overall_scores",
        "task_scores",
        "strata",
        "counts",
        "provenance",
        "created_at",
        "finished_at",
        "status",
    ):
        assert key in report
    assert report["run_id"] == "20240501-abcdef" and report["status"] == "finished"
    assert report["suite"]["name"] == "demo <suite>" and report["suite"]["source"] == "suites/demo.yaml"
    assert report["suite"]["spec_hash"] == run.info.suite.spec_hash
    medqa = report["task_scores"]["medqa"]
    assert medqa["accuracy"] == 0.8397 and medqa["accuracy_ci"] == [0.818, 0.859]
    assert medqa["macro_f1"] is None  # NaN -> null
    assert report["task_scores"]["ddx"] == run.aggregates["ddx"].scores
    assert report["strata"]["medqa"]["meta_info"]["step1"] == {
        "accuracy": 0.85,
        "accuracy_ci": [0.82, 0.88],
        "n": 600,
    }
    assert report["strata"]["ddx"]["specialty"][XSS_ATTR]["top1_accuracy"] is None
    assert report["counts"]["medqa"] == {"n": 1273, "n_failed": 4, "n_unscored": 16}
    assert report["overall_scores"] == {"combined": 0.61, "combined_ci": [0.57, 0.65]}
    assert report["provenance"] == run.info.provenance
    assert report["failures_by_kind"] == {"medqa": {"timeout": 2, "http_500": 1}}
    json.dumps(report, allow_nan=False)  # strict JSON


def test_write_reports_files(run: RunResult, tmp_path: Path) -> None:
    paths = write_reports(run, tmp_path / "out")
    assert [p.name for p in paths] == ["report.json", "report.md", "report.html", "results.jsonl"]
    assert strict_loads(paths[0].read_text(encoding="utf-8")) == build_report(run)
    lines = paths[3].read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(run.results)
    records = [strict_loads(line) for line in lines]
    first, failed, structured = records[1], records[3], records[6]
    assert isinstance(first, dict) and isinstance(failed, dict) and isinstance(structured, dict)
    assert first["task_id"] == "medqa" and first["case_id"] == "q2" and first["reference"] == "B"
    assert first["scores"]["mcq"] == {
        "value": 0.0,
        "label": "incorrect",
        "explanation": None,
        "breakdown": {},
    }
    assert first["output"] == f"I think {XSS_SCRIPT} C" and first["latency_s"] == 0.5
    assert first["error"] is None
    assert failed["scores"]["mcq"]["value"] is None  # NaN -> null
    assert failed["error"] == {"kind": "timeout", "message": "no reply in 30 s", "attempts": 1}
    assert structured["structured"] == {"answer": XSS_ATTR}


class _TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.event_attrs: list[str] = []
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.event_attrs += [name for name, _ in attrs if name.startswith("on") or name in ("src", "href")]

    def handle_data(self, data: str) -> None:
        self.text += data


def test_html_escapes_everything_and_is_self_contained(run: RunResult) -> None:
    page = render_html(run)
    assert XSS_SCRIPT not in page and "<img" not in page and XSS_ATTR not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;" in page
    parser = _TagCollector()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags and "link" not in parser.tags
    assert parser.event_attrs == []  # no on* handlers, no src/href: nothing fetched
    assert XSS_SCRIPT in parser.text  # shown to the reader as text
    assert "@import" not in page and "url(" not in page
    assert re.findall(r"https?://[^\"' ]+", page) == ["http://www.w3.org/2000/svg"] * page.count("<svg")


def test_html_has_one_bar_and_whisker_per_stratum(run: RunResult) -> None:
    page = render_html(run)
    charts = re.findall(r'<svg class="chart".*?</svg>', page, flags=re.S)
    assert len(charts) == 2
    medqa_chart, ddx_chart = charts
    assert medqa_chart.count('<rect class="bar"') == 3 and medqa_chart.count('class="whisker"') == 3
    assert 'aria-label="accuracy by meta_info"' in medqa_chart
    assert ddx_chart.count('<rect class="bar"') == 1  # the NaN stratum gets no bar, only "n/a"
    assert "n/a" in ddx_chart and "top1_accuracy by specialty" in ddx_chart
    assert "83.97% [81.8, 85.9]" in page
    assert "timeout" in page and "q4" in page and "q2" in page and "d1" in page


def test_markdown_tables(run: RunResult) -> None:
    md = render_markdown(run)
    assert "| Task | accuracy | top1_accuracy | top5_accuracy | n | failed | unscored |" in md
    assert "| medqa | 83.97% [81.8, 85.9] | — | — | 1273 | 4 | 16 |" in md
    assert "| ddx | — | 41.00% [35.0, 47.0] | 72.00% [66.0, 78.0] | 240 | 0 | 0 |" in md
    assert "| step2&amp;3 | 672 | 83.00% [80.0, 86.0] |" in md
    assert "| &lt;script&gt;alert(1)&lt;/script&gt; \\| x | 1 | 100.00% [20.0, 100.0] |" in md
    assert "| medqa | timeout | 2 |" in md and "| medqa | http_500 | 1 |" in md
    assert "| medqa | timeout | 2 | no reply in 30 s |" in md  # each kind's message, read from the results
    assert "| macro_f1 | — |  |" in md and "| unparsed_rate | 1.25% |  |" in md
    assert "| combined | 0.6100 | [0.5700, 0.6500] |" in md
    assert '"wall_s": 12.5' in md and XSS_SCRIPT not in md.split("## Provenance")[0]


def test_console_summary_and_runs_table(run: RunResult) -> None:
    console = Console(record=True, width=160, color_system=None)
    print_run_summary(run, console)
    out = console.export_text()
    assert "20240501-abcdef" in out and "medqa" in out and "top5_accuracy" in out
    assert "83.97%" in out and "[81.8, 85.9]" in out and "1273" in out

    renamed = run.info.suite.model_copy(update={"name": "[bold]x[/bold]"})
    marked = run.info.model_copy(update={"suite": renamed})
    long_id = marked.model_copy(update={"run_id": "934d27c10c8a416aa8966a7e21df9141"})
    for width in (80, 120):
        console = Console(record=True, width=width, color_system=None)
        print_runs_table([(long_id, 7, 2), (run.info, 0, 0)], console)
        out = console.export_text()
        assert "934d27c10c8a416aa8966a7e21df9141" in out and "20240501-abcdef" in out  # ids never cut
        assert "2 tasks, 7 cases, 2 failed" in out  # a block per run: 80 and 120 columns are too narrow
    assert "[bold]x[/bold]" in out and "2024-05-01 12:00" in out  # markup shown literally


def test_unfinished_run_renders(run: RunResult, tmp_path: Path) -> None:
    running = RunResult(
        info=run.info.model_copy(update={"status": "running", "finished_at": None}),
        results=run.results[:2],
        aggregates={},
    )
    report = build_report(running)
    assert report["task_scores"] == {} and report["finished_at"] is None
    assert len(write_reports(running, tmp_path)) == 4
    console = Console(record=True, width=120, color_system=None)
    print_run_summary(running, console)
    assert "no aggregates" in console.export_text()
