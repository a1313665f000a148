"""The viewer as a user meets it: a huge case output is cut on its page with a link to the whole text
(served as plain text with the viewer's security headers), and a second ``clineval view`` on a busy port
is one line and exit 2."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from clineval.runs import run as api
from clineval.view import create_app
from clineval.view.renderers.case import OUTPUT_LIMIT
from clineval.view.security import SECURITY_HEADERS
from clineval.view.urls import case_link, link
from tests.cli_helpers import clineval, write_small_suite

HUGE = "The answer is A. " + "x" * (3 * OUTPUT_LIMIT) + " THE-END"
STRUCTURED: dict[str, Any] = {"answer": "A", "differential": [{"diagnosis": "d" * 1000} for _ in range(300)]}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, str]:
    folder = tmp_path_factory.mktemp("large")
    predictions = [
        json.dumps({"id": "0", "output": HUGE}),
        json.dumps({"id": "1", "output": "B"}),
        json.dumps({"id": "2", "output": {"text": "C", **STRUCTURED}}),
    ]
    suite = write_small_suite(folder, predictions=predictions)
    url = f"sqlite:///{folder}/s.db"
    run_id = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id
    return TestClient(create_app(url), base_url="http://127.0.0.1"), run_id


def test_a_huge_output_is_cut_with_a_link_to_the_whole_text(served: tuple[TestClient, str]) -> None:
    client, run_id = served
    page = client.get(case_link(run_id, "t", "0"))
    assert page.status_code == 200
    assert "THE-END" not in page.text and "x" * 5000 in page.text
    assert len(page.content) < OUTPUT_LIMIT + 60_000  # before: the page held all 600,000+ characters
    assert f"its first {OUTPUT_LIMIT:,} of {len(HUGE):,} characters are shown" in page.text
    whole = link("case_output", run=run_id, task="t", case="0")
    assert f'href="{whole.replace("&", "&amp;")}" id="output-full"' in page.text
    raw = client.get(whole)
    assert raw.status_code == 200 and raw.text == HUGE
    assert raw.headers["content-type"] == "text/plain; charset=utf-8"
    for name, value in SECURITY_HEADERS:  # nosniff, CSP, frame and referrer policies, as every page
        assert raw.headers[name.decode()] == value.decode()
    small = client.get(case_link(run_id, "t", "1"))
    assert small.status_code == 200 and "output-truncated" not in small.text


def test_a_huge_structured_output_is_cut_too(served: tuple[TestClient, str]) -> None:
    client, run_id = served
    page = client.get(case_link(run_id, "t", "2"))
    assert page.status_code == 200 and 'id="structured-truncated"' in page.text
    raw = client.get(link("case_output", run=run_id, task="t", case="2", part="structured"))
    whole = json.loads(raw.text)["differential"]
    assert [d["diagnosis"] for d in whole] == [d["diagnosis"] for d in STRUCTURED["differential"]]
    assert client.get(link("case_output", run=run_id, task="t", case="nope")).status_code == 404


def test_a_second_viewer_on_a_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    write_small_suite(tmp_path, predictions=['{"id": "0", "output": "A"}'])
    store = f"sqlite:///{tmp_path}/s.db"
    assert clineval("run", "suite.yaml", "--store", store, "--allow-degraded", cwd=tmp_path).returncode == 0
    with socket.socket() as busy:  # what the first `clineval view` holds
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        done = clineval("view", "--store", store, "--port", str(port), cwd=tmp_path, timeout=60)
    assert done.returncode == 2, done.stderr  # before: exit 3, the code of a degraded run
    assert done.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use (another clineval view?) — stop it, or pass --port N "
        "(--port 0: any free port)"
    ]  # before: the URL, then uvicorn's "[Errno 98] ... address already in use"
    assert done.stdout == ""
