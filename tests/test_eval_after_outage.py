"""Issue 23 items 1 and 3: only successes are cached, `eval` has every run option `run` has, and the suite
`eval --print-suite` prints is exactly the run `eval` does.

Before: with the endpoint down, `clineval eval medqa --model openai/z --base-url URL --limit 5` cached five
`circuit_open` failures; once the endpoint was back the same command replayed them (`cache hits 5`, exit 3,
the endpoint saw 0 requests). And `--print-suite` dropped --limit and --seed: the printed suite, run with
`clineval run`, ran all 1,273 MedQA questions instead of the 50 of the trial.
"""

from __future__ import annotations

import asyncio
import shlex
import sqlite3
from pathlib import Path

from typer.main import get_command

from clineval.cli.main import app
from clineval.cli.run_options import RUN_OPTIONS
from clineval.core import Case, CaseInput, SystemOutput
from clineval.runner.cache import ResponseCache
from clineval.runner.calls import call_system
from clineval.runner.policy import CallPolicy
from clineval.store import ResultStore
from clineval.systems import build_system
from clineval.testing import Script
from clineval.testing.process import running_server_process
from tests.conftest import StartServer
from tests.preflight_helpers import cache_rows, free_port, medqa_data, run_cli


def test_after_an_outage_the_same_command_calls_every_failed_case_again(tmp_path: Path) -> None:
    """The issue's sequence. --no-preflight: with it the first command stops at the pre-flight (exit 2,
    tests/test_preflight.py) and nothing is called or cached at all; here the failures must happen."""
    port = free_port()
    data = medqa_data(tmp_path / "data")
    command = [
        "eval", "medqa", "--model", "openai/z", "--base-url", f"http://127.0.0.1:{port}/v1", "--limit", "5",
        "--data", str(data), "--no-preflight", "--max-outage", "0.5",
        "--tenant", "ward-7", "--run-type", "nightly",  # run options eval lacked before
    ]  # fmt: skip
    down, down_s = run_cli(*command, cwd=tmp_path)
    assert down.returncode == 3, down.stderr
    assert "failed 5 (circuit_open 5)" in down.stderr and down_s < 30
    assert f"the endpoint http://127.0.0.1:{port}/v1 was down longer than the max outage" in down.stderr
    assert cache_rows(tmp_path / ".clineval" / "cache.sqlite") == 0  # no failure was cached

    with running_server_process(Script(latency_s=0.01), port=port) as server:
        back, _ = run_cli(*command, cwd=tmp_path)
        stats = server.stats
    assert back.returncode == 0, back.stderr
    assert stats["total"] == 5 and stats["by_path"] == {"/v1/chat/completions": 5}
    assert "failed 0, retries 0, cache hits 0" in back.stderr
    assert cache_rows(tmp_path / ".clineval" / "cache.sqlite") == 5
    store = ResultStore(f"sqlite:///{tmp_path}/.clineval/clineval.db")  # eval's default store, in its cwd
    try:
        runs = store.list_runs()
    finally:
        store.close()
    assert [(r.status, r.tenant_id, r.run_type) for r in runs] == [("finished", "ward-7", "nightly")] * 2


def test_a_failure_in_an_old_cache_is_a_miss(tmp_path: Path, start_server: StartServer) -> None:
    """Caches written before issue 23 hold failures: they are called again, never replayed."""
    srv = start_server(Script(latency_s=0.0))
    system = build_system("openai", {"base_url": srv.base_url, "model": "m"}, Path("."))
    case = Case(id="1", input=CaseInput(question="Q?", options={"A": "a", "B": "b"}))
    path = tmp_path / "cache.sqlite"
    ResponseCache(path).close()  # the schema
    key = system.cache_key(case)
    assert key is not None
    failure = SystemOutput.failure("circuit_open", "the endpoint was down", attempts=0)
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO responses VALUES (?, ?, 0)", (key, failure.model_dump_json(exclude={"cached"}))
        )

    async def call(cache: ResponseCache) -> SystemOutput:
        await system.start(1)
        try:
            return await call_system(system, case, CallPolicy(timeout_s=5), cache)
        finally:
            await system.close()

    with ResponseCache(path) as cache:
        assert cache.get(key) is None and len(cache) == 1
        output = asyncio.run(call(cache))
        assert (output.failed, output.cached, srv.stats["total"]) == (False, False, 1)
        stored = cache.get(key)
        assert stored is not None and stored.text == output.text and len(cache) == 1


def _options(command_name: str) -> dict[str, tuple[object, ...]]:
    command = get_command(app).commands[command_name]  # type: ignore[attr-defined]
    return {
        p.name: (
            tuple(p.opts),
            tuple(p.secondary_opts),
            p.default,
            p.help,
            p.metavar,
            p.min,
            p.max,
            p.is_flag,
        )
        for p in command.params
        if p.param_type_name == "option"
    }


def test_run_and_eval_share_one_option_set() -> None:
    run, evaluate = _options("run"), _options("eval")
    shared = set(RUN_OPTIONS)
    assert {n: run[n] for n in shared} == {n: evaluate[n] for n in shared}  # names, defaults, help, types
    both = (set(run) & set(evaluate)) - shared
    assert not both, f"{both}: an option both commands take is declared once, in cli.run_options.RUN_OPTIONS"
    assert set(run) - shared == {"resume", "shard", "run_id"}
    assert set(evaluate) - shared == {"model", "base_url", "grader", "grader_base_url", "data", "print_suite"}
    wanted = {
        "max_retries",
        "max_outage",
        "retry_failed",
        "tenant",
        "run_type",
        "no_preflight",
        "limit",
        "seed",
    }
    assert wanted <= set(evaluate)


def _printed_command(printed: str) -> list[str]:
    (line,) = [line for line in printed.splitlines() if line.startswith("#   clineval run ")]
    return shlex.split(line.removeprefix("#   "))


def test_the_printed_suite_run_with_clineval_run_is_the_eval_run(
    tmp_path: Path, start_server: StartServer
) -> None:
    srv = start_server(Script(latency_s=0.0))
    data = medqa_data(tmp_path / "data", n=60)
    options = [
        "--model", "openai/scripted-model", "--base-url", srv.base_url, "--data", str(data),
        "--limit", "7", "--seed", "3", "--concurrency", "3", "--timeout", "20", "--max-retries", "2",
        "--tenant", "t9", "--store", f"sqlite:///{tmp_path}/s.db",
    ]  # fmt: skip
    printed, _ = run_cli("eval", "medqa", *options, "--print-suite", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    command = _printed_command(printed.stdout)
    assert command == [
        "clineval", "run", "suite.yaml", "--store", f"sqlite:///{tmp_path}/s.db", "--limit", "7",
        "--seed", "3", "--concurrency", "3", "--timeout", "20.0", "--max-retries", "2", "--tenant", "t9",
    ]  # fmt: skip
    (tmp_path / "suite.yaml").write_text(printed.stdout)

    evaluated, _ = run_cli("eval", "medqa", *options, cwd=tmp_path)
    assert evaluated.returncode == 0, evaluated.stderr
    repeated, _ = run_cli(*command[1:], cwd=tmp_path)
    assert repeated.returncode == 0, repeated.stderr

    store = ResultStore(f"sqlite:///{tmp_path}/s.db")
    try:
        runs = store.list_runs()
        assert len(runs) == 2
        cases = [store.finished_keys(r.run_id) for r in runs]
        specs = [(r.suite.limit, r.suite.seed, r.suite.spec_hash, r.tenant_id) for r in runs]
    finally:
        store.close()
    assert len(cases[0]) == 7 and cases[0] == cases[1]  # the same 7 questions, not all 60
    assert specs[0] == specs[1] and specs[0][:2] == (7, 3) and specs[0][3] == "t9"
