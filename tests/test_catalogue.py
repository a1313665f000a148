"""The task catalogue: `clineval tasks`, `clineval eval ... --print-suite`, model specs, one-command runs
against the local scripted OpenAI-compatible server (accuracy checked against the scripted answers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from clineval.catalogue.build import default_data_dir, suite_mapping
from clineval.catalogue.entries import CATALOGUE
from clineval.catalogue.models import PROVIDERS, parse_model
from clineval.cli.commands.eval_commands import register
from clineval.config import load_suite
from clineval.core.errors import UserInputError
from clineval.datasets import DATASETS, sample_cases
from clineval.testing import Script
from tests.conftest import StartServer

# entries with local data (Hub-only MMLU tasks load a local repository in tests/test_mmlu.py: offline)
RUNNABLE = [e for e in CATALOGUE.values() if e.unavailable is None and e.paths]


def invoke(*args: str) -> tuple[int, str]:
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_tasks_lists_every_entry() -> None:
    code, out = invoke("tasks")
    assert code == 0
    for name in CATALOGUE:
        assert name in out
    assert len(CATALOGUE) >= 14 and {"medqa", "healthbench", "ddxplus", "golden_set"} <= set(CATALOGUE)


@pytest.mark.parametrize("entry", RUNNABLE, ids=lambda e: e.name)
def test_print_suite_loads_and_equals_the_entry(entry, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    args = ["eval", entry.name, "--model", "vllm/m1"]
    if entry.needs_grader:
        args += ["--grader", "openai/grader"]
    code, out = invoke(*args, "--print-suite")
    assert code == 0, out
    path = tmp_path / "suite.yaml"
    path.write_text(out, encoding="utf-8")
    built = load_suite(path, limit=2)
    (task,) = built.spec.tasks
    assert task.id == entry.name and task.dataset.type == entry.dataset_format
    assert [s.type for s in task.scorers] == [
        s if isinstance(s, str) else next(iter(s)) for s in entry.scorers
    ]
    assert task.stratify == entry.stratify
    assert task.system.type == "openai" and task.system.args["model"] == "m1"
    assert (
        task.system.args["prompt"].endswith(entry.prompt)
        or entry.prompt + ".j2" in task.system.args["prompt"]
    )
    for key, value in entry.dataset_options.items():
        assert task.dataset.args[key] == value
    assert (task.judge is not None) == entry.needs_grader
    assert yaml.safe_load(out) == suite_mapping(
        [entry], parse_model("vllm/m1"), default_data_dir(), parse_model("openai/grader")
    )


def test_model_specs_each_provider_and_overrides() -> None:
    env: dict[str, str] = {}
    assert parse_model("openai/gpt-4o", environ=env).base_url == "https://api.openai.com/v1"
    assert (
        parse_model("openai/gpt-4o", environ={"OPENAI_BASE_URL": "http://h:1/v1/"}).base_url
        == "http://h:1/v1"
    )
    assert parse_model("vllm/meta-llama/Llama-3", environ=env).model == "meta-llama/Llama-3"
    assert parse_model("vllm/x", environ=env).base_url == "http://localhost:8000/v1"
    assert parse_model("ollama/x", environ=env).base_url == "http://localhost:11434/v1"
    assert parse_model("llamacpp/x", environ=env).base_url == "http://localhost:8080/v1"
    spec = parse_model("ollama/x", "http://box:9/v1", environ=env)
    assert spec.base_url == "http://box:9/v1" and spec.api_key_env == PROVIDERS["ollama"].api_key_env
    assert parse_model("openai/x", environ=env).system_options() == {
        "base_url": "https://api.openai.com/v1",
        "model": "x",
        "api_key_env": "OPENAI_API_KEY",
    }
    for bad in ("gpt-4o", "openai/", "foo/x"):
        with pytest.raises(UserInputError):
            parse_model(bad, environ=env)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["eval", "medqa", "--model", "foo/x"], "unknown provider 'foo'"),
        (["eval", "medqa,nope", "--model", "vllm/x"], "known tasks: medqa"),
        (["eval", "healthbench", "--model", "vllm/x"], "--grader"),
        (
            ["eval", "open_xddx", "--model", "vllm/x", "--data", "/nonexistent"],
            "--data /nonexistent: folder not found",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], needle: str) -> None:
    code, out = invoke(*args)
    assert code == 2 and needle in out and len(out.strip().splitlines()) == 1, out


def _mcq_cases(n: int, seed: int) -> list:  # type: ignore[type-arg]
    path = default_data_dir() / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"
    return sample_cases(DATASETS.get("medqa")({"path": str(path)}, path.parent).cases, n, seed)


def test_one_command_medqa_run(tmp_path: Path, start_server: StartServer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    cases = _mcq_cases(5, 3)
    # answer the gold letter on the first three sampled questions, "A" elsewhere
    answers = {c.input.question[:80]: c.reference.answer for c in cases[:3]}
    srv = start_server(Script(latency_s=0.0, default_answer="A", answers_by_substring=answers))
    monkeypatch.setenv("VLLM_API_KEY", "sk-secret-never-stored")
    store = f"sqlite:///{tmp_path / 'r.db'}"
    out = tmp_path / "out"
    code, text = invoke(
        "eval", "medqa", "--model", "vllm/m1", "--base-url", srv.base_url, "--limit", "5", "--seed", "3",
        "--out", str(out), "--store", store, "--no-cache",
    )  # fmt: skip
    assert code == 0, text
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    expected = sum(1 for c in cases if (answers.get(c.input.question[:80]) or "A") == c.reference.answer) / 5
    assert report["task_scores"]["medqa"]["accuracy"] == pytest.approx(expected)
    assert {p.name for p in out.iterdir()} >= {"report.json", "report.md", "report.html", "results.jsonl"}
    from clineval.store import ResultStore

    with_store = ResultStore(store)
    try:
        (info,) = with_store.list_runs()
        assert info.suite.tasks[0].system.args["model"] == "m1"
        assert Path(info.provenance["suite_source"]).parent == out
    finally:
        with_store.close()
    for path in [*out.iterdir(), tmp_path / "r.db"]:
        assert b"sk-secret-never-stored" not in path.read_bytes()


def test_one_command_ddx_and_golden_runs(tmp_path: Path, start_server: StartServer, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    srv = start_server(Script(latency_s=0.0, answer_format='{"differential": [{"diagnosis": "Pneumonia"}]}'))
    code, text = invoke(
        "eval", "open_xddx,golden_set", "--model", "llamacpp/m1", "--base-url", srv.base_url, "--limit", "4",
        "--out", str(tmp_path / "out"), "--store", f"sqlite:///{tmp_path / 'r.db'}", "--allow-degraded",
    )  # fmt: skip
    assert code == 0, text
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert set(report["task_scores"]) == {"open_xddx", "golden_set"}
    assert report["task_scores"]["open_xddx"]["n"] == 4


def test_a_missing_data_file_is_an_error_and_the_hub_is_used_only_when_asked(tmp_path: Path) -> None:
    """Issue 23 (was issue 15's silent fallback): a data folder without the task's file is an error naming
    the file and the folder, whether or not the task has a Hub dataset; --data hf asks for the Hub."""
    from clineval.catalogue.build import data_source, task_mapping
    from clineval.catalogue.entries import get_entries
    from clineval.catalogue.models import parse_model

    model = parse_model("vllm/m", None)
    medqa, medmcqa, open_xddx = get_entries("medqa,medmcqa,open_xddx")
    with pytest.raises(UserInputError) as err:
        task_mapping(medqa, model, tmp_path)
    line = err.value.render()
    wanted = tmp_path.resolve() / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"
    assert f"task medqa: data file {wanted} not found (looked in --data {tmp_path})" in line
    assert "--data hf to load medqa from the Hugging Face Hub" in line
    hub = data_source("hf")
    assert task_mapping(medqa, model, hub)["dataset"] == {
        "format": "medqa",
        "hf": "GBaker/MedQA-USMLE-4-options",
        "split": "test",
    }
    assert task_mapping(medmcqa, model, hub)["dataset"] == {
        "format": "medmcqa",
        "hf": "openlifescienceai/medmcqa",
        "split": "validation",
    }
    with pytest.raises(UserInputError, match=r"task open_xddx has no Hugging Face dataset: --data hf cannot"):
        task_mapping(open_xddx, model, hub)
    with pytest.raises(UserInputError, match=r"data file .*open_xddx.jsonl not found") as no_hub:
        task_mapping(open_xddx, model, tmp_path)
    assert "Hugging Face" not in no_hub.value.render()
