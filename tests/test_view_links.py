"""Every id safe in every URL: a store whose task and case ids hold ``/ ? # % . .. NUL``, spaces and
non-ASCII, crawled link by link from the runs page. Each link is well-formed and opens (200); each case link
opens exactly the case it names, whose review form posts for that case. On SQLite (which keeps a NUL in an
id) and on PostgreSQL (which cannot: there an id with a NUL is a 404, never a 500)."""

from __future__ import annotations

import json
import re
from collections import deque
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from clineval.runs import run as api
from clineval.store import ResultStore
from clineval.view import create_app
from clineval.view.review.adjudication import history
from clineval.view.urls import case_link, link, visible

TASKS = ("mmlu/anatomy", "t?#%/..", "ünï task")
CASES = (
    "a/b",
    "q?x",
    "h#x",
    "p%2e",
    "%2e%2e",
    ".",
    "..",
    "a/../b",
    "x/",
    "/y",
    "sp ace",
    "plus+sign",
    "amp&run=evil",
    "pct%",
    "%",
    "ünï",
    "日本",
    "ok",
)
NUL_CASES = ("nul\x00x", "%00")  # the second is the three characters, not a NUL
URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*")


def weird_run(folder: Path, url: str, name: str, cases: tuple[str, ...], wrong: set[str]) -> str:
    """One run of every task over ``cases`` (gold A; the cases in ``wrong`` answer B)."""
    rows = [
        {"id": c, "question": f"Question of {c}?", "options": {"A": "a", "B": "b"}, "answer": "A"}
        for c in cases
    ]
    (folder / f"{name}_q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    preds = [{"id": c, "output": f"The answer is {'B' if c in wrong else 'A'}"} for c in cases]
    (folder / f"{name}_p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    tasks = "".join(
        f"  - id: {json.dumps(t)}\n    dataset: {{format: jsonl, path: {name}_q.jsonl}}\n"
        f"    system: {{type: predictions, path: {name}_p.jsonl}}\n    scorers: [mcq]\n"
        for t in TASKS
    )
    suite = folder / f"{name}.yaml"
    suite.write_text(f"name: {name}\ntasks:\n{tasks}")
    return api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id


class Links(HTMLParser):
    """The hrefs of a page, and its forms as (method, action, hidden fields)."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.forms: list[tuple[str, str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "a" and "href" in found:
            self.hrefs.append(found["href"])
        elif tag == "form":
            self.forms.append((found.get("method", "get").lower(), found.get("action", ""), {}))
        elif tag == "input" and found.get("type") == "hidden" and self.forms:
            self.forms[-1][2][found.get("name", "")] = found.get("value", "")


def parse(html: str) -> Links:
    parser = Links()
    parser.feed(html)
    return parser


def ids_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query, keep_blank_values=True).items()}


def crawl(client: TestClient, starts: list[str]) -> dict[str, str]:
    """Every viewer page reachable from ``starts`` (path and query; no static files): url -> its HTML."""
    seen: dict[str, str] = {}
    queue = deque(starts)
    while queue:
        url = queue.popleft().split("#")[0]
        if url in seen:
            continue
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code, response.text[:300])
        seen[url] = response.text
        for href in parse(response.text).hrefs:
            assert URL_CHARS.fullmatch(href), f"{href!r} on {url} is not percent-encoded"
            assert not href.startswith("/runs/"), f"{href} on {url}: an old path form"
            if href.startswith("/") and not href.startswith("/static/"):
                queue.append(href)
    return seen


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_every_link_opens_what_it_names(backend: str, tmp_path: Path) -> None:
    from tests.backends import backend_url

    cases = CASES + (NUL_CASES if backend == "sqlite" else NUL_CASES[1:])
    with backend_url(backend, tmp_path) as url:
        run_a = weird_run(tmp_path, url, "weird-a", cases, set())
        run_b = weird_run(tmp_path, url, "weird-b", cases, set(cases[::2]))
        with ResultStore(url) as store:
            stored = {(r.task_id, r.case_id) for run in (run_a, run_b) for r in store.load_results(run)}
        assert {c for _, c in stored} == set(cases) and {t for t, _ in stored} == set(TASKS)
        client = TestClient(create_app(url), base_url="http://127.0.0.1")
        starts = [
            "/",
            link("compare", a=run_a, b=run_b),
            link("leaderboard", runs=f"{run_a},{run_b}"),
            link("trends"),
            *(link("queue", run=r, kind="random", n=1000) for r in (run_a, run_b)),
        ]
        pages = crawl(client, starts)

        opened: set[tuple[str, str, str]] = set()
        for url_ in pages:
            if urlsplit(url_).path != "/run/case":
                continue
            ids = ids_of(url_)
            run, task, case = ids["run"], ids["task"], ids["case"]
            html = pages[url_]
            shown = re.search(
                r'<code id="case-id">([^<]*)</code> <small id="case-task">([^<]*)</small>', html
            )
            assert shown is not None, url_
            assert (unescape(shown.group(1)), unescape(shown.group(2))) == (visible(case), visible(task))
            assert f"Question of {case}?".replace("\x00", "") in unescape(html).replace("\x00", "")
            forms = [f for f in parse(html).forms if f[0] == "post"]
            assert len(forms) == 1  # the mcq verdict
            action = unescape(forms[0][1])
            assert urlsplit(action).path == "/run/case/adjudicate"
            assert ids_of(action) == {"run": run, "task": task, "case": case}
            opened.add((run, task, case))
        expected = {(run, t, c) for run in (run_a, run_b) for t, c in stored}
        assert opened == expected  # every stored case of both runs, reached by its links

        # each review form posts for its own case: one review per case of run B, read back from the store
        reviewers = {(t, c): f"reviewer {i}" for i, (t, c) in enumerate(sorted(stored))}
        for (task, case), reviewer in reviewers.items():
            html = client.get(case_link(run_b, task, case)).text
            _, action, hidden = next(f for f in parse(html).forms if f[0] == "post")
            form = {**hidden, "reviewer": reviewer, "verdict": "agree"}
            done = client.post(unescape(action), data=form, follow_redirects=False)
            assert done.status_code == 303, (task, case, done.text[:300])
            assert done.headers["location"] == case_link(run_b, task, case, "review")
        with ResultStore(url) as store:
            reviews = history(store, run_b)
        assert {(r.task_id, r.case_id): r.reviewer for r in reviews} == reviewers and len(reviews) == len(
            stored
        )
        review_page = client.get(link("case_review", run=run_b, task=TASKS[1], case=".."))
        assert review_page.status_code == 200 and reviewers[(TASKS[1], "..")] in review_page.text

        if backend == "postgresql":  # no stored id holds a NUL there: asking is a 404, not a database error
            for page in ("case", "case_review"):
                missing = client.get(link(page, run=run_a, task=TASKS[0], case="nul\x00x"))
                assert missing.status_code == 404, page
            assert client.get(link("cases", run=run_a, task="t\x00")).status_code == 404


def test_old_path_links_redirect_to_the_query_form(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    run = weird_run(tmp_path, url, "old", ("1", "a b"), set())
    client = TestClient(create_app(url), base_url="http://127.0.0.1", follow_redirects=False)
    for old, new in (
        (f"/runs/{run}", link("run", run=run)),
        (f"/runs/{run}/cases?label=mcq%3Acorrect", link("cases", run=run, label="mcq:correct")),
        (f"/runs/{run}/cases/{quote_task()}/a%20b", case_link(run, TASKS[2], "a b")),
        (f"/runs/{run}/review", link("queue", run=run)),
        (f"/runs/{run}/agreement", link("agreement", run=run)),
    ):
        response = client.get(old)
        assert response.status_code == 307 and response.headers["location"] == new, old
    final = client.get(f"/runs/{run}/cases/{quote_task()}/a%20b", follow_redirects=True)
    assert final.status_code == 200 and '<code id="case-id">a b</code>' in final.text


def quote_task() -> str:
    from urllib.parse import quote

    return quote("ünï task", safe="")
