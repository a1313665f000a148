"""Pre-flight (issue 23): every live endpoint is checked before the run is stored or a case is called, and
each failure is one line naming the URL, the key variable or the model, exit 2 within 5 s.

Before: the README's `clineval eval medqa --model openai/gpt-4o-mini --limit 3` without OPENAI_API_KEY
cycled the circuit breaker for 62 s and exited 3 without naming the key; a closed port took 62-63 s.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clineval.core.helpers.urls import endpoint_url
from clineval.systems import build_system
from clineval.systems.preflight import Endpoint, endpoint_of, preflight, suite_endpoints
from clineval.systems.preflight_checks import PROBE_PROMPT
from clineval.testing import Reply, Rule, Script
from clineval.testing.script import prompt_hash
from tests.conftest import StartServer
from tests.preflight_helpers import error_lines, free_port, medqa_data, run_cli, stored_runs
from tests.test_live_run import write_live_suite

# Seconds, interpreter start-up included: far below the ~60 s a dead endpoint took through the circuit breaker
# before pre-flight, with room for a loaded CI machine (measured: 1.5-2.1 s, docs/runs/first_live_model.md).
FAST = 20.0


def _suite(folder: Path, system: str, judge: str = "", n: int = 3) -> Path:
    write_live_suite(folder, "http://unused", n)  # the questions (q.jsonl)
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: live\ntasks:\n  - id: live\n    dataset: {format: medqa, path: q.jsonl}\n"
        f"    system: {system}\n    scorers: [mcq]\n{judge}"
    )
    return suite


def _run(
    suite: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    store = f"sqlite:///{suite.parent}/s.db"
    return run_cli("run", str(suite), "--store", store, "--no-cache", *extra, cwd=suite.parent, env=env)


def test_a_missing_key_for_the_hosted_api_is_named_before_any_connection(tmp_path: Path) -> None:
    """The README's own first command without OPENAI_API_KEY: no network needed, the key check is first."""
    data = medqa_data(tmp_path / "data")
    done, seconds = run_cli(
        "eval", "medqa", "--model", "openai/gpt-4o-mini", "--limit", "3", "--data", str(data),
        "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and seconds < FAST, (seconds, done.stderr)
    assert error_lines(done) == [
        "error: pre-flight: OPENAI_API_KEY is not set; https://api.openai.com/v1 needs an API key "
        "(task medqa) — export OPENAI_API_KEY=<your key> (read at call time, never stored), "
        "or call a local server (--base-url)"
    ]
    assert done.stderr.count("\n") == 1 and stored_runs(tmp_path / "s.db") == 0  # nothing stored


@pytest.mark.parametrize("kind", ["openai", "http"])
def test_a_closed_port_fails_in_seconds_naming_the_url(tmp_path: Path, kind: str) -> None:
    port = free_port()
    system = (
        f"{{type: openai, base_url: 'http://127.0.0.1:{port}/v1', model: m}}"
        if kind == "openai"
        else f"{{type: http, url: 'http://127.0.0.1:{port}/predict'}}"
    )
    done, seconds = _run(_suite(tmp_path, system))
    url = f"http://127.0.0.1:{port}/v1" if kind == "openai" else f"http://127.0.0.1:{port}/predict"
    assert done.returncode == 2 and seconds < FAST, (seconds, done.stderr)
    assert error_lines(done) == [
        f"error: pre-flight: connection refused by 127.0.0.1:{port} ({url}, task live): nothing listens "
        "there — start the server, or check the port in the URL"
    ]
    assert stored_runs(tmp_path / "s.db") == 0


def test_an_unknown_model_gets_did_you_mean_from_the_served_list(
    tmp_path: Path, start_server: StartServer
) -> None:
    srv = start_server(Script(latency_s=0.0, model="meditron-7b-chat", reject_unknown_model=True))
    system = f"{{type: openai, base_url: '{srv.base_url}', model: meditron-7b-caht}}"
    done, seconds = _run(_suite(tmp_path, system))
    assert done.returncode == 2 and seconds < FAST, (seconds, done.stderr)
    assert error_lines(done) == [
        f"error: pre-flight: model 'meditron-7b-caht' is not served by {srv.base_url} (task live; HTTP 404: "
        "The model `meditron-7b-caht` does not exist.) — did you mean 'meditron-7b-chat'? served: "
        "meditron-7b-chat"
    ]
    assert srv.stats["by_path"] == {"/v1/chat/completions": 1}  # the probe, and no case


def test_a_model_the_list_lacks_but_that_answers_is_a_warning(
    tmp_path: Path, start_server: StartServer
) -> None:
    """llama.cpp lists the loaded file's name and answers any model name: not a reason to stop."""
    srv = start_server(Script(latency_s=0.0, model="qwen2.5-7b-instruct-q4_k_m.gguf"))
    done, _ = _run(_suite(tmp_path, f"{{type: openai, base_url: '{srv.base_url}', model: qwen}}", n=3))
    assert done.returncode == 0, done.stderr
    assert (
        f"pre-flight: model 'qwen' is not in {srv.base_url}/models "
        "(served: qwen2.5-7b-instruct-q4_k_m.gguf), but the probe call answered: going on"
    ) in done.stderr
    assert srv.stats["total"] == 3 + 1


def test_a_failing_probe_is_one_line_and_no_case_is_called(tmp_path: Path, start_server: StartServer) -> None:
    srv = start_server(Script(latency_s=0.0, rules=[Rule(match="pre-flight", replies=[Reply(status=500)])]))
    done, seconds = _run(
        _suite(tmp_path, f"{{type: openai, base_url: '{srv.base_url}', model: scripted-model}}")
    )
    assert done.returncode == 2 and seconds < FAST, (seconds, done.stderr)
    assert error_lines(done) == [
        f"error: pre-flight: the probe call to {srv.base_url} (model 'scripted-model', task live) failed: "
        "HTTP 500: scripted HTTP 500 — the run's calls would fail the same way; --no-preflight runs anyway"
    ]
    assert srv.stats["by_rule"] == {"pre-flight": 2} and srv.stats["total"] == 2  # tried twice, no case


def test_a_server_that_wants_a_key_names_the_variable_and_never_the_key(
    tmp_path: Path, start_server: StartServer
) -> None:
    srv = start_server(Script(latency_s=0.0, require_api_key="sk-right-0123456789"))
    suite = _suite(
        tmp_path, f"{{type: openai, base_url: '{srv.base_url}', model: m, api_key_env: CLINEVAL_T_KEY}}"
    )
    unset, _ = _run(suite)
    assert error_lines(unset) == [
        f"error: pre-flight: {srv.base_url} needs an API key and CLINEVAL_T_KEY is not set (task live; "
        "HTTP 401) — export CLINEVAL_T_KEY=<your key> (read at call time, never stored)"
    ]
    wrong, _ = _run(suite, env={"CLINEVAL_T_KEY": "sk-wrong-ABCDEFGHIJ"})
    (line,) = error_lines(wrong)
    assert line.startswith(
        f"error: pre-flight: {srv.base_url} refused the key in CLINEVAL_T_KEY (task live; "
    )
    assert "Incorrect API key provided: ***" in line and "ABCDEFG" not in wrong.stderr
    right, _ = _run(suite, env={"CLINEVAL_T_KEY": "sk-right-0123456789"})
    assert right.returncode == 0, right.stderr


def test_the_judge_endpoint_is_checked_too(tmp_path: Path, start_server: StartServer) -> None:
    srv = start_server(Script(latency_s=0.0))
    port = free_port()
    judge = f"    judge: {{base_url: 'http://127.0.0.1:{port}/v1', model: grader}}\n"
    suite = _suite(tmp_path, f"{{type: openai, base_url: '{srv.base_url}', model: scripted-model}}", judge)
    done, seconds = _run(suite)
    assert done.returncode == 2 and seconds < FAST, (seconds, done.stderr)
    assert error_lines(done) == [
        f"error: pre-flight: connection refused by 127.0.0.1:{port} (http://127.0.0.1:{port}/v1, task live "
        "judge): nothing listens there — start the server, or check the port in the URL"
    ]
    assert srv.stats["total"] <= 1  # at most the system's own probe: no case


def test_an_unset_header_variable_of_an_http_system_is_named(tmp_path: Path) -> None:
    system = "{type: http, url: 'http://127.0.0.1:9/predict', headers: {X-Api-Key: '${CLINEVAL_T_TOKEN}'}}"
    done, seconds = _run(_suite(tmp_path, system))
    assert done.returncode == 2 and seconds < FAST
    assert error_lines(done) == [
        "error: pre-flight: CLINEVAL_T_TOKEN is not set; the headers of http://127.0.0.1:9/predict use "
        "${CLINEVAL_T_TOKEN} (task live) — export CLINEVAL_T_TOKEN=..."
    ]


def test_the_probe_is_one_uncached_call_that_is_no_case_and_no_preflight_skips_it(
    tmp_path: Path, start_server: StartServer
) -> None:
    srv = start_server(Script(latency_s=0.0))
    suite = _suite(tmp_path, f"{{type: openai, base_url: '{srv.base_url}', model: scripted-model}}", n=4)
    cache = tmp_path / "c.sqlite"
    checked, _ = _run(suite, "--cache-path", str(cache))
    assert checked.returncode == 0, checked.stderr
    assert srv.stats["by_prompt"][prompt_hash(PROBE_PROMPT)] == 1 and srv.stats["total"] == 4 + 1
    assert "cache hits 0" in checked.stderr and "4/4" in checked.stderr
    srv.reset()
    skipped, _ = _run(suite, "--no-preflight")
    assert skipped.returncode == 0 and srv.stats["total"] == 4
    assert prompt_hash(PROBE_PROMPT) not in srv.stats["by_prompt"]


# --- the library: endpoints of a suite, no network -----------------------------------------------------


def test_endpoints_are_collected_once_from_systems_and_judges(tmp_path: Path) -> None:
    from clineval.config import load_suite

    suite = _suite(
        tmp_path,
        "{type: openai, base_url: 'http://127.0.0.1:1/v1/', model: m}",
        "    judge: {base_url: 'http://u:secret@127.0.0.1:2/v1?key=k', model: g}\n",
    )
    built = load_suite(suite)
    found = suite_endpoints(built.tasks)
    assert [(e.kind, e.url, e.model, e.role) for e in found] == [
        ("openai", "http://127.0.0.1:1/v1", "m", "task live"),
        ("openai", "http://u:secret@127.0.0.1:2/v1?key=k", "g", "task live judge"),
    ]
    assert found[1].shown == "http://127.0.0.1:2/v1"  # shown without credentials or query
    http = build_system(
        "http", {"url": "http://h:1/p", "headers": {"A": "${T1}", "B": "x ${T1} ${T2}"}}, tmp_path
    )
    assert endpoint_of(http) == Endpoint("http", "http://h:1/p", header_vars=("T1", "T2"))
    assert endpoint_of(object()) is None and preflight([], timeout_s=1) == []


def test_endpoint_url_never_shows_credentials() -> None:
    assert (
        endpoint_url("https://user:pw@api.example.com:8443/v1?api_key=K#f")
        == "https://api.example.com:8443/v1"
    )
    assert endpoint_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert endpoint_url(None) == "" and endpoint_url("") == ""


def test_ollama_latest_tag_counts_as_listed(start_server: StartServer) -> None:
    srv = start_server(Script(latency_s=0.0, model="llama3:latest", reject_unknown_model=False))
    ep = Endpoint("openai", srv.base_url, "llama3", "NO_SUCH_KEY_VAR")
    assert preflight([ep], timeout_s=5) == []  # no "not in /models" warning
