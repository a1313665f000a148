"""The viewer's safety: escaped case text and output, token and Host checks, CSRF, read-only, and the
CLI's one-line refusals."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.testclient import TestClient
from typer.testing import CliRunner

from clineval.cli.main import app as cli
from clineval.runs import run as api
from clineval.store import ResultStore
from clineval.view import create_app
from clineval.view.review.adjudication import history
from clineval.view.security import CSRF_FIELD, check_csrf, csrf_token, is_loopback
from clineval.view.urls import case_link, link

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def xss_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("xss")
    row = {
        "question": f"Which? {SCRIPT}",
        "options": {"A": IMG, "B": "beta", "C": "gamma", "D": "delta"},
        "answer_idx": "A",
        "answer": "x",
        "meta_info": IMG,
    }
    (folder / "q.jsonl").write_text(json.dumps(row) + "\n" + json.dumps({**row, "question": "Q2"}) + "\n")
    preds = [{"id": "0", "output": f"{SCRIPT} {IMG} The answer is A"}, {"id": "1", "output": IMG}]
    (folder / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds))
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: xss\ntasks:\n  - id: t\n    dataset: {format: medqa, path: q.jsonl}\n"
        "    system: {type: predictions, path: p.jsonl}\n    scorers: [mcq]\n    stratify: [meta_info]\n"
    )
    url = f"sqlite:///{folder}/store.db"
    run_id = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id
    return url, run_id


def local(app: object) -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1")  # type: ignore[arg-type]


def test_case_text_and_model_output_render_inert(xss_store: tuple[str, str]) -> None:
    url, run_id = xss_store
    client = local(create_app(url))
    pages = [
        client.get(case_link(run_id, "t", "0")).text,
        client.get(case_link(run_id, "t", "1")).text,
        client.get(link("cases", run=run_id)).text,
        client.get(link("run", run=run_id)).text,
        client.get(link("cases", run=run_id, q=SCRIPT)).text,
    ]
    for html in pages:
        assert SCRIPT not in html and "<img src=x" not in html and "onerror=alert(1)>" not in html
    case = pages[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in case  # the output and the question, escaped
    assert "&lt;img src=x onerror=alert(1)&gt;" in case  # the option and the stratum value
    assert "&lt;img src=x onerror=alert(1)&gt;" in pages[3]  # the stratum chart and table


@pytest.fixture
def echo_app(xss_store: tuple[str, str]):  # type: ignore[no-untyped-def]
    def build(**kwargs: object):  # type: ignore[no-untyped-def]
        app = create_app(xss_store[0], **kwargs)  # type: ignore[arg-type]

        async def echo(request: Request) -> Response:
            form = await request.form()
            check_csrf(request, form)  # the helper the adjudication routes use: passes after the guard
            return PlainTextResponse(f"saved {form.get('note')}")

        async def token_page(request: Request) -> Response:
            return PlainTextResponse(csrf_token(request))

        app.add_route("/echo", echo, methods=["POST"])
        app.add_route("/csrf", token_page)
        return app

    return build


def test_post_needs_the_csrf_token(echo_app) -> None:  # type: ignore[no-untyped-def]
    client = local(echo_app())
    refused = client.post("/echo", data={"note": "x"})
    assert refused.status_code == 403 and "CSRF" in refused.text
    token = client.get("/csrf").text  # sets this browser's CSRF cookie
    assert client.post("/echo", data={"note": "x", CSRF_FIELD: "0" * 64}).status_code == 403
    ok = client.post("/echo", data={"note": "hello", CSRF_FIELD: token})
    assert ok.status_code == 200 and ok.text == "saved hello"
    other = client.post("/echo", data={CSRF_FIELD: token}, headers={"Origin": "http://evil.example"})
    assert other.status_code == 403
    stranger = local(echo_app())  # another browser: its own cookie, so the first one's token is useless
    stranger.get("/csrf")
    assert stranger.post("/echo", data={CSRF_FIELD: token}).status_code == 403


def test_read_only_refuses_every_post(echo_app) -> None:  # type: ignore[no-untyped-def]
    client = local(echo_app(read_only=True))
    token = client.get("/csrf").text
    refused = client.post("/echo", data={"note": "x", CSRF_FIELD: token})
    assert refused.status_code == 403 and "Read-only" in refused.text
    assert 'id="read-only-badge"' in client.get("/").text


def test_a_non_loopback_host_needs_the_token(xss_store: tuple[str, str]) -> None:
    url, _ = xss_store
    open_app = create_app(url)
    assert TestClient(open_app, base_url="http://evil.example").get("/").status_code == 403  # DNS rebinding
    app = create_app(url, token="s3cret")
    remote = TestClient(app, base_url="http://10.0.0.5:8765")
    assert remote.get("/").status_code == 401
    assert remote.get("/", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert remote.get("/", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    first = remote.get("/?token=s3cret", follow_redirects=False)
    assert first.status_code == 303 and "token=" not in first.headers["location"]
    assert remote.get("/").status_code == 200  # the cookie set from ?token= once


def test_cli_refusals_are_one_line_and_exit_2(
    tmp_path: Path, xss_store: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["view", "--store", f"sqlite:///{tmp_path}/none.db"])
    assert missing.exit_code == 2 and "no store at" in missing.output and "Traceback" not in missing.output
    (tmp_path / "bad.db").write_text("not a database")
    bad = runner.invoke(cli, ["view", "--store", f"sqlite:///{tmp_path}/bad.db"])
    assert bad.exit_code == 2 and "cannot open the store" in bad.output
    monkeypatch.delenv("CLINEVAL_VIEW_TOKEN", raising=False)
    exposed = runner.invoke(cli, ["view", "--store", xss_store[0], "--host", "0.0.0.0"])
    assert exposed.exit_code == 2 and "needs a token" in exposed.output
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # the view extra not installed
    no_extra = runner.invoke(cli, ["view", "--store", xss_store[0]])
    assert no_extra.exit_code == 2 and "pip install 'clineval[view]'" in no_extra.output


# -- the Host allow-list (DNS rebinding) -----------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """A response read straight off the ASGI messages: every header as sent, repeats included."""

    status_code: int
    header_items: list[tuple[str, str]]
    text: str


def header_items(response: Any) -> list[tuple[str, str]]:
    """(name, value) of every header of an ``Answer`` or a test client's response, lower-case names."""
    items = response.header_items if isinstance(response, Answer) else response.headers.multi_items()
    return [(k.lower(), v) for k, v in items]


def asgi_get(
    app: object, path: str = "/", headers: list[tuple[bytes, bytes]] | None = None, query: bytes = b""
) -> Answer:
    """One GET sent straight to the ASGI app with exactly ``headers`` (an HTTP client always adds a Host)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query,
        "root_path": "",
        "headers": headers or [],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))  # type: ignore[operator]
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    items = [(k.decode(), v.decode()) for k, v in start["headers"]]
    return Answer(int(start["status"]), items, body.decode())


ACCEPTED_HOSTS = [
    "127.0.0.1",
    "127.0.0.1:8765",
    "127.0.0.2",
    "127.255.255.254:80",
    "localhost",
    "LocalHost:8765",
    "[::1]",
    "[::1]:8000",
    "::1",
]
REFUSED_HOSTS = [
    "",
    "testserver",
    "testserver:8765",
    "localhost.evil.com",
    "127.0.0.1.evil.com",
    "127.0.0.1.evil.com:8765",
    "evil.example",
    "10.0.0.5:8765",
    "0.0.0.0",
    "127.1",
    "2130706433",
    "[127.0.0.1]",
    "[::ffff:127.0.0.1]",
    "[::2]",
    "[::1]8000",
    "localhost:",
    "localhost:99999",
    "localhost:80:80",
    "localhost:8o",
    "127.0.0.1 ",
    "[::1%lo]",
]


@pytest.mark.parametrize("host", ACCEPTED_HOSTS)
def test_loopback_hosts_are_served(xss_store: tuple[str, str], host: str) -> None:
    response = asgi_get(create_app(xss_store[0]), "/", [(b"host", host.encode())])
    assert response.status_code == 200 and 'data-testid="runs-table"' in response.text


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_other_hosts_are_refused(xss_store: tuple[str, str], host: str) -> None:
    response = asgi_get(create_app(xss_store[0]), "/", [(b"host", host.encode())])
    assert response.status_code == 403 and "answers only on 127.0.0.1" in response.text


def test_a_request_without_host_is_refused(xss_store: tuple[str, str]) -> None:
    assert asgi_get(create_app(xss_store[0]), "/", []).status_code == 403


def test_a_rebinding_page_can_neither_read_a_case_nor_post_a_review(xss_store: tuple[str, str]) -> None:
    """``Host: testserver:PORT`` (what a rebound name could be) passed the old allow-list."""
    url, run_id = xss_store
    app = create_app(url)
    case = case_link(run_id, "t", "0")
    honest = local(app)
    token = re.search(r'name="csrf_token" value="([^"]+)"', honest.get(case).text)
    assert token is not None
    with ResultStore(url) as store:
        before = len(history(store, run_id))
    for base in ("http://testserver", "http://testserver:8765", "http://localhost.evil.com:8765"):
        rebound = TestClient(app, base_url=base)
        rebound.cookies = honest.cookies  # even holding the victim's cookies
        assert rebound.get(case).status_code == 403
        form = {"reviewer": "mallory", "item_key": "mcq", "verdict": "agree", CSRF_FIELD: token.group(1)}
        adjudicate = link("adjudicate", run=run_id, task="t", case="0")
        assert rebound.post(adjudicate, data=form).status_code == 403
    with ResultStore(url) as store:
        assert len(history(store, run_id)) == before


def test_is_loopback_decides_whether_the_cli_needs_a_token() -> None:
    for host in ("127.0.0.1", "127.0.0.9", "localhost", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in (
        "0.0.0.0",
        "::",
        "192.168.1.2",
        "testserver",
        "localhost.evil.com",
        "127.0.0.1.evil.com",
        "",
    ):
        assert not is_loopback(host), host


def test_a_cross_origin_or_null_origin_post_is_refused(echo_app) -> None:  # type: ignore[no-untyped-def]
    client = TestClient(echo_app(), base_url="http://127.0.0.1:8765")
    token = client.get("/csrf").text
    form = {"note": "x", CSRF_FIELD: token}
    for origin in (
        "http://evil.example",
        "null",
        "http://127.0.0.1",
        "http://127.0.0.1:8766",
        "http://localhost:8765",
    ):
        refused = client.post("/echo", data=form, headers={"Origin": origin})
        assert refused.status_code == 403 and "cross-origin" in refused.text, origin
    assert client.post("/echo", data=form, headers={"Origin": "http://127.0.0.1:8765"}).text == "saved x"
    assert client.post("/echo", data=form).text == "saved x"  # no Origin (not a browser): the token decides


# -- security headers on every response -------------------------------------------------------------------


def assert_hardened(response: Any, what: str) -> None:
    items = header_items(response)
    for name in ("content-security-policy", "x-frame-options", "x-content-type-options", "referrer-policy"):
        assert [k for k, _ in items].count(name) == 1, (what, name)  # each exactly once
    headers = dict(items)
    csp = headers["content-security-policy"]
    directives = {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
    assert directives["default-src"] == ["'self'"], what
    assert directives["script-src"] == ["'self'"] and directives["style-src"] == ["'self'"], what
    assert directives["frame-ancestors"] == ["'none'"] and directives["base-uri"] == ["'none'"], what
    assert directives["form-action"] == ["'self'"] and directives["object-src"] == ["'none'"], what
    assert "unsafe" not in csp, what
    assert headers.get("x-content-type-options") == "nosniff", what
    assert headers.get("referrer-policy") in ("no-referrer", "same-origin"), what
    assert headers.get("x-frame-options") == "DENY", what


def test_every_response_carries_the_security_headers(echo_app, xss_store: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    url, run_id = xss_store
    app = echo_app()

    async def broken(request: Request) -> Response:
        raise RuntimeError("boom")

    app.add_route("/broken", broken)
    client = TestClient(
        app, base_url="http://127.0.0.1", raise_server_exceptions=False, follow_redirects=False
    )
    csrf = client.get("/csrf").text
    responses = {
        "runs": client.get("/"),
        "run": client.get(link("run", run=run_id)),
        "cases": client.get(link("cases", run=run_id)),
        "case": client.get(case_link(run_id, "t", "0")),
        "case review": client.get(link("case_review", run=run_id, task="t", case="0")),
        "queue": client.get(link("queue", run=run_id)),
        "agreement": client.get(link("agreement", run=run_id)),
        "compare": client.get(link("compare", a=run_id, b=run_id)),
        "leaderboard": client.get(link("leaderboard")),
        "trends": client.get(link("trends")),
        "404 page": client.get(link("run", run="nope")),
        "404 route": client.get("/no/such/page"),
        "400 parameter": client.get(link("cases", run=run_id, page="x")),
        "405": client.post("/", data={CSRF_FIELD: csrf}),
        "403 csrf": client.post("/echo", data={"note": "x"}),
        "413": client.post("/echo", content=b"x" * 1_100_000, headers={"content-type": "text/plain"}),
        "307 old link": client.get(f"/runs/{run_id}"),
        "303 after a review": client.post(
            link("adjudicate", run=run_id, task="t", case="0"),
            data={
                "reviewer": "ann",
                "item_key": "mcq",
                "verdict": "agree",
                CSRF_FIELD: client.get("/csrf").text,
            },
        ),
        "static css": client.get(link("static/view.css")),
        "static js": client.get(link("static/view.js")),
        "static 404": client.get(link("static/none.css")),
        "500": client.get("/broken"),
        "403 host": TestClient(app, base_url="http://testserver").get("/"),
    }
    token_app = create_app(url, token="s3cret")
    remote = TestClient(token_app, base_url="http://10.0.0.5:8765", follow_redirects=False)
    responses["401 token"] = remote.get("/")
    responses["303 token"] = remote.get("/?token=s3cret")
    read_only = TestClient(create_app(url, read_only=True), base_url="http://127.0.0.1")
    responses["403 read-only"] = read_only.post("/", data={})
    expected = {"runs": 200, "404 page": 404, "404 route": 404, "400 parameter": 400, "405": 405}
    expected |= {"403 csrf": 403, "413": 413, "307 old link": 307, "303 after a review": 303, "500": 500}
    expected |= {"static 404": 404, "403 host": 403, "401 token": 401, "303 token": 303, "403 read-only": 403}
    for what, response in responses.items():
        assert response.status_code == expected.get(what, 200), (what, response.status_code)
        assert_hardened(response, what)
    assert responses["case"].headers["cache-control"] == "no-store"  # case text stays out of the disk cache
    assert "no-store" not in responses["static css"].headers.get("cache-control", "")
    assert_hardened(asgi_get(app, "/", []), "403 without Host")


class _Markup(HTMLParser):
    """Every tag with its attributes, and the text of each <script> / <style> element."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.inline: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        if self.tags and self.tags[-1][0] in ("script", "style") and data.strip():
            self.inline.append(data)


def test_pages_carry_no_inline_script_style_or_handler(xss_store: tuple[str, str]) -> None:
    """What the CSP would block: a <script> without src, a <style> element, a style= or on...= attribute."""
    url, run_id = xss_store
    client = local(create_app(url))
    pages = [
        "/",
        link("run", run=run_id),
        link("cases", run=run_id),
        case_link(run_id, "t", "0"),
        case_link(run_id, "t", "1"),
        link("case_review", run=run_id, task="t", case="0"),
        link("queue", run=run_id),
        link("agreement", run=run_id),
        link("compare", a=run_id, b=run_id),
        link("leaderboard"),
        link("trends"),
        link("run", run="nope"),
    ]
    for path in pages:
        parser = _Markup()
        parser.feed(client.get(path).text)
        assert parser.tags, path
        assert not parser.inline, (path, parser.inline)
        for tag, attrs in parser.tags:
            assert tag != "style", path
            assert not (tag == "script" and not attrs.get("src")), path
            bad = [a for a in attrs if a == "style" or a.startswith("on")]
            assert not bad, (path, tag, bad)
