"""Bad input to the viewer is a 400 that names the parameter and why, never a 500: numbers past what SQL can
offset, patterns past SQLite's LIKE limit, NUL (which PostgreSQL refuses), run ids longer than the store's
column; review names and comments are bounded with a message on the form; a read-only viewer shows no form."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from html import unescape
from pathlib import Path

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from clineval.store import ResultStore
from clineval.view import create_app
from clineval.view.review.adjudication import LIMITS, history, record
from clineval.view.urls import case_link, link
from tests.backends import backend_url
from tests.test_adjudication import mcq_run
from tests.test_view_security import asgi_get


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, str]:
    folder = tmp_path_factory.mktemp("params")
    url = f"sqlite:///{folder}/store.db"
    run = mcq_run(folder, url)
    return TestClient(create_app(url), base_url="http://127.0.0.1"), run


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_viewer(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[TestClient, str, str]]:
    with backend_url(request.param, tmp_path) as url:
        run = mcq_run(tmp_path, url)
        yield TestClient(create_app(url), base_url="http://127.0.0.1"), run, url


def text_of(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", html))


NUL = "a\x00b"
LONG_RUN = "a" * 60_000  # past SQLite's LIKE pattern limit (50,000 bytes); an HTTP client sends up to 64 kB
BAD: list[tuple[str, Callable[[str], str], str]] = [
    ("page", lambda r: link("cases", run=r, page=10**18), "from 1 to 1000000"),
    ("page", lambda r: link("cases", run=r, page="1e3"), "whole number"),
    ("page", lambda r: link("cases", run=r, page="\u0661\u0662"), "whole number"),  # Arabic-Indic digits
    ("after", lambda r: link("cases", run=r, after=-(10**20)), "whole number from 0"),
    ("label", lambda r: link("cases", run=r, label=f"mcq:{NUL}"), "control character (U+0000)"),
    ("label", lambda r: link("cases", run=r, label="incorrect"), "scorer:label"),
    ("label", lambda r: link("cases", run=r, label='mc"q:incorrect'), "holds '\"'"),
    ("label", lambda r: link("cases", run=r, label="m{c}q:x"), "holds '{'"),
    ("stratum", lambda r: link("cases", run=r, stratum='meta"info=step1'), "holds '\"'"),
    ("stratum", lambda r: link("cases", run=r, stratum="a\\b=c"), "holds '\\\\'"),
    ("stratum", lambda r: link("cases", run=r, stratum="=c"), "the metadata key is empty"),
    ("stratum", lambda r: link("cases", run=r, stratum=f"meta_info={NUL}"), "control character (U+0000)"),
    ("failure", lambda r: link("cases", run=r, failure=NUL), "control character"),
    ("q", lambda r: link("cases", run=r, q="x" * 60_000), "longer than 1,000 characters"),
    ("q", lambda r: link("runs", q=NUL), "control character"),
    ("tenant", lambda r: link("runs", tenant=NUL), "control character"),
    ("run", lambda r: link("run", run=NUL), "control character"),
    ("run", lambda r: link("run", run=LONG_RUN), "longer than 64 characters"),
    ("run", lambda r: link("cases", run=LONG_RUN), "longer than 64 characters"),
    ("run", lambda r: link("agreement", run=NUL), "control character"),
    ("a", lambda r: link("compare", a=LONG_RUN, b=r), "longer than 64 characters"),
    ("b", lambda r: link("compare", a=r, b=NUL), "control character"),
    ("runs", lambda r: link("leaderboard", runs=f"{r},{'b' * 65}"), "at most 64 characters"),
    ("metric", lambda r: link("trends", metric=NUL), "control character"),
    ("condition", lambda r: link("trends", condition="\x07"), "control character (U+0007)"),
    ("kind", lambda r: link("queue", run=r, kind=NUL), "control character"),
    ("seed", lambda r: link("queue", run=r, seed=-1), "whole number from 0"),
    ("n", lambda r: link("queue", run=r, n=1001), "from 1 to 1000"),
    ("whatever", lambda r: link("runs", whatever=NUL), "control character"),
]


@pytest.mark.parametrize(("name", "url", "why"), BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_a_bad_parameter_is_a_400_naming_it(
    viewer: tuple[TestClient, str], name: str, url: Callable[[str], str], why: str
) -> None:
    client, run = viewer
    response = client.get(url(run))
    assert response.status_code == 400
    shown = text_of(response.text)
    assert f"parameter '{name}': " in shown and why in shown, shown[:500]
    assert 'id="error-detail"' in response.text


def test_a_100000_character_run_id_is_a_400(viewer: tuple[TestClient, str]) -> None:
    """Longer than an HTTP client sends: straight to the app."""
    client = viewer[0]
    for path, query in (("/run", b"run="), ("/compare", b"b=x&a="), ("/run/agreement", b"run=")):
        answer = asgi_get(client.app, path, [(b"host", b"127.0.0.1")], query + b"a" * 100_000)
        assert answer.status_code == 400 and "longer than 64 characters" in answer.text, path
    old = asgi_get(client.app, "/runs/" + "a" * 100_000, [(b"host", b"127.0.0.1")])
    assert old.status_code == 307  # the old path form redirects; the query form is then refused as above


def test_a_control_character_in_the_path_is_a_400(viewer: tuple[TestClient, str]) -> None:
    client = viewer[0]
    assert client.get("/static/view%00.css").status_code == 400
    assert client.get("/run%0a").status_code == 400


def test_odd_but_harmless_filter_text_is_no_error(backend_viewer: tuple[TestClient, str, str]) -> None:
    """Quotes, backslashes and LIKE wildcards in a filter are data: no case matches, on either backend."""
    client, run, url = backend_viewer
    for params in (
        {"label": 'mcq:in"correct'},
        {"label": "mc'q:x\\y{}"},
        {"stratum": "meta'info=x\"y\\"},
        {"stratum": "meta_info=step1,{x}"},
        {"failure": "'; DROP TABLE runs; --"},
        {"q": "%_\\'\"zz"},
        {"task": "t\x00" if url.startswith("sqlite") else "nope"},  # PostgreSQL: 404, see test_view_links
    ):
        response = client.get(link("cases", run=run, **params))
        assert response.status_code == 200, params
        assert 'data-total="0"' in response.text, params
    assert 'data-total="1"' in client.get(link("cases", run=run, label="mcq:incorrect")).text


def post_review(client: TestClient, run: str, case: str, **fields: str) -> tuple[int, str]:
    page = client.get(case_link(run, "t", case)).text
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token is not None
    form = {"item_key": "mcq", "verdict": "agree", "csrf_token": token.group(1), **fields}
    done = client.post(link("adjudicate", run=run, task="t", case=case), data=form, follow_redirects=False)
    return done.status_code, done.text


def test_review_names_and_comments_are_bounded(backend_viewer: tuple[TestClient, str, str]) -> None:
    client, run, url = backend_viewer
    form = client.get(case_link(run, "t", "0")).text
    assert f'maxlength="{LIMITS["reviewer"]}"' in form and f'maxlength="{LIMITS["comment"]}"' in form
    assert "at most 200 characters" in form and "at most 10,000 characters" in form
    refused = [
        ({"reviewer": "ann", "comment": f"fine{NUL}"}, "the comment holds a control character (U+0000)"),
        ({"reviewer": f"a{NUL}n"}, "the reviewer holds a control character (U+0000)"),
        ({"reviewer": "r" * 201}, "the reviewer is 201 characters: at most 200"),
        ({"reviewer": "ann", "comment": "c" * 10_001}, "the comment is 10,001 characters: at most 10,000"),
        ({"reviewer": "ann", "comment": "c" * 900_000}, "the comment is 900,000 characters: at most 10,000"),
    ]
    for fields, why in refused:
        status, html = post_review(client, run, "0", **fields)
        assert status == 400 and why in text_of(html), why
        assert 'data-testid="review-error"' in html and 'data-testid="review-form"' in html
        assert len(html) < 60_000  # the refused text is not echoed back whole
    status, html = post_review(client, run, "0", reviewer="ann", comment="kept\tas typed")
    assert status == 303
    kept = post_review(client, run, "0", reviewer="ann", comment="x" * 10_001)[1]
    assert 'value="ann"' in kept  # what the reviewer typed stays in the form
    status, _ = post_review(client, run, "0", reviewer="r" * 200, comment="c" * 10_000)
    assert status == 303
    with ResultStore(url) as store:
        rows = history(store, run)
    assert [(r.reviewer, r.comment) for r in rows] == [("ann", "kept\tas typed"), ("r" * 200, "c" * 10_000)]


def test_a_read_only_viewer_shows_no_review_form(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    run = mcq_run(tmp_path, url)
    with ResultStore(url) as store:
        record(store, run, "t", "2", item_key="mcq", verdict="disagree", reviewer="ann", corrected_value="C")
    writable = TestClient(create_app(url), base_url="http://127.0.0.1")
    read_only = TestClient(create_app(url, read_only=True), base_url="http://127.0.0.1")
    for page in (case_link(run, "t", "2"), link("case_review", run=run, task="t", case="2")):
        assert 'data-testid="review-form"' in writable.get(page).text
        html = read_only.get(page).text
        assert 'data-testid="review-form"' not in html and '<form method="post"' not in html, page
        assert 'data-testid="review-read-only"' in html and "--read-only" in html
        assert 'data-testid="review-history"' in html and "ann" in html  # past reviews still readable
