"""`clineval eval` data paths (issue 23 item 4): a data folder or file that does not exist is one line naming
it, exit 2; the Hugging Face Hub is used only when asked for (`--data hf`), never as a silent fallback.

Before: a missing `--data` folder fell back to the Hub for MedQA and MedMCQA: 10 lines of retries over
25 s, then an error that never named the path.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from clineval.catalogue import build
from clineval.catalogue.build import data_source, task_mapping
from clineval.catalogue.entries import get_entries
from clineval.catalogue.models import parse_model
from clineval.cli.commands.eval_commands import register
from clineval.core.errors import UserInputError


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.output


MEDQA_HINT = (
    "give the folder that holds medqa_usmle_4opt/phrases_no_exclude_test.jsonl "
    "(--data DIR or $CLINEVAL_DATA), or --data hf to load medqa from the Hugging Face Hub"
)


def test_a_data_folder_that_does_not_exist_is_one_line_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    code, out = invoke("eval", "medqa", "--model", "vllm/m", "--data", str(missing), "--print-suite")
    assert code == 2 and out == f"error: --data {missing}: folder not found — {MEDQA_HINT}\n"
    code, out = invoke(
        "eval", "medqa", "--model", "vllm/m", "--print-suite", env={"CLINEVAL_DATA": str(missing)}
    )
    assert code == 2 and out == f"error: $CLINEVAL_DATA={missing}: folder not found — {MEDQA_HINT}\n"
    # a Hub-only task reads nothing from the folder, but a folder the user named must still exist
    code, out = invoke("eval", "mmlu_anatomy", "--model", "vllm/m", "--data", str(missing), "--print-suite")
    assert code == 2 and out == f"error: --data {missing}: folder not found — give a folder that exists\n"


def test_a_file_missing_from_the_folder_names_the_file_and_the_folder(tmp_path: Path) -> None:
    code, out = invoke("eval", "medqa", "--model", "vllm/m", "--data", str(tmp_path), "--print-suite")
    wanted = tmp_path.resolve() / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"
    assert code == 2 and out.count("\n") == 1
    assert out.startswith(f"error: task medqa: data file {wanted} not found (looked in --data {tmp_path}) — ")


def test_a_missing_default_folder_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "REPO_ROOT", tmp_path / "clineval")  # the default: ../shared/data beside it
    source = data_source(None, environ={})
    assert source.folder == tmp_path / "shared" / "data"
    with pytest.raises(UserInputError) as err:
        task_mapping(get_entries("medqa")[0], parse_model("vllm/m", None, environ={}), source)
    default = tmp_path / "shared" / "data"
    assert err.value.render() == f"the default data folder {default}: folder not found — {MEDQA_HINT}"


def test_the_hub_is_used_when_asked_for() -> None:
    code, out = invoke("eval", "medqa,medmcqa", "--model", "vllm/m", "--data", "hf", "--print-suite")
    assert code == 0, out
    datasets = [t["dataset"] for t in yaml.safe_load(out)["tasks"]]
    assert datasets == [
        {"format": "medqa", "hf": "GBaker/MedQA-USMLE-4-options", "split": "test"},
        {"format": "medmcqa", "hf": "openlifescienceai/medmcqa", "split": "validation"},
    ]
    code, out = invoke("eval", "pubmedqa", "--model", "vllm/m", "--data", "hf", "--print-suite")
    assert code == 2 and out.startswith("error: task pubmedqa has no Hugging Face dataset: --data hf cannot")
