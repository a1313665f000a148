"""`clineval view` end to end in a real browser (issue 14 item 5): the app on a free port in a thread,
Debian's Chromium driven headless by Playwright, a real SQLite store built by running suites.

The store holds two MCQ runs over the shipped demo data (GPT-4 and GPT-3.5 on the same 200 MedQA questions,
one task id, so they compare), the four-tier example on the golden set (the example recommender and the
scripted stand-in judge of examples/cds_recommender/run_four_tier.py) and a small MCQ run whose model outputs
are XSS payloads. Every figure a test expects is computed here from the stored results, not read from the app.

Chromium: $CLINEVAL_TEST_CHROMIUM, else chromium / chromium-browser / google-chrome on PATH (CI installs
Debian's: scripts/browser.sh). None: the tests skip, unless CLINEVAL_REQUIRE_BROWSER=1 (CI) fails them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clineval.core import CaseResult
from clineval.runs import run as api
from clineval.store import ResultStore
from clineval.view.urls import case_link, link, visible

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "src" / "clineval" / "demo" / "data"
XSS_SCRIPT = "<script>window.__xss=1</script>"
XSS_IMG = '<img src=x onerror="window.__xss=1">'


def _required() -> bool:
    return os.environ.get("CLINEVAL_REQUIRE_BROWSER") == "1"


def _unavailable(reason: str) -> None:
    if _required():
        pytest.fail(f"CLINEVAL_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(f"browser tests skipped: {reason} (CI installs it: scripts/browser.sh)")


def find_chromium() -> str | None:
    named = os.environ.get("CLINEVAL_TEST_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


# --- the store ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Store:
    url: str
    gpt4: str  # run ids
    gpt35: str
    four_tier: str
    xss: str
    weird: str  # task and case ids holding / ? # % . .. and non-ASCII
    suites: dict[str, str]  # run id -> suite name
    results: dict[str, list[CaseResult]]  # run id -> its stored case results

    def labels(self, run_id: str, scorer: str = "mcq") -> Counter[str]:
        return Counter(str(r.scores[scorer].label) for r in self.results[run_id] if scorer in r.scores)


def mcq_suite(folder: Path, name: str, predictions: Path, dataset: Path) -> Path:
    suite = folder / f"{name}.yaml"
    suite.write_text(
        f"name: {name}\n"
        "tasks:\n"
        "  - id: medqa\n"
        f"    dataset: {{format: medqa, path: {dataset}}}\n"
        f"    system: {{type: predictions, path: {predictions}, output_field: raw_output, "
        "numeric_ids: true}\n"
        "    scorers: [mcq]\n"
        "    stratify: [meta_info]\n"
    )
    return suite


def run(suite: Path, url: str) -> str:
    return api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id


def xss_suite(folder: Path) -> Path:
    """Three questions; the model's outputs are a <script> payload, an <img onerror> payload and a plain B."""
    options = {"A": "alpha", "B": "beta", "C": "gamma", "D": "delta"}
    rows = [
        {
            "question": f"Which option, question {i}?",
            "options": options,
            "answer_idx": "B",
            "answer": "beta",
            "meta_info": "step1",
        }
        for i in range(3)
    ]
    (folder / "xss_q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    outputs = [XSS_SCRIPT, XSS_IMG, "The answer is B"]
    preds = [json.dumps({"id": str(i), "raw_output": [text]}) for i, text in enumerate(outputs)]
    (folder / "xss_p.jsonl").write_text("\n".join(preds) + "\n")
    return mcq_suite(folder, "xss-payloads", folder / "xss_p.jsonl", folder / "xss_q.jsonl")


WEIRD_TASK = "mmlu/anatomy"
WEIRD_CASES = ("..", "%2e%2e", ".", "a/b", "q?x#y", "50%", "sp ace", "ünï")


def weird_suite(folder: Path) -> Path:
    """One task whose id holds a slash, over cases whose ids a path would mangle; every answer is A (gold)."""
    rows = [
        {"id": c, "question": f"Question {c}?", "options": {"A": "a", "B": "b"}, "answer": "A"}
        for c in WEIRD_CASES
    ]
    (folder / "weird_q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "weird_p.jsonl").write_text(
        "".join(json.dumps({"id": c, "output": "A"}) + "\n" for c in WEIRD_CASES)
    )
    suite = folder / "weird.yaml"
    suite.write_text(
        f"name: weird-ids\ntasks:\n  - id: {WEIRD_TASK}\n"
        "    dataset: {format: jsonl, path: weird_q.jsonl}\n"
        "    system: {type: predictions, path: weird_p.jsonl}\n    scorers: [mcq]\n"
    )
    return suite


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    folder = tmp_path_factory.mktemp("view-store")
    sys.path.insert(0, str(ROOT / "examples" / "cds_recommender"))
    try:
        from run_four_tier import run as run_four_tier  # the example's own store: folder/store.db
    finally:
        sys.path.remove(str(ROOT / "examples" / "cds_recommender"))
    four_tier = run_four_tier(folder).run_id
    url = f"sqlite:///{folder}/store.db"
    questions = DEMO / "medqa_test_first200.jsonl"
    gpt4 = run(mcq_suite(folder, "medqa-gpt-4", DEMO / "medqa_cot_gpt-4-32k_first200.jsonl", questions), url)
    gpt35_answers = DEMO / "medqa_cot_gpt-35-turbo-16k_first200.jsonl"
    gpt35 = run(mcq_suite(folder, "medqa-gpt-35", gpt35_answers, questions), url)
    xss = run(xss_suite(folder), url)
    weird = run(weird_suite(folder), url)
    handle = ResultStore(url, must_exist=True)
    try:
        suites = {info.run_id: info.suite.name for info in handle.list_runs(limit=100)}
        results = {rid: handle.load_results(rid) for rid in (gpt4, gpt35, four_tier, xss, weird)}
    finally:
        handle.close()
    return Store(url, gpt4, gpt35, four_tier, xss, weird, suites, results)


# --- the app and the browser --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        _unavailable("no Chromium found ($CLINEVAL_TEST_CHROMIUM, chromium, chromium-browser, google-chrome)")
    assert path is not None
    return path


@pytest.fixture(scope="module")
def base_url(store: Store, chromium_path: str) -> Iterator[str]:
    try:
        import uvicorn

        from clineval.view import create_app
    except ImportError as err:
        _unavailable(f"the viewer cannot be imported ({err}): pip install -e '.[dev]'")
        raise
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # a free port, held from here on: no race with another process
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(store.url), log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the viewer did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()
        assert not thread.is_alive(), "the viewer did not shut down"


@pytest.fixture(scope="module")
def browser(chromium_path: str, base_url: str) -> Iterator[Any]:
    # after base_url (so after the store): Playwright's sync API keeps an event loop running in this thread,
    # and run_suite starts its own
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed: pip install -e '.[dev]'")
        raise
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium_path, headless=True, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any, base_url: str) -> Iterator[Any]:
    context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    errors: list[str] = []
    opened.on("pageerror", lambda err: errors.append(str(err)))
    # Content Security Policy violations, two ways: the securitypolicyviolation event (reported through a
    # binding, so none is lost when the page navigates) and Chromium's console error
    violations: list[str] = []
    context.expose_function("__cleanevalCsp", lambda text: violations.append(text))
    context.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => window.__cleanevalCsp("
        "e.violatedDirective + ' ' + e.blockedURI + ' ' + location.href));"
    )
    opened.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    opened.dialogs = dialogs  # type: ignore[attr-defined]
    opened.csp_violations = violations  # type: ignore[attr-defined]
    try:
        yield opened
    finally:
        context.close()
    assert not dialogs, f"a page opened a dialog: {dialogs}"
    assert not errors, f"JavaScript errors: {errors}"
    assert not violations, f"Content Security Policy violations: {violations}"


def goto(page: Any, path: str) -> Any:
    response = page.goto(path)
    assert response is not None and response.status == 200, (path, response and response.status)
    return response


def visible_text(page: Any) -> str:
    return str(page.inner_text("body"))


def case_path(run_id: str, task_id: str, case_id: str) -> str:
    return case_link(run_id, task_id, case_id)


def at(path: str) -> Any:
    """A ``wait_for_url`` predicate: the page is at ``path`` (path, query and fragment as the viewer wrote
    them)."""
    return lambda url: url.split("://", 1)[1].partition("/")[2] == path.lstrip("/")


def shown_fraction(text: str) -> float:
    """A proportion as the viewer prints it, 83.00% or 0.830, as a number."""
    found = re.fullmatch(r"\s*([0-9.]+)\s*(%?)\s*", text)
    assert found is not None, text
    return float(found.group(1)) / (100 if found.group(2) else 1)


def accuracy(results: list[CaseResult]) -> float:
    labels = [r.scores["mcq"].label for r in results]
    return sum(label == "correct" for label in labels) / len(labels)


def adjudication_rows(store: Store, run_id: str) -> list[tuple[str, str, str, str]]:
    """(case id, item key, verdict, reviewer) of every stored adjudication of a run, read with SQL."""
    from sqlalchemy import create_engine, select

    from clineval.store.tables import adjudications

    engine = create_engine(store.url)
    try:
        with engine.connect() as conn:
            query = (
                select(
                    adjudications.c.case_id,
                    adjudications.c.item_key,
                    adjudications.c.verdict,
                    adjudications.c.reviewer,
                )
                .where(adjudications.c.run_id == run_id)
                .order_by(adjudications.c.id)
            )
            return [tuple(row) for row in conn.execute(query)]  # type: ignore[misc]
    finally:
        engine.dispose()


def by_testid(page: Any, name: str) -> Any:
    return page.locator(f'[data-testid="{name}"]')


# --- the tests ----------------------------------------------------------------------------------------------


def test_runs_page_lists_every_run(page: Any, store: Store) -> None:
    goto(page, "/")
    text = visible_text(page)
    assert len(store.suites) == 5
    for run_id, suite in store.suites.items():
        assert page.locator(f'a[href="{link("run", run=run_id)}"]').count() >= 1, f"no link to run {run_id}"
        assert suite in text


def test_open_a_run_from_the_runs_page(page: Any, store: Store) -> None:
    goto(page, "/")
    page.locator(f'a[href="{link("run", run=store.gpt4)}"]').first.click()
    page.wait_for_url(at(link("run", run=store.gpt4)))
    text = visible_text(page)
    assert "medqa-gpt-4" in text
    shown = page.locator('tr[data-metric="accuracy"] [data-testid="metric-value"]')
    assert shown.count() == 1
    assert shown_fraction(shown.inner_text()) == pytest.approx(accuracy(store.results[store.gpt4]), abs=5e-4)


def test_four_tier_run_shows_a_scorecard_by_tier(page: Any, store: Store) -> None:
    goto(page, link("run", run=store.four_tier))
    text = visible_text(page)
    for tier in (1, 2, 3, 4):
        assert re.search(rf"Tier {tier}\b", text), f"no tier {tier} section"
        assert by_testid(page, f"tier-{tier}").count() == 1
    # Guideline adherence of the PE cases, from the stored per-case scores: the example recommender fails
    # every PE rule, so it is 0; COPD: all adherent.
    by_condition: dict[str, list[float]] = {}
    for result in store.results[store.four_tier]:
        score = result.scores["guideline_adherence"]
        if score.scorable:
            by_condition.setdefault(result.metadata["condition"], []).append(score.value)
    assert sum(by_condition["pe"]) == 0 and sum(by_condition["copd"]) == len(by_condition["copd"])


def test_filter_cases_by_label(page: Any, store: Store) -> None:
    incorrect = store.labels(store.gpt35)["incorrect"]
    assert incorrect == 56  # counted from the stored results of the demo's GPT-3.5 answers
    goto(page, link("run", run=store.gpt35))
    page.locator(f'a[href="{link("cases", run=store.gpt35)}"]').first.click()
    page.wait_for_url(at(link("cases", run=store.gpt35)))
    assert by_testid(page, "cases-total").get_attribute("data-total") == str(len(store.results[store.gpt35]))
    page.locator("#filter-label").fill("mcq:incorrect")
    page.locator("#filter-submit").click()
    page.wait_for_url("**label=mcq%3Aincorrect*")
    total = by_testid(page, "cases-total")
    assert total.get_attribute("data-total") == str(incorrect)
    assert total.inner_text().startswith(f"{incorrect} cases")
    rows = page.locator("#cases-table tbody tr[data-case-id]")
    expected = [r.case_id for r in store.results[store.gpt35] if r.scores["mcq"].label == "incorrect"]
    shown = [rows.nth(i).get_attribute("data-case-id") for i in range(rows.count())]
    assert shown and shown == expected[: len(shown)]  # the first page, in stored order
    for i in range(rows.count()):
        assert "mcq: incorrect" in rows.nth(i).inner_text()


def agreement_row(page: Any, run_id: str, on: str = "value") -> tuple[int, float, str] | None:
    """(n, observed agreement, kappa text) of the reviewer-vs-scorer MCQ row of the agreement page, on the
    extracted letter (``value``) or on the outcome correct / incorrect / unparsed (``outcome``)."""
    goto(page, link("agreement", run=run_id))
    row = page.locator(
        f'[data-testid="agreement-row"][data-comparison="reviewer_vs_scorer"][data-kind="mcq"][data-on="{on}"]'
    )
    if row.count() == 0:
        assert by_testid(page, "agreement-empty").is_visible()
        return None

    def cell(name: str) -> str:
        return str(row.locator(f'[data-testid="agreement-{name}"]').inner_text()).strip()

    return int(cell("n")), float(cell("observed")), cell("kappa")


def review(page: Any, reviewer: str, *, corrected: str | None) -> None:
    form = page.locator('[data-testid="review-form"][data-item-kind="mcq"]')
    assert form.count() == 1
    form.locator('[data-testid="review-reviewer"]').fill(reviewer)
    if corrected is None:
        form.locator('input[name="verdict"][value="agree"]').check()
    else:
        form.locator('input[name="verdict"][value="disagree"]').check()
        form.locator('[data-testid="review-corrected"]').select_option(corrected)
    with page.expect_navigation():
        form.locator('[data-testid="review-submit"]').click()


def test_open_a_case_adjudicate_it_and_see_agreement_change(page: Any, store: Store) -> None:
    results = store.results[store.gpt35]
    correct = next(r for r in results if r.scores["mcq"].label == "correct")
    wrong = next(r for r in results if r.scores["mcq"].label == "incorrect")
    questions = [json.loads(line) for line in (DEMO / "medqa_test_first200.jsonl").read_text().splitlines()]
    assert agreement_row(page, store.gpt35) is None  # nothing reviewed yet

    goto(page, case_path(store.gpt35, correct.task_id, correct.case_id))
    review(page, "Dr Agree", corrected=None)
    assert agreement_row(page, store.gpt35) == (1, 1.0, "n/a (too few items)")  # kappa undefined

    # the incorrect case, opened from the filtered cases page
    goto(page, link("cases", run=store.gpt35, label="mcq:incorrect"))
    page.locator(f'#cases-table tr[data-case-id="{wrong.case_id}"] a.case-link').click()
    page.wait_for_url(at(case_link(store.gpt35, "medqa", wrong.case_id)))
    question = questions[int(wrong.case_id)]["question"]
    assert by_testid(page, "input-question").inner_text().strip() == question.strip()
    assert by_testid(page, "score-label").first.inner_text() == "incorrect"
    gold = str(wrong.scores["mcq"].breakdown["gold"])
    extracted = str(wrong.scores["mcq"].breakdown["extracted"])
    assert gold != extracted and by_testid(page, "review-automated").first.inner_text() == extracted
    review(page, "Dr Disagree", corrected=gold)  # the reviewer reads the answer as the gold letter

    # on the outcome: reviewer (correct, correct) vs the scorer's (correct, incorrect): observed 1/2, and
    # kappa = (p_o - p_e) / (1 - p_e) with p_e = 1 * 1/2 (the reviewer said "correct" both times)
    p_o, p_e = 1 / 2, 1.0 * (1 / 2)
    assert agreement_row(page, store.gpt35, "outcome") == (2, 0.5, f"{(p_o - p_e) / (1 - p_e):.3f}")
    # on the letter: scorer (a, extracted) vs reviewer (a, gold), a = the first case's letter; the one
    # "disagree" is the one disagreement; p_e = sum over letters of (share by scorer) x (share by reviewer)
    first = str(correct.scores["mcq"].breakdown["extracted"])
    by_scorer, by_reviewer = [first, extracted], [first, gold]
    p_e = sum(by_scorer.count(c) * by_reviewer.count(c) for c in set(by_scorer)) / 4
    assert agreement_row(page, store.gpt35) == (2, 0.5, f"{(p_o - p_e) / (1 - p_e):.3f}")
    assert adjudication_rows(store, store.gpt35) == [
        (correct.case_id, "mcq", "agree", "Dr Agree"),
        (wrong.case_id, "mcq", "disagree", "Dr Disagree"),
    ]


def test_post_without_the_csrf_token_is_refused(page: Any, store: Store) -> None:
    wrong = next(r for r in store.results[store.gpt4] if r.scores["mcq"].label == "incorrect")
    path = case_path(store.gpt4, wrong.task_id, wrong.case_id)
    goto(page, path)  # the browser now holds the CSRF cookie; the form's hidden field is what is missing
    before = adjudication_rows(store, store.gpt4)
    form = {"item_key": "mcq", "reviewer": "Mallory", "verdict": "disagree", "corrected_value": "A"}
    adjudicate = link("adjudicate", run=store.gpt4, task=wrong.task_id, case=wrong.case_id)
    refused = page.request.post(adjudicate, form=form)
    assert refused.status == 403 and "CSRF" in refused.text()
    forged = page.request.post(adjudicate, form={**form, "csrf_token": "0" * 64})
    assert forged.status == 403
    assert adjudication_rows(store, store.gpt4) == before


def test_compare_two_runs(page: Any, store: Store) -> None:
    a = {r.case_id: r.scores["mcq"] for r in store.results[store.gpt35]}
    b = {r.case_id: r.scores["mcq"] for r in store.results[store.gpt4]}
    assert a.keys() == b.keys()
    paired = [(a[c], b[c]) for c in a if a[c].scorable and b[c].scorable]
    wins = sum(sb.value > sa.value for sa, sb in paired)
    losses = sum(sb.value < sa.value for sa, sb in paired)
    changed = [
        c
        for c in a
        if a[c].scorable and b[c].scorable and (a[c].value, a[c].label) != (b[c].value, b[c].label)
    ]
    goto(page, "/compare")
    page.locator("#compare-a").fill(store.gpt35)
    page.locator("#compare-b").fill(store.gpt4)
    page.locator('[data-testid="compare-form"] [type="submit"]').click()
    page.wait_for_url("**/compare?*")
    task = page.locator('[data-testid="compare-task"][data-task-id="medqa"]')
    overall = task.locator('#compare-table tr.overall[data-scorer="mcq"]')
    assert overall.locator("td").nth(10).inner_text() == f"{wins}/{len(paired) - wins - losses}/{losses}"
    assert f"A only {losses}, B only {wins}," in task.inner_text()  # McNemar's discordant pairs
    assert task.locator('[data-testid="changes-count"]').inner_text() == str(len(changed))
    first = task.locator(f'[data-testid="changes-table"] tr[data-case-id="{changed[0]}"]')
    first.locator("a.case-b").click()
    page.wait_for_url(at(case_link(store.gpt4, "medqa", changed[0])))
    assert by_testid(page, "score-label").first.inner_text() == b[changed[0]].label


def test_leaderboard_ranks_the_two_models(page: Any, store: Store) -> None:
    acc35, acc4 = accuracy(store.results[store.gpt35]), accuracy(store.results[store.gpt4])
    assert acc4 > acc35  # 0.830 vs 0.705: GPT-4 ranks first and wins its only comparison
    goto(page, f"/leaderboard?runs={store.gpt35},{store.gpt4}")
    rows = page.locator('[data-testid="leaderboard-table"] tbody tr[data-run-id]')
    assert sorted(rows.nth(i).get_attribute("data-run-id") or "" for i in range(2)) == sorted(
        [store.gpt35, store.gpt4]
    )
    for run_id, rank, win in ((store.gpt4, "1.00", "100.0%"), (store.gpt35, "2.00", "0.0%")):
        row = page.locator(f'[data-testid="leaderboard-table"] tr[data-run-id="{run_id}"]')
        assert row.locator('[data-testid="mean-rank"]').inner_text() == rank
        assert row.locator('[data-testid="win-rate"]').inner_text() == win


def test_xss_payloads_are_inert(page: Any, store: Store) -> None:
    cases = {r.output.text: r for r in store.results[store.xss]}
    for payload in (XSS_SCRIPT, XSS_IMG):
        result = cases[payload]
        goto(page, case_path(store.xss, result.task_id, result.case_id))
        page.wait_for_load_state("load")
        assert page.evaluate("window.__xss") is None
        assert by_testid(page, "output-text").inner_text().strip() == payload  # shown as text
        assert page.locator('img[src="x"]').count() == 0
    goto(page, link("cases", run=store.xss))  # the list's output excerpts
    page.wait_for_load_state("load")
    assert page.evaluate("window.__xss") is None
    assert XSS_SCRIPT in visible_text(page)


def test_the_csp_check_sees_a_violation(page: Any) -> None:
    """The policy blocks an injected inline script and style attribute, and the page fixture notices."""
    goto(page, "/")
    page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = 'window.__ran = 1';"
        " document.body.append(s); document.body.setAttribute('style', 'background: red'); }"
    )
    violations = page.csp_violations
    deadline = time.monotonic() + 5
    while len(violations) < 2 and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert page.evaluate("window.__ran") is None
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") != "rgb(255, 0, 0)"
    assert any("script-src" in v for v in violations) and any("style-src" in v for v in violations), (
        violations
    )
    violations.clear()  # expected here: the fixture fails a test on any other


def test_every_page_renders_under_the_csp(page: Any, store: Store) -> None:
    """Each kind of page, with its charts, loads with no CSP violation (the fixture checks) and styled."""
    first = store.results[store.gpt35][0]
    pages = [
        "/",
        link("run", run=store.gpt4),
        link("run", run=store.four_tier),
        link("cases", run=store.gpt35),
        case_link(store.gpt35, first.task_id, first.case_id),
        link("case_review", run=store.gpt35, task=first.task_id, case=first.case_id),
        link("queue", run=store.gpt35),
        link("agreement", run=store.gpt35),
        link("compare", a=store.gpt35, b=store.gpt4),
        link("leaderboard", runs=f"{store.gpt35},{store.gpt4}"),
        link("trends"),
        link("run", run="no-such-run"),
    ]
    for path in pages:
        response = page.goto(path)
        assert response is not None and response.status == (404 if "no-such" in path else 200), path
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"], path
        page.wait_for_load_state("load")
        # the stylesheet applied: the header bar is laid out by view.css, not the browser's defaults
        assert page.evaluate("getComputedStyle(document.querySelector('main')).maxWidth") != "none", path
    goto(page, link("run", run=store.gpt4))
    chart = page.locator('[data-testid="chart"] svg').first
    assert chart.is_visible() and chart.locator("rect.bar").count() > 0
    goto(page, link("trends"))
    series = page.locator('[data-testid="trend-chart"] g.series')
    assert series.count() >= 1
    colours = [
        page.evaluate(
            "el => getComputedStyle(el).stroke", series.nth(i).locator("path.line").element_handle()
        )
        for i in range(series.count())
    ]
    assert colours[0] == "rgb(36, 87, 197)"  # series-0 of view.css, not an inline style
    assert len(set(colours)) == len(colours)


def test_a_case_id_a_path_would_mangle_opens_the_case_clicked(page: Any, store: Store) -> None:
    """Ids ``..``, ``%2e%2e``, ``a/b``, ``q?x#y`` of task ``mmlu/anatomy``: each link opens its own case (a
    browser drops ``..`` path segments, so the ids travel in the query), and the review posts for it."""
    assert {r.case_id for r in store.results[store.weird]} == set(WEIRD_CASES)
    cases_page = link("cases", run=store.weird)
    for case in WEIRD_CASES:
        goto(page, cases_page)
        rows = page.locator("#cases-table tbody tr[data-case-id]")
        index = [rows.nth(i).get_attribute("data-case-id") for i in range(rows.count())].index(case)
        rows.nth(index).locator("a.case-link").click()
        page.wait_for_url(at(case_link(store.weird, WEIRD_TASK, case)))
        assert page.locator("#case-id").inner_text() == visible(case)
        assert page.locator("#case-task").inner_text() == WEIRD_TASK
        assert by_testid(page, "input-question").inner_text().strip() == f"Question {case}?"
    goto(page, case_path(store.weird, WEIRD_TASK, ".."))
    review(page, "Dr Dots", corrected=None)
    page.wait_for_url(at(case_link(store.weird, WEIRD_TASK, "..", "review")))
    assert page.locator("#case-id").inner_text() == ".."
    assert adjudication_rows(store, store.weird) == [("..", "mcq", "agree", "Dr Dots")]
