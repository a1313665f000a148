"""An API key echoed by an endpoint never reaches a message, the store, the cache or a report.

Redaction runs before a message is cut, and masks any run of 6+ characters of a secret, so the key is
placed at every offset around each cut (the 300-character error message of a JSON error body and the
120-character snippet of a body that is not JSON) and no 6-character piece of it may survive.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path

import pytest

from clineval.core.errors import SystemCallError
from clineval.core.helpers.redaction import FRAGMENT, redact
from clineval.systems._http import JsonHttpClient, status_error
from clineval.testing import Reply, Rule, Script
from tests.cli_helpers import MEDQA_ROW, clineval
from tests.conftest import StartServer

KEY = "sk-live-7Qm2ZrT9vWb4KpX8nYc3LhJ6dFg5Ra"  # 38 characters, as in the issue
assert len(KEY) == 38
SECRETS = [KEY, f"Bearer {KEY}"]  # what the openai system passes: the key and its Authorization value
JSON_CUT, SNIPPET_CUT = 300, 120


def leaked(text: str, key: str = KEY) -> list[str]:
    """Every FRAGMENT-character piece of ``key`` found in ``text``."""
    return [key[i : i + FRAGMENT] for i in range(len(key) - FRAGMENT + 1) if key[i : i + FRAGMENT] in text]


def test_redact_masks_whole_keys_and_any_six_character_piece() -> None:
    assert redact(f"bad key {KEY}.", SECRETS) == "bad key ***."
    assert redact(f"Authorization: Bearer {KEY}", SECRETS) == "Authorization: ***"
    assert redact(f"cut: {KEY[:6]}| {KEY[-6:]}| {KEY[10:15]}", SECRETS) == f"cut: ***| ***| {KEY[10:15]}"
    assert redact("Bearer token missing", SECRETS) == "Bearer token missing"  # the scheme is no secret
    assert redact("short secrets: abcd", ["abcd"]) == "short secrets: ***"


@pytest.mark.parametrize("offset", range(JSON_CUT - len(KEY) - 8, JSON_CUT + 8))
def test_json_error_message_around_the_300_cut(offset: int) -> None:
    body = json.dumps({"error": {"message": "x" * offset + KEY + " is not a valid key"}}).encode()
    err = status_error(401, body, {}, SECRETS)
    assert not leaked(err.message), (offset, err.message)
    expected = ("x" * offset + "*** is not a valid key")[:JSON_CUT]  # redacted first, then cut
    assert err.message == f"HTTP 401: {expected}"


@pytest.mark.parametrize("offset", [0, 1, 100, *range(JSON_CUT - len(KEY) - 2, JSON_CUT + 2)])
def test_non_json_error_body_around_the_300_cut(offset: int) -> None:
    err = status_error(502, ("<" * offset + KEY + ">").encode(), {}, SECRETS)
    assert not leaked(err.message), (offset, err.message)
    assert err.message == "HTTP 502: " + ("<" * offset + "***>")[:JSON_CUT]


def _chat(content: str) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": content}]}


def test_non_json_success_body_around_the_120_cut(start_server: StartServer) -> None:
    offsets = range(SNIPPET_CUT - len(KEY) - 4, SNIPPET_CUT + 4)
    rules = [Rule(match=f"case {o}|", replies=[Reply(body="~" * o + KEY + " trailing")]) for o in offsets]
    server = start_server(Script(latency_s=0.0, rules=rules))

    async def errors() -> list[SystemCallError]:
        client = JsonHttpClient()
        await client.start(4)
        found = []
        try:
            for o in offsets:
                try:
                    await client.post_json(
                        f"{server.base_url}/chat/completions", _chat(f"case {o}|"), {}, secrets=SECRETS
                    )
                except SystemCallError as err:
                    found.append(err)
        finally:
            await client.close()
        return found

    found = asyncio.run(errors())
    assert len(found) == len(offsets)
    for o, err in zip(offsets, found, strict=True):
        assert err.kind == "malformed_response"
        assert not leaked(err.message), (o, err.message)
        snippet = ("~" * o + "*** trailing")[:SNIPPET_CUT]
        assert err.message == f"response body is not JSON: {snippet!r}"


# --- end to end: a CLI run whose endpoint echoes the key; every file it leaves behind is searched ---------


def test_cli_run_stores_no_piece_of_an_echoed_key(tmp_path: Path, start_server: StartServer) -> None:
    json_offsets = list(range(JSON_CUT - len(KEY) - 2, JSON_CUT + 2))
    snippet_offsets = list(range(SNIPPET_CUT - len(KEY) - 2, SNIPPET_CUT + 2))
    rules = []
    for i, o in enumerate(json_offsets):  # a 401 whose JSON error message echoes the key at offset o
        message = {"error": {"message": "x" * o + KEY + " is invalid", "type": "auth"}}
        rules.append(Rule(match=f"Q{i}?", replies=[Reply(status=401, json=message)]))
    for j, o in enumerate(snippet_offsets, start=len(json_offsets)):  # a 200 whose body is not JSON
        rules.append(Rule(match=f"Q{j}?", replies=[Reply(body="~" * o + KEY)]))
    n = len(rules)
    server = start_server(Script(latency_s=0.0, rules=rules))
    (tmp_path / "q.jsonl").write_text("".join(MEDQA_ROW.format(i=i, gold="A") + "\n" for i in range(n)))
    (tmp_path / "suite.yaml").write_text(
        "name: leak\ntasks:\n  - id: leak\n    dataset: {format: medqa, path: q.jsonl}\n"
        f"    system: {{type: openai, base_url: '{server.base_url}', model: scripted-model}}\n"
        "    scorers: [mcq]\n"
    )
    env_key = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = KEY
    try:
        args = ["suite.yaml", "--store", "sqlite:///store.db", "--out", "out", "--max-retries", "0"]
        result = clineval("run", *args, cwd=tmp_path)  # no retry: one call per case
    finally:
        if env_key is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = env_key
    assert server.stats["total"] >= n, result.stderr
    assert "Traceback" not in result.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name not in ("q.jsonl", "suite.yaml")]
    names = {p.name for p in files}
    assert {"store.db", "report.json", "report.md", "report.html", "results.jsonl"} <= names, names
    records = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").open(encoding="utf-8")]
    by_case = {int(r["case_id"]): r["error"] for r in records}
    expected = [("http_401", "HTTP 401: " + ("x" * o + "*** is invalid")[:JSON_CUT]) for o in json_offsets]
    expected += [
        (
            "malformed_response",
            f"response body is not JSON: {('~' * o + '***')[:SNIPPET_CUT]!r} (gave up after 1 attempts)",
        )
        for o in snippet_offsets
    ]
    assert [(by_case[i]["kind"], by_case[i]["message"]) for i in range(n)] == expected
    masked = [m for _, m in expected if "***" in m]
    with sqlite3.connect(tmp_path / "store.db") as db:  # the messages are in the store being searched
        stored = db.execute("select result from case_results where status = 'failed'").fetchall()
    assert sum("***" in json.loads(row[0])["output"]["error"]["message"] for row in stored) == len(masked)
    for path in files:
        data = path.read_bytes()
        for text in (data.decode("utf-8", errors="replace"), data.decode("latin-1")):
            assert not leaked(text), (path.name, leaked(text)[:3])
    assert result.stdout + result.stderr and not leaked(result.stdout + result.stderr)
