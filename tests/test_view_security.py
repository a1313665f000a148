"""The viewer's safety: escaped case text and output, token and Host checks, CSRF, read-only, and the
CLI's one-line refusals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette")
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.testclient import TestClient
from typer.testing import CliRunner

from clineval import api
from clineval.cli.main import app as cli
from clineval.view import create_app
from clineval.view.security import CSRF_FIELD, check_csrf, csrf_token

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
        client.get(f"/runs/{run_id}/cases/t/0").text,
        client.get(f"/runs/{run_id}/cases/t/1").text,
        client.get(f"/runs/{run_id}/cases").text,
        client.get(f"/runs/{run_id}").text,
        client.get(f"/runs/{run_id}/cases", params={"q": SCRIPT}).text,
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
