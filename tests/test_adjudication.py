"""Adjudication on real stored runs (MCQ, DDx, the golden set's tier-1 check and tier-3 rules, tier-4 judge
dimensions): review items, validation, append-only storage on SQLite and PostgreSQL, adjudicated metrics,
the review queue, the JSONL and vocabulary exports, and the routes (real CSRF check, escaping)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import func, select
from starlette.applications import Starlette
from starlette.testclient import TestClient
from typer.testing import CliRunner

from clineval.runs import run as api
from clineval.store import ResultStore
from clineval.store.tables import adjudications
from clineval.testing import Rule, Script
from clineval.text.names.diagnosis_vocab import load_vocabulary
from clineval.text.names.equivalence import equivalent
from clineval.view import security
from clineval.view.review.adjudication import (
    AdjudicationError,
    adjudicated_metrics,
    history,
    load_case,
    record,
    vocabulary_document,
)
from clineval.view.review.agreement import run_agreement
from clineval.view.review.items import ReviewItem, items_for
from clineval.view.review.queue import review_queue
from clineval.view.review.routes import environment, routes
from clineval.view.urls import case_link, link
from tests.cli_helpers import write_small_suite
from tests.conftest import StartServer
from tests.golden_runs import run_golden
from tests.test_tier4_judge import SCRIPTED, grade
from tests.test_view_pages import ddx_run

T0 = datetime(2026, 11, 24, 9, 0, tzinfo=UTC)
XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def mcq_run(folder: Path, url: str) -> str:
    """Gold A, B, C; answers A (correct), nothing readable (unparsed), B (incorrect)."""
    preds = [
        json.dumps({"id": "0", "output": "The answer is A"}),
        json.dumps({"id": "1", "output": "I am not sure " + XSS}),
        json.dumps({"id": "2", "output": "The answer is B"}),
    ]
    suite = write_small_suite(folder, predictions=preds)
    return api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    folder = tmp_path_factory.mktemp("adjudication")
    url = f"sqlite:///{folder}/store.db"
    ids = {
        "mcq": mcq_run(folder, url),
        "ddx": ddx_run(folder, url),
        "golden": run_golden(folder, url, "golden", {"copd"}),
    }
    return url, ids


def items_by_key(store: ResultStore, run_id: str, task: str, case: str) -> dict[str, ReviewItem]:
    return {i.key: i for i in items_for(load_case(store, run_id, task, case))}


def test_review_items_of_real_results(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    with ResultStore(url) as store:
        mcq = items_by_key(store, ids["mcq"], "t", "1")["mcq"]
        assert mcq.kind == "mcq" and mcq.value == "unparsed"
        assert mcq.choices == ("A", "B", "C", "D", "E", "unparsed")
        assert mcq.automated["gold"] == "B"
        ddx = items_by_key(store, ids["ddx"], "ddx", "d1")
        assert ddx["ddx|Pneumonia|Community-acquired pneumonia"].value is True
        assert ddx["ddx|Zorblax syndrome|Quuxitis"].value is False
        golden = store.load_results(ids["golden"])
        kinds = {i.kind for r in golden for i in items_for(r)}
        assert kinds == {"check", "rule"}
        bad = next(r for r in golden if r.metadata.get("condition") == "copd")
        assert any(i.kind == "rule" and i.value == "fail" for i in items_for(bad))


def test_record_validates_and_is_append_only(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    run = ids["mcq"]
    with ResultStore(url) as store:
        with pytest.raises(AdjudicationError, match="reviewer"):
            record(
                store, run, "t", "1", item_key="mcq", verdict="disagree", reviewer="  ", corrected_value="B"
            )
        with pytest.raises(AdjudicationError, match="not a valid value"):
            record(
                store, run, "t", "1", item_key="mcq", verdict="disagree", reviewer="ann", corrected_value="Z"
            )
        with pytest.raises(AdjudicationError, match="choose disagree"):
            record(store, run, "t", "1", item_key="mcq", verdict="agree", reviewer="ann", corrected_value="B")
        with pytest.raises(AdjudicationError, match="other than"):
            record(
                store, run, "t", "2", item_key="mcq", verdict="disagree", reviewer="ann", corrected_value="B"
            )
        with pytest.raises(AdjudicationError, match="no reviewable item"):
            record(store, run, "t", "1", item_key="nope", verdict="agree", reviewer="ann")
        with pytest.raises(AdjudicationError, match="no case"):
            record(store, run, "t", "9", item_key="mcq", verdict="agree", reviewer="ann")
        with pytest.raises(AdjudicationError, match="verdict"):
            record(store, run, "t", "1", item_key="mcq", verdict="maybe", reviewer="ann")
        first = record(
            store,
            run,
            "t",
            "1",
            item_key="mcq",
            verdict="disagree",
            reviewer="ann",
            corrected_value="c",
            now=T0,
        )
        assert first.corrected_value == "C" and first.automated_value["value"] == "unparsed"
        second = record(
            store,
            run,
            "t",
            "1",
            item_key="mcq",
            verdict="disagree",
            reviewer="ann",
            corrected_value="B",
            comment="read the last line",
        )
        rows = history(store, run, "t", "1")
        assert [(r.id, r.corrected_value) for r in rows] == [(first.id, "C"), (second.id, "B")]
        assert rows[0].created_at == T0 and rows[1].comment == "read the last line"
        # the automated score is untouched
        assert store.load_results(run)[1].scores["mcq"].label == "unparsed"
        # adjudicated accuracy: case 1 is now B = gold (correct): 1/3 -> 2/3
        metric = next(m for m in adjudicated_metrics(store, run) if m.metric == "mcq:accuracy")
        assert (metric.automated, metric.adjudicated, metric.n_reviewed, metric.n_changed) == pytest.approx(
            (1 / 3, 2 / 3, 1, 1)
        )


def test_checks_rules_and_the_queue(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    run = ids["golden"]
    with ResultStore(url) as store:
        results = store.load_results(run)
        bad = next(r for r in results if r.metadata.get("condition") == "copd")
        rule = next(i for i in items_for(bad) if i.kind == "rule" and i.value == "fail")
        record(
            store,
            run,
            "golden",
            bad.case_id,
            item_key=rule.key,
            verdict="disagree",
            reviewer="ann",
            corrected_value="pass",
        )
        record(store, run, "golden", bad.case_id, item_key="schema", verdict="agree", reviewer="ann")
        with pytest.raises(AdjudicationError, match="not a valid value"):
            record(
                store,
                run,
                "golden",
                bad.case_id,
                item_key="schema",
                verdict="disagree",
                reviewer="ann",
                corrected_value="maybe",
            )
        metrics = {m.metric: m for m in adjudicated_metrics(store, run)}
        changed = metrics[f"guideline_adherence:adherence_{rule.key.split(':', 1)[1]}"]
        assert changed.adjudicated > changed.automated and changed.n_changed == 1
        first = review_queue(store, run, ["random"], seed=7, n=5)
        assert first == review_queue(store, run, ["random"], seed=7, n=5)  # seeded
        assert all((e.task_id, e.case_id) != ("golden", bad.case_id) for e in first)  # reviewed: left out
        assert len(first) == 5 and first != review_queue(store, run, ["random"], seed=8, n=5)
        mcq_queue = review_queue(store, ids["mcq"], ["unparsed", "errors"])
        assert mcq_queue == []  # the one unparsed case has a review


def test_ddx_corrections_export_as_a_vocabulary(runs: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, ids = runs
    run = ids["ddx"]
    with ResultStore(url) as store:
        record(
            store,
            run,
            "ddx",
            "d1",
            item_key="ddx|Zorblax syndrome|Quuxitis",
            verdict="disagree",
            reviewer="ann",
            corrected_value="true",
        )
        record(
            store,
            run,
            "ddx",
            "d1",
            item_key="ddx|Pneumonia|Community-acquired pneumonia",
            verdict="disagree",
            reviewer="bob",
            corrected_value="false",
        )
        doc = vocabulary_document(history(store, run))
    assert doc["groups"] == [["Quuxitis", "Zorblax syndrome"]]
    assert doc["distinct"] == [["Pneumonia", "Community-acquired pneumonia"]]
    out, vocab_file = tmp_path / "adj.jsonl", tmp_path / "vocab.yaml"
    import typer

    from clineval.cli.commands.adjudication_commands import register

    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # a Typer with two commands keeps command names
    result = CliRunner().invoke(
        app, ["adjudications", run[:8], "--out", str(out), "--vocabulary", str(vocab_file), "--store", url]
    )
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["reviewer"], r["corrected_value"]) for r in lines] == [("ann", True), ("bob", False)]
    assert lines[0]["automated_value"]["value"] is False and lines[0]["created_at"]
    assert before_equivalent("Zorblax syndrome", "Quuxitis") is False
    vocab = load_vocabulary(extra_synonyms=vocab_file)
    assert equivalent("Zorblax syndrome", "Quuxitis", vocab=vocab).equivalent
    assert not equivalent("Pneumonia", "Community-acquired pneumonia", vocab=vocab).equivalent
    missing = CliRunner().invoke(app, ["adjudications", "nope", "--out", str(out), "--store", url])
    assert missing.exit_code == 2


def before_equivalent(a: str, b: str) -> bool:
    return equivalent(a, b).equivalent


def test_judge_dimensions_reviewed_and_agreement(tmp_path: Path, start_server: StartServer) -> None:
    from tests.test_tier4_judge import ITEMS, hb_row, write_suite

    rules = [Rule(match=f'Dimension: "{d}"', replies=[grade(g) for g in gs]) for d, gs in SCRIPTED.items()]
    judge = start_server(Script(latency_s=0.0, model="judge-model", rules=rules))
    rows = [hb_row(f"c{i}", f"Question {i}?", ITEMS, "emergency") for i in range(2)]
    outputs = {"c0": "Exclude ACS with an ECG.", "c1": "Differential: ACS, PE. Urgent ECG."}
    suite = write_suite(tmp_path, "dims", rows, outputs, "judge_dimensions", judge.base_url)
    url = f"sqlite:///{tmp_path}/s.db"
    run = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id
    with ResultStore(url) as store:
        items = {i.key: i for i in items_for(load_case(store, run, "dims", "c0"))}
        assert items["judge_dimensions:coherence"].value == 4
        assert items["judge_dimensions:coherence"].automated["samples"] == [4, 4, 2]
        queue = review_queue(store, run, ["judge_disagreement"])
        assert {e.case_id for e in queue} == {"c0", "c1"}  # coherence flips in both
        with pytest.raises(AdjudicationError, match="not a valid value"):
            record(
                store,
                run,
                "dims",
                "c0",
                item_key="judge_dimensions:coherence",
                verdict="disagree",
                reviewer="ann",
                corrected_value="6",
            )
        for case, reviewer, value in (("c0", "ann", 2), ("c1", "ann", 4), ("c0", "bob", 3), ("c1", "bob", 4)):
            verdict = "agree" if value == 4 else "disagree"
            record(
                store,
                run,
                "dims",
                case,
                item_key="judge_dimensions:coherence",
                verdict=verdict,
                reviewer=reviewer,
                corrected_value=str(value),
            )
        figures = {(f.comparison, f.raters): f.result for f in run_agreement(store, run)}
        assert figures[("reviewer_vs_judge", "all reviewers")].n == 4
        assert figures[("reviewer_vs_judge", "all reviewers")].weights == "quadratic"
        assert figures[("between_reviewers", "ann / bob")].n == 2
        assert review_queue(store, run, ["judge_disagreement"]) == []
        mean = next(
            m for m in adjudicated_metrics(store, run) if m.metric == "judge_dimensions:mean_coherence"
        )
        assert (mean.automated, mean.adjudicated) == (4.0, 3.5)  # bob's c0 (3) is the newest


# -- routes ---------------------------------------------------------------------------------------------


def app_for(url: str) -> tuple[TestClient, str]:
    app = Starlette(routes=routes(url))
    app.state.csrf_secret = b"test-secret"
    client = TestClient(app, base_url="http://127.0.0.1")
    client.cookies.set(security.CSRF_COOKIE, "nonce-1")
    token = security._sign(b"test-secret", "nonce-1")
    return client, token


def test_post_route_with_and_without_csrf(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    run = ids["mcq"]
    client, token = app_for(url)
    form = {
        "reviewer": "carol",
        "item_key": "mcq",
        "verdict": "disagree",
        "corrected_value": "C",
        "comment": XSS,
    }
    path = link("adjudicate", run=run, task="t", case="2")
    with ResultStore(url) as store:
        before = len(history(store, run))
    refused = client.post(path, data=form, follow_redirects=False)
    assert refused.status_code == 403
    wrong = client.post(path, data={**form, security.CSRF_FIELD: "forged"}, follow_redirects=False)
    assert wrong.status_code == 403
    done = client.post(path, data={**form, security.CSRF_FIELD: token}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == case_link(run, "t", "2", "review")
    invalid = client.post(path, data={**form, "reviewer": "", security.CSRF_FIELD: token})
    assert invalid.status_code == 400 and "reviewer" in invalid.text
    with ResultStore(url) as store:
        rows = history(store, run)
        assert len(rows) == before + 1 and rows[-1].reviewer == "carol" and rows[-1].comment == XSS
    page = client.get(link("case_review", run=run, task="t", case="2"))
    assert page.status_code == 200 and XSS not in page.text and "&lt;script&gt;" in page.text
    assert page.text.count('data-testid="review-form"') == 1 and 'data-testid="review-submit"' in page.text
    assert 'name="reviewer" required' in page.text and token in page.text
    agreement = client.get(link("agreement", run=run))
    assert agreement.status_code == 200 and 'data-testid="agreement-row"' in agreement.text
    queue = client.get(link("queue", run=run, kind="random", seed=1, n=5))
    assert queue.status_code == 200 and queue.text.count('data-testid="queue-row"') == 1  # case 0 only
    assert client.get(link("queue", run=run, kind="bogus")).status_code == 400


def test_the_panel_derives_the_same_items_as_the_server(runs: tuple[str, dict[str, str]]) -> None:
    """The case page includes the panel with only ``result``: its forms carry exactly items_for's keys."""
    url, ids = runs
    template = environment().get_template("review/panel.html.j2")
    with ResultStore(url) as store:
        results = [r for run in ids.values() for r in store.load_results(run)]
    for result in results:
        html = template.render(
            run_id="r",
            task_id=result.task_id,
            case_id=result.case_id,
            result=result.model_dump(mode="json"),
            csrf_field=lambda: "",
        )
        keys = [k for k in html.split('data-item-key="')[1:]]
        shown = [k.split('"', 1)[0] for k in keys]
        from markupsafe import escape

        assert shown == [str(escape(i.key)) for i in items_for(result)]


def test_the_table_is_append_only_on_both_backends(store_url: str, tmp_path: Path) -> None:
    run = mcq_run(tmp_path, store_url)
    with ResultStore(store_url) as store:
        for value in ("C", "B", "D"):
            record(
                store,
                run,
                "t",
                "1",
                item_key="mcq",
                verdict="disagree",
                reviewer="ann",
                corrected_value=value,
            )
        record(store, run, "t", "1", item_key="mcq", verdict="agree", reviewer="bob")
        with store.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(adjudications)).scalar() == 4
        rows = history(store, run)
        assert [r.corrected_value for r in rows] == ["C", "B", "D", "unparsed"]
        figures = {(f.comparison, f.raters): f.result for f in run_agreement(store, run)}
        assert figures[("reviewer_vs_scorer", "all reviewers")].n == 2  # current verdicts only


def test_the_viewer_mounts_the_routes_and_the_case_page_carries_the_panel(tmp_path: Path) -> None:
    """Through ``clineval.view.app.create_app`` (its guard middleware, its case page including the panel)."""
    import re

    from clineval.view.app import create_app

    url = f"sqlite:///{tmp_path}/s.db"
    run = mcq_run(tmp_path, url)
    client = TestClient(create_app(url), base_url="http://127.0.0.1")
    page = client.get(case_link(run, "t", "1"))
    assert page.status_code == 200 and page.text.count('data-testid="review-form"') == 1
    assert XSS not in page.text
    found = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found is not None
    form = {"reviewer": "ann", "item_key": "mcq", "verdict": "disagree", "corrected_value": "B"}
    path = link("adjudicate", run=run, task="t", case="1")
    assert client.post(path, data=form, follow_redirects=False).status_code == 403
    done = client.post(path, data={**form, "csrf_token": found.group(1)}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == case_link(run, "t", "1", "review")
    figures = client.get(link("agreement", run=run))
    # one MCQ review: reviewer vs scorer on the extracted letter, and on the outcome (correct/incorrect/...)
    assert figures.text.count('data-testid="agreement-row"') == 2
    assert 'data-on="value"' in figures.text and 'data-on="outcome"' in figures.text
    assert 'data-testid="agreement-link"' in client.get(link("run", run=run)).text
