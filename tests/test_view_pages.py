"""The viewer's pages over a real store (the demo MCQ run, a four-tier golden-set run, a DDx run): every
figure a page shows is checked against the stored results, counted here independently."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest
from markupsafe import escape

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from clineval.metrics.intervals import wilson_interval
from clineval.releases import gate as releases
from clineval.runs import run as api
from clineval.store import ResultStore
from clineval.view import create_app
from clineval.view.urls import case_link, link
from tests.golden_runs import run_golden

DEMO_A, DEMO_B = "medqa-gpt-4-cot", "medqa-gpt-35-cot"


def ddx_run(folder: Path, url: str) -> str:
    rows = [{"id": "d1", "vignette": "Fever and cough.", "ground_truth": ["Pneumonia", "Zorblax syndrome"]}]
    differential = [{"diagnosis": d} for d in ("Community-acquired pneumonia", "Quuxitis", "Influenza")]
    (folder / "ddx.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "ddx_pred.jsonl").write_text(json.dumps({"id": "d1", "output": {"differential": differential}}))
    suite = folder / "ddx.yaml"
    suite.write_text(
        "name: ddx\ntasks:\n  - id: ddx\n    dataset: {format: jsonl, path: ddx.jsonl}\n"
        "    system: {type: predictions, path: ddx_pred.jsonl}\n    scorers: [ddx]\n"
    )
    return api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    folder = tmp_path_factory.mktemp("view")
    url = f"sqlite:///{folder}/store.db"
    demo = Path(str(resources.files("clineval.demo") / "suite.yaml"))
    ids = {
        "demo": api.run_suite(api.RunRequest(suite_path=demo, store_url=url, cache_path=None)).run_id,
        "golden": run_golden(folder, url, "golden", {"asthma", "pe"}),
        "golden_b": run_golden(folder, url, "golden_b", {"asthma"}),
        "ddx": ddx_run(folder, url),
    }
    return url, ids


@pytest.fixture(scope="module")
def client(store: tuple[str, dict[str, str]]) -> TestClient:
    return TestClient(create_app(store[0]), base_url="http://127.0.0.1")


def results(url: str, run_id: str, task: str | None = None) -> list:  # type: ignore[type-arg]
    with ResultStore(url) as s:
        return [r for r in s.load_results(run_id) if task is None or r.task_id == task]


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def case_ids(html: str) -> list[str]:
    return re.findall(r'<tr data-row-id="\d+" data-case-id="([^"]+)"', html)


def test_runs_page_lists_every_run_with_counts_and_filters(client: TestClient, store: tuple) -> None:  # type: ignore[type-arg]
    _, ids = store
    page = client.get("/").text
    assert 'data-testid="runs-table"' in page
    for run_id in ids.values():
        assert f'data-run-id="{run_id}"' in page
    row = page.split(f'data-run-id="{ids["demo"]}"')[1].split("</tr>")[0]
    assert ">400<" in row.replace(" ", "") or 'data-testid="run-cases">400' in row
    assert "medqa_cot_gpt-4-32k_first200" in row and "accuracy 83.00%" in row
    filtered = client.get("/", params={"q": "golden-golden_b"}).text
    assert f'data-run-id="{ids["golden_b"]}"' in filtered and f'data-run-id="{ids["demo"]}"' not in filtered
    none = client.get("/", params={"status": "interrupted"}).text
    assert 'id="runs-empty"' in none
    by_cases = client.get("/", params={"sort": "cases", "order": "desc"}).text
    order = re.findall(r'<tr data-run-id="([0-9a-f]+)"', by_cases)
    assert order[0] == ids["demo"] and order[-1] == ids["ddx"]


def test_run_page_accuracy_labels_and_charts_match_the_stored_results(
    client: TestClient, store: tuple
) -> None:  # type: ignore[type-arg]
    url, ids = store
    page = client.get(link("run", run=ids["demo"])).text
    for task in (DEMO_A, DEMO_B):
        found = results(url, ids["demo"], task)
        correct = sum(1 for r in found if r.scores["mcq"].label == "correct")
        section = page.split(f'data-task-id="{task}"')[1].split("</section>")[0]
        accuracy = re.search(
            r'data-metric="accuracy"><th>accuracy</th><td class="num" data-testid="metric-value">([^<]+)<',
            section,
        )
        assert accuracy is not None and accuracy.group(1) == f"{correct / len(found) * 100:.2f}%"
        unparsed = sum(1 for r in found if r.scores["mcq"].label == "unparsed")
        shown = re.search(r'data-label="mcq:unparsed">(\d+)<', section)
        assert shown is not None and int(shown.group(1)) == unparsed
        charts = re.findall(r'data-testid="chart" data-metric="([^"]+)" data-key="meta_info"', section)
        assert charts == ["accuracy"]  # the demo's only headline metric; one chart per headline metric
        assert "<svg" in section
    failed = [r for r in results(url, ids["demo"]) if r.failed]
    assert failed and 'data-testid="failures-table"' in page and failed[0].output.error.kind in page
    assert 'role="alert"' not in page  # one failed case of 400: no banner


def test_four_tier_run_page_groups_the_scorecard_by_tier(client: TestClient, store: tuple) -> None:  # type: ignore[type-arg]
    url, ids = store
    page = client.get(link("run", run=ids["golden"])).text
    assert 'data-testid="scorecard"' in page
    assert 'data-testid="tier-1"' in page and 'data-testid="tier-3"' in page
    with ResultStore(url) as s:
        scores = s.load_run(ids["golden"]).aggregates["golden"].scores
    rules = [k for k in scores if k.startswith("adherence_") and not k.endswith("_ci")]
    table = page.split('data-testid="rules-table"')[1].split("</table>")[0]
    assert table.count("<tr>") - 1 == len(rules) > 0  # one header row
    assert "Tier 3: guideline adherence" in page
    # every rule has its 95% interval: stored, else Wilson from adherent / n applicable, computed here
    for key in rules:
        rule = key.removeprefix("adherence_")
        n = int(scores[f"n_applicable_{rule}"])
        lo, hi = scores.get(f"{key}_ci") or wilson_interval(round(scores[key] * n), n)
        row = table.split(f"<th>{rule}</th>")[1].split("</tr>")[0]
        assert f'data-testid="rule-ci">[{lo * 100:.1f}, {hi * 100:.1f}]<' in row
    # the tiered page lists no raw float: every figure outside the SVG charts is formatted
    text = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    assert not re.search(r">\s*-?\d+\.\d{5,}", text)
    assert 'data-testid="headline-table"' not in page and 'data-testid="all-metrics"' in page
    assert page.index('data-testid="scorecard"') < page.index('data-testid="charts"')


def test_cases_page_total_filters_and_pagination(client: TestClient, store: tuple) -> None:  # type: ignore[type-arg]
    url, ids = store
    run = ids["demo"]
    stored = results(url, run)
    first = client.get(link("cases", run=run)).text
    assert f'data-total="{len(stored)}"' in first
    assert "A junior orthopaedic surgery resident" in first  # the question column, from the dataset file
    page1, page2 = case_ids(first), case_ids(client.get(link("cases", run=run, page=2)).text)
    expected = [(r.task_id, r.case_id) for r in stored]
    assert page1 == [c for _, c in expected[:50]] and page2 == [c for _, c in expected[50:100]]
    after = re.search(rf'id="page-after" href="/run/cases\?run={run}&amp;after=(\d+)"', first)
    assert after is not None
    assert case_ids(client.get(link("cases", run=run, after=after.group(1))).text) == page2
    # label filter: exactly the cases whose stored mcq label is incorrect, across every page
    wrong = [r.case_id for r in stored if r.task_id == DEMO_B and r.scores["mcq"].label == "incorrect"]
    params = {"task": DEMO_B, "label": "mcq:incorrect"}
    html = client.get(link("cases", run=run, **params)).text
    assert f'data-total="{len(wrong)}"' in html
    following = re.search(r'id="page-next" rel="next" href="([^"]+)"', html)  # the filters kept
    assert following is not None
    seen = case_ids(html) + case_ids(client.get(following.group(1).replace("&amp;", "&")).text)
    assert seen == wrong
    # stratum, failure kind and text
    step1 = [r for r in stored if r.task_id == DEMO_A and r.metadata.get("meta_info") == "step1"]
    html = client.get(link("cases", run=run, task=DEMO_A, stratum="meta_info=step1")).text
    assert f'data-total="{len(step1)}"' in html
    failed = [r for r in stored if r.failed]
    html = client.get(link("cases", run=run, failure=failed[0].output.error.kind)).text
    assert case_ids(html) == [r.case_id for r in failed]
    html = client.get(link("cases", run=run, task=DEMO_A, q="disclose the error")).text
    hits = [
        r.case_id
        for r in stored
        if r.task_id == DEMO_A and "disclose the error" in (r.output.text or "").lower()
    ]
    assert hits and case_ids(html)[: len(hits)] == hits


def test_case_page_shows_input_output_span_and_verdict(client: TestClient, store: tuple) -> None:  # type: ignore[type-arg]
    url, ids = store
    found = results(url, ids["demo"], DEMO_A)[0]
    html = client.get(case_link(ids["demo"], DEMO_A, found.case_id)).text
    assert 'data-testid="input-question"' in html and "carpal tunnel" in html
    assert 'data-option="B" class="gold"' in html
    span = found.scores["mcq"].breakdown["span"]
    assert f'data-testid="answer-span">{span}</mark>' in html
    assert f'data-testid="score-label">{found.scores["mcq"].label}<' in html
    assert "{% block review %}" not in html and 'id="review"' in html


def test_case_page_renders_ddx_decisions_and_rule_results(client: TestClient, store: tuple) -> None:  # type: ignore[type-arg]
    url, ids = store
    html = client.get(case_link(ids["ddx"], "ddx", "d1")).text
    table = html.split('data-testid="breakdown-decisions"')[1].split("</table>")[0]
    assert "Community-acquired pneumonia" in table and "Pneumonia" in table and "Quuxitis" in table
    assert "<th>ground_truth</th>" in table and "<th>tier</th>" in table
    assert "&#34;source&#34;" not in table and "{&#34;" not in table  # evidence as text, not JSON
    score = results(url, ids["ddx"])[0].scores["ddx"]
    evidence = [e for d in score.breakdown["decisions"] for e in d.get("evidence") or []]
    if evidence:
        assert f"“{evidence[0]['text']}” ({evidence[0]['source']}" in table.replace("&#39;", "'")
    assert score.label == "top1" and 'data-label="top1">hit in the top 1<' in html
    assert f"recall {score.value * 100:.0f}%" in html
    golden = results(url, ids["golden"])[0]
    html = client.get(case_link(ids["golden"], "golden", golden.case_id)).text
    rules = golden.scores["guideline_adherence"].breakdown.get("rules", [])
    if rules:
        assert 'data-testid="breakdown-rules"' in html and rules[0]["rule_id"] in html


def test_compare_page_shows_the_paired_statistics_and_changed_cases(client: TestClient, store: tuple) -> None:  # type: ignore[type-arg]
    url, ids = store
    a, b = ids["golden"], ids["golden_b"]
    expected = releases.compare_runs(url, a, b)
    html = client.get("/compare", params={"a": a[:10], "b": b}).text
    task = expected.tasks[0]
    assert f'data-testid="changes-count">{len(task.changes)}<' in html
    assert len(task.changes) > 0
    change = task.changes[0]
    for run in (a, b):
        assert f'href="{escape(case_link(run, "golden", change.case_id))}"' in html
    assert html.count('<tr data-scorer="') == len(task.paired)
    overall = next(p for p in task.paired if p.stratum_key is None and p.scorer == "guideline_adherence")
    assert f"{overall.delta * 100:+.1f} pt" in html
    refused = client.get("/compare", params={"a": ids["demo"], "b": ids["ddx"]}).text
    assert 'id="compare-error"' in refused


def test_leaderboard_ranks_the_two_demo_systems(client: TestClient, store: tuple) -> None:  # type: ignore[type-arg]
    _, ids = store
    html = client.get("/leaderboard", params={"runs": ids["demo"]}).text
    table = html.split('data-testid="leaderboard-table"')[1]
    assert table.count("<th data-column=") == 1  # both tasks score the same dataset file: one column
    systems = re.findall(r'<tr data-system="([^"]+)"', table)
    assert systems == ["medqa_cot_gpt-4-32k_first200", "medqa_cot_gpt-35-turbo-16k_first200"]  # 83.0% > 70.5%
    assert re.findall(r'data-testid="mean-rank">([^<]+)<', table) == ["1.00", "2.00"]
    assert re.findall(r'data-testid="win-rate">([^<]+)<', table) == ["100.0%", "0.0%"]
    assert "83.00% [77.2, 87.6]" in table


def test_trends_page_lists_eval_results(client: TestClient, store: tuple) -> None:  # type: ignore[type-arg]
    url, _ = store
    with ResultStore(url) as s:
        rows = [
            r
            for r in s.eval_results.query(tenant_id="default")
            if r.metric_name == "accuracy" and r.condition is None
        ]
    html = client.get("/trends", params={"tenant": "default", "metric": "accuracy"}).text
    table = html.split('data-testid="trends-table"')[1].split("</table>")[0]
    assert table.count("<tr>") - 1 == len(rows) > 0
    assert 'data-testid="trend-chart"' in html
    for row in rows:  # one series per task; run ids as on the other pages (12 hex characters)
        task = row.metadata["task"]
        assert f"<td>{task}</td>" in table and f'data-task="{task}"' in html
        assert f"<code>{row.run_id.replace('-', '')[:12]}</code>" in table


def test_unknown_run_and_case_are_404_pages(client: TestClient) -> None:
    assert client.get(link("run", run="nope")).status_code == 404
    response = client.get(link("cases", run="nope"))
    assert response.status_code == 404 and 'id="error-title"' in response.text
    missing = client.get(link("case", run="nope", task="t"))
    assert missing.status_code == 400 and "parameter &#39;case&#39; is required" in missing.text


def test_a_system_that_failed_on_most_cases_gets_a_banner(tmp_path: Path) -> None:
    rows = [
        {
            "question": f"Q{i}?",
            "options": {"A": "a", "B": "b"},
            "answer_idx": "A",
            "answer": "a",
            "meta_info": "s",
        }
        for i in range(3)
    ]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "p.jsonl").write_text(json.dumps({"id": "0", "output": "A"}) + "\n")  # 2 of 3 missing
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: mostly-failed\ntasks:\n  - id: t\n    dataset: {format: medqa, path: q.jsonl}\n"
        "    system: {type: predictions, path: p.jsonl}\n    scorers: [mcq]\n"
    )
    url = f"sqlite:///{tmp_path}/store.db"
    run_id = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id
    html = TestClient(create_app(url), base_url="http://127.0.0.1").get(link("run", run=run_id)).text
    banner = re.search(r'<div class="banner" role="alert" data-testid="failure-banner">([^<]+)<', html)
    assert banner is not None and "failed on 2 of 3 cases" in banner.group(1)


def test_case_filters_compile_to_json_paths_on_postgresql() -> None:
    from sqlalchemy import and_, select
    from sqlalchemy.dialects import postgresql

    from clineval.store.tables import case_results
    from clineval.view import queries

    flt = queries.CaseFilter(label="mcq:incorrect", stratum="meta_info=step1", failure="timeout", text="a_b")
    query = select(case_results.c.id).where(and_(*queries._conditions("r", flt)))
    sql = str(query.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    assert "#>> '{scores, mcq, label}'" in sql and "#>> '{metadata, meta_info}'" in sql
    assert "CAST(case_results.result AS TEXT) ILIKE '%%a\\_b%%'" in sql
