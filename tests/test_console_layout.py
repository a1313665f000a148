"""Console tables keep their labels at every width: a table when it fits, else one block per row.

Real runs (the packaged demo, the four-tier example, a DDx run on Open-XDDx, golden-set runs compared and
queried) are rendered at 80, 100 and 200 columns; every task id, metric name and stratum value must appear
whole on one line, no value may be cut (no ellipsis), and no line may be wider than the console.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from clineval.core import RunResult
from clineval.releases import gate as releases
from clineval.report import print_run_summary
from clineval.report.compare import print_comparison
from clineval.report.layout import Col, print_records
from clineval.runs import run as api
from clineval.testing.cds_pipeline import running_pipeline
from tests.golden_runs import ROWS, run_golden
from tests.test_ddx_example_suite import DISTRACTOR, suite_for

ROOT = Path(__file__).resolve().parents[1]
WIDTHS = (80, 100, 200)


def render(width: int, draw: Callable[[Console], None]) -> str:
    console = Console(record=True, width=width, color_system=None)
    draw(console)
    return console.export_text()


def whole_on_a_line(text: str, label: str) -> bool:
    """``label`` appears on one line, not run into other characters (so not cut, wrapped or glued)."""
    pattern = re.compile(rf"(?<!\S){re.escape(label)}(?!\S)")
    return any(pattern.search(line) for line in text.splitlines())


def check_nothing_lost(text: str, width: int, labels: Iterable[str], values: Iterable[str] = ()) -> None:
    missing = [label for label in labels if not whole_on_a_line(text, label)]
    assert not missing, f"labels not whole on a line at {width} columns: {missing}\n{text}"
    absent = [value for value in values if value not in text]
    assert not absent, f"values lost at {width} columns: {absent}\n{text}"
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width


def summary_labels(run: RunResult) -> tuple[list[str], list[str]]:
    """Task ids, headline metric names and stratum values (labels); formatted headline values."""
    labels: list[str] = []
    for task_id, agg in run.aggregates.items():
        labels.append(task_id)
        labels += [k for k in agg.scores if f"{k}_ci" in agg.scores and k != "n"]
        for values in agg.strata.values():
            labels += list(values)
    return labels, []


def test_demo_summary_at_every_width(tmp_path: Path) -> None:
    suite = Path(str(resources.files("clineval.demo") / "suite.yaml"))
    run = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None)
    )
    labels, _ = summary_labels(run)
    # GPT-4 answered 166 of the 200 questions right, GPT-3.5 141 (Wilson 95% intervals).
    values = ["83.00% [77.2, 87.6]", "70.50% [63.8, 76.4]"]
    shapes = {}
    for width in WIDTHS:
        text = render(width, lambda c: print_run_summary(run, c))
        check_nothing_lost(text, width, [*labels, "step1", "step2&3", "no mean over tasks:"], values)
        # two systems (GPT-4, GPT-3.5): their mean (166 + 141) / 400 = 76.75% describes neither, so not shown
        assert "76.75" not in text and "medqa_cot_gpt-4-32k_first200: medqa-gpt-4-cot" in text
        shapes[width] = "task " in text.splitlines()[1]  # the table's header row follows the title
    assert shapes == {80: False, 100: True, 200: True}  # the full table needs 92 columns


def test_four_tier_summary_at_every_width(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "examples" / "cds_recommender"))
    from run_four_tier import run as run_four_tier  # type: ignore[import-not-found]

    run = run_four_tier(tmp_path)
    labels, _ = summary_labels(run)
    conditions = sorted({row["metadata"]["condition"] for row in ROWS})
    assert set(conditions) <= set(labels) and len(labels) > 20
    scores = run.aggregates["golden"].scores
    # 97 of the 102 reports pass the schema check (the 5 with no recommended action fail: 2 troponin-negative
    # chest pains, effusion + nodule, the haemolysed K+ and the pleural-fluid pH case); Wilson 95% CI
    # [0.8903, 0.9789] by hand. Guideline adherence is a mean, written to 4 places.
    assert scores["schema_pass_rate"] == 97 / 102
    for width in WIDTHS:
        text = render(width, lambda c: print_run_summary(run, c))
        check_nothing_lost(
            text, width, labels, ["95.10% [89.0, 97.9]", f"{scores['guideline_adherence']:.4f}"]
        )


def test_ddx_summary_at_every_width(tmp_path: Path) -> None:
    from clineval.config import load_suite

    cases = load_suite(suite_for(tmp_path, "http://127.0.0.1:1/predict"), limit=30, seed=3).tasks[0].cases
    reports = {
        c.id: {"differential": [{"diagnosis": c.reference.differential[0]}, {"diagnosis": DISTRACTOR}]}
        for c in cases
    }
    with running_pipeline(reports) as (url, _):
        request = api.RunRequest(
            suite_path=suite_for(tmp_path, url), limit=30, seed=3, store_url=f"sqlite:///{tmp_path}/s.db"
        )
        run = api.run_suite(request)
    labels, _ = summary_labels(run)
    assert "top1_accuracy" in labels and "recall" in labels
    assert run.aggregates["open-xddx"].scores["top1_accuracy"] == 1.0  # the first diagnosis is always right
    for width in WIDTHS:
        check_nothing_lost(render(width, lambda c: print_run_summary(run, c)), width, labels, ["100.00% ["])


def test_comparison_and_results_keep_labels(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    base = run_golden(tmp_path, url, "base", set())
    worse = run_golden(tmp_path, url, "worse", {"copd"})
    comparison = releases.compare_runs(url, base, worse)
    conditions = sorted({row["metadata"]["condition"] for row in ROWS})
    copd = [row["id"] for row in ROWS if row["metadata"]["condition"] == "copd"]
    metrics = ["schema_pass_rate", "guideline_adherence", "adherence_copd_exacerbation_acute"]
    for width in WIDTHS:
        text = render(width, lambda c: print_comparison(comparison, c))
        check_nothing_lost(text, width, [*conditions, *metrics, *copd, "condition=copd"])
        # only the copd cases were made non-adherent: they are the changed cases, listed whole
        assert f"changed cases ({len(copd)})" in text and len(copd) == 15

    for columns, table in (("80", False), ("200", True)):
        shown = subprocess.run(
            [sys.executable, "-m", "clineval", "results", "--store", url, "--run", worse],
            cwd=tmp_path,
            env={**os.environ, "COLUMNS": columns},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert shown.returncode == 0, shown.stderr
        lines = shown.stdout.splitlines()
        assert any(re.match(r"time\s+run\s+type\s+tenant\s+task\s", line) for line in lines) == table
        assert whole_on_a_line(shown.stdout, "golden") and whole_on_a_line(shown.stdout, "copd")
        assert "…" not in shown.stdout


def test_records_shrink_only_free_text_then_stack() -> None:
    cols = [Col("case", label=True), Col("A"), Col("note", shrink=True, justify="left")]
    rows = [["case-with-a-long-identifier-0001", "0.5000", "x" * 60]]
    text = render(60, lambda c: print_records(c, cols, rows))
    assert "case-with-a-long-identifier-0001  0.5000  xxxxxxxxxxxxxxxxx…" in text  # note cut, label whole
    narrow = render(40, lambda c: print_records(c, cols, rows, title=Text("t")))
    assert narrow.splitlines()[:3] == ["t", "  case-with-a-long-identifier-0001", "    A 0.5000"]
    assert "x" * 60 in narrow  # stacked: nothing cut

    grouped = [["step1", "accuracy", "1"], ["step1", "failed_rate", "2"], ["step2", "accuracy", "3"]]
    dedupe = [Col("key", label=True, dedupe=True), Col("metric", label=True), Col("v")]
    table = render(80, lambda c: print_records(c, dedupe, grouped)).splitlines()
    assert [line.split() for line in table[2:5]] == [
        ["step1", "accuracy", "1"],
        ["failed_rate", "2"],
        ["step2", "accuracy", "3"],
    ]


@pytest.mark.parametrize("width", [80, 120])
def test_empty_rows_render(width: int) -> None:
    text = render(width, lambda c: print_records(c, [Col("a", label=True), Col("b")], [], title="nothing"))
    assert text.splitlines()[0] == "nothing"
