"""Stored release-gate decisions in a run's reports: report.json ``gates``, a Markdown and an HTML section."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest

from clineval.core import GateDecision, GateDecisionRow, RunInfo, RunResult, SuiteSpec
from clineval.releases import gate as releases
from clineval.report import build_report, render_html, render_markdown, report_json_text
from tests.backends import BACKENDS, backend_url
from tests.cli_helpers import clineval
from tests.golden_runs import run_golden

XSS = "<script>alert(1)</script>"


@pytest.fixture(scope="module", params=BACKENDS)
def gated(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, str, str, str]]:
    """(folder, store URL, baseline run, candidate run): the candidate, gated once, breaks COPD."""
    folder = tmp_path_factory.mktemp("gate_report")
    with backend_url(request.param, folder) as url:
        baseline = run_golden(folder, url, "baseline", {"pe", "mi"})
        candidate = run_golden(folder, url, "candidate", {"copd"})
        releases.promote_baseline(url, baseline, "main")
        # the golden set includes train-split cases: gate them knowingly (held-out rules: test_baselines_gate)
        result = releases.gate_run(url, candidate, "main", allow_tuned_cases=True)
        assert not result.passed
        yield folder, url, baseline, candidate


def _report(folder: Path, url: str, run_id: str, out: str) -> tuple[dict[str, object], str, str]:
    proc = clineval("report", run_id[:12], "--out", str(folder / out), "--store", url, cwd=folder)
    assert proc.returncode == 0, proc.stderr
    text = (folder / out / "report.json").read_text(encoding="utf-8")
    report = json.loads(text, parse_constant=lambda c: pytest.fail(f"invalid JSON constant {c}"))
    md = (folder / out / "report.md").read_text(encoding="utf-8")
    page = (folder / out / "report.html").read_text(encoding="utf-8")
    return report, md, page


def test_gate_decisions_read_back(gated: tuple[Path, str, str, str]) -> None:
    _, url, baseline, candidate = gated
    (decision,) = releases.gate_decisions(url, candidate[:10])  # a prefix resolves
    assert (decision.baseline_name, decision.baseline_version, decision.tenant) == ("main", 1, "default")
    assert decision.mode == "strict" and decision.passed is False
    assert [(r.metric, r.stratum) for r in decision.failures] == [("guideline_adherence", "condition=copd")]
    assert releases.gate_decisions(url, baseline) == []


def test_report_shows_the_failed_gate(gated: tuple[Path, str, str, str]) -> None:
    folder, url, _, candidate = gated
    report, md, page = _report(folder, url, candidate, "cand")

    gates = report["gates"]
    assert isinstance(gates, list) and len(gates) == 1
    gate = gates[0]
    assert gate["passed"] is False
    assert (gate["baseline_name"], gate["baseline_version"], gate["mode"]) == ("main", 1, "strict")
    failed = [r for r in gate["rows"] if r["status"] == "fail"]
    assert failed == [
        {
            "task": "golden",
            "metric": "guideline_adherence",
            "stratum": "condition=copd",
            "tier": 3,
            "baseline": 1.0,
            "candidate": 0.0,
            "delta": -1.0,
            "p": None,
            "ci": None,
            "status": "fail",
            "note": "",
            "direction": "higher",
            "role": "gate",
        }
    ]
    assert datetime.fromisoformat(gate["created_at"]).tzinfo is not None

    section = md.split("## Release gate", 1)[1].split("\n## ", 1)[0]
    assert "### FAIL: baseline main v1, tenant default, strict mode, " in section
    copd = "| FAIL | golden | guideline_adherence | condition=copd | 1.0000 | 0.0000 | -1.0000 | n/a |"
    assert copd in section
    rows = [line for line in section.splitlines() if line.startswith(("| FAIL ", "| PASS "))]
    assert rows[0].startswith("| FAIL |")  # failed rows first
    assert all(not line.startswith("| FAIL |") for line in rows[1:])
    assert "1 of " in section and "gating metric(s) regressed" in section

    assert '<section class="card" id="release-gate">' in page
    assert '<span class="gate fail">FAIL</span>' in page
    gate_html = page.split('id="release-gate"', 1)[1].split("</section>", 1)[0]
    assert "<td>guideline_adherence</td><td>condition=copd</td>" in gate_html
    assert '<td class="num">1.0000</td><td class="num">0.0000</td><td class="num">-1.0000</td>' in gate_html


def test_report_without_gates_has_no_section(gated: tuple[Path, str, str, str]) -> None:
    folder, url, baseline, _ = gated
    report, md, page = _report(folder, url, baseline, "base")
    assert report["gates"] == []
    assert "Release gate" not in md and "release-gate" not in page and "Release gate" not in page


# -- the renderers, with hand-built decisions ---------------------------------------------------------------
def _run_result() -> RunResult:
    created = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    info = RunInfo(
        run_id="20240501-gates",
        suite=SuiteSpec(name="gates", tasks=[]),
        status="finished",
        created_at=created,
        finished_at=created,
    )
    return RunResult(info=info, results=[], aggregates={})


def _row(
    metric: str, stratum: str, base: float, cand: float, status: str, **extra: object
) -> GateDecisionRow:
    return GateDecisionRow.model_validate(
        {
            "task": "t",
            "metric": metric,
            "stratum": stratum,
            "tier": 1,
            "baseline": base,
            "candidate": cand,
            "delta": cand - base,
            "status": status,
            **extra,
        }
    )


def _decision(rows: list[GateDecisionRow], *, passed: bool = False, name: str = "main") -> GateDecision:
    return GateDecision(
        baseline_name=name,
        baseline_version=2,
        tenant="acme",
        mode="statistical",
        passed=passed,
        created_at=datetime(2024, 5, 2, 9, 30, tzinfo=UTC),
        rows=rows,
    )


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text += data


def test_gate_strings_from_data_are_escaped() -> None:
    stratum = f"condition={XSS}|x"
    bad = _row(f"m{XSS}", stratum, 0.9, 0.5, "fail", note=f"note {XSS}", p=0.001, ci=(-0.5, -0.3))
    decision = _decision([bad], name=f"b{XSS}")
    run = _run_result()

    page = render_html(run, [decision])
    assert XSS not in page and "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    parser = _Tags()
    parser.feed(page)
    assert "script" not in parser.tags
    assert f"condition={XSS}|x" in parser.text and f"note {XSS}" in parser.text  # shown as text
    assert "0.0010" in page and "-0.4000" in page and "statistical mode" in page

    md = render_markdown(run, [decision])
    assert XSS not in md
    assert "| FAIL | t | m&lt;script&gt;alert(1)&lt;/script&gt; | condition=&lt;script&gt;" in md
    assert "\\|x |" in md  # a pipe cannot break the table

    report = json.loads(report_json_text(run, [decision]))
    assert report["gates"][0]["rows"][0]["stratum"] == f"condition={XSS}|x"  # JSON keeps the raw value
    assert report["gates"][0]["rows"][0]["ci"] == [-0.5, -0.3]


def test_nan_is_null_and_passing_gate_badge() -> None:
    nan_row = _row("recall", "", math.nan, 0.7, "pass").model_copy(update={"delta": None})
    decision = _decision([nan_row], passed=True)
    run = _run_result()
    report = build_report(run, [decision])
    assert report["gates"][0]["rows"][0]["baseline"] is None and report["gates"][0]["passed"] is True
    json.dumps(report, allow_nan=False)  # strict JSON
    page = render_html(run, [decision])
    assert '<span class="gate pass">PASS</span>' in page
    heading = "### PASS: baseline main v2, tenant acme, statistical mode, 2024-05-02 09:30 UTC"
    assert heading in render_markdown(run, [decision])


def test_many_gating_rows_list_only_the_failed_ones() -> None:
    rows = [_row(f"metric_{i:02d}", "", 0.5, 0.6, "pass") for i in range(40)]
    rows += [_row("tracked_one", "", 0.5, 0.1, "tracked"), _row("bad", "s=1", 0.8, 0.2, "fail")]
    decision = _decision(rows)
    run = _run_result()
    md = render_markdown(run, [decision])
    assert "| FAIL | t | bad | s=1 | 0.8000 | 0.2000 | -0.6000 | n/a |" in md
    assert "metric_00" not in md and "tracked_one" not in md
    assert "1 of 41 gating metric(s) regressed; 40 passed (not listed); 1 tracked" in md
    page = render_html(run, [decision])
    assert "metric_00" not in page and "<td>bad</td>" in page
    assert len(build_report(run, [decision])["gates"][0]["rows"]) == 42  # JSON keeps every row

    few = _decision([_row("ok", "", 0.5, 0.6, "pass"), _row("bad", "", 0.8, 0.2, "fail")])
    md = render_markdown(run, [few])
    assert md.index("| FAIL | t | bad |") < md.index("| PASS | t | ok |")  # failed first, passed listed
