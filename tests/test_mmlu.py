"""MMLU (cais/mmlu): the `mmlu` loader from a local parquet repository in the Hub's layout (offline, through
`datasets.load_dataset`), from JSONL and the authors' CSV, and the six `mmlu_*` catalogue tasks end to end."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from clineval.catalogue.build import task_mapping
from clineval.catalogue.entries import CATALOGUE, MMLU_TEST_SIZES, get_entries
from clineval.catalogue.models import parse_model
from clineval.cli.commands.eval_commands import register
from clineval.core.errors import DataFileError
from clineval.datasets import DATASETS
from clineval.datasets.hf import UnpinnedRevisionWarning
from clineval.datasets.mmlu import load_mmlu
from clineval.testing import Script
from tests.conftest import StartServer

datasets = pytest.importorskip("datasets")
SHA = "0123456789abcdef0123456789abcdef01234567"
SUBJECTS = list(MMLU_TEST_SIZES)


def _rows(subject: str) -> list[dict[str, Any]]:
    """Four hand-written rows per subject, the gold index cycling 0..3."""
    return [
        {
            "question": f"{subject} question {i}: which option is right?",
            "subject": subject,
            "choices": [f"{subject} option {i}.{k}" for k in range(4)],
            "answer": i % 4,
        }
        for i in range(4)
    ]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """cais/mmlu's layout: one config per subject (README `configs:`), parquet files `SUBJECT/test-*`."""
    folder = tmp_path / "cais--mmlu"
    configs = []
    for subject in SUBJECTS:
        (folder / subject).mkdir(parents=True)
        datasets.Dataset.from_list(_rows(subject)).to_parquet(
            str(folder / subject / "test-00000-of-00001.parquet")
        )
        configs.append(
            f"- config_name: {subject}\n  data_files:\n  - split: test\n    path: {subject}/test-*\n"
        )
    (folder / "README.md").write_text("---\nconfigs:\n" + "".join(configs) + "---\n", encoding="utf-8")
    return folder


def invoke(*args: str) -> tuple[int, str]:
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_hub_layout_gives_lettered_cases_per_subject(repo: Path, tmp_path: Path) -> None:
    for subject in ("anatomy", "professional_medicine"):
        loaded = load_mmlu({"hf": str(repo), "name": subject, "split": "test", "revision": SHA}, tmp_path)
        assert [c.id for c in loaded.cases] == [f"{subject}-{i}" for i in range(4)]
        assert [c.reference.answer for c in loaded.cases] == ["A", "B", "C", "D"]
        first = loaded.cases[1]
        assert first.input.options == {k: f"{subject} option 1.{i}" for i, k in enumerate("ABCD")}
        assert first.reference.answer_text == f"{subject} option 1.1"
        assert first.metadata == {"subject": subject}
        assert loaded.source == f"hf:{repo}/{subject}@{SHA}:test"
        assert loaded.content_hash.startswith("sha256:")


def test_registered_and_a_local_jsonl_equals_the_hub_rows(repo: Path, tmp_path: Path) -> None:
    local = tmp_path / "anatomy.jsonl"
    lines = (json.dumps(r, sort_keys=True) + "\n" for r in _rows("anatomy"))  # as the adapter writes them
    local.write_text("".join(lines), encoding="utf-8")
    from_file = DATASETS.get("mmlu")({"path": str(local)}, tmp_path)
    via_hf = load_mmlu({"hf": str(repo), "name": "anatomy", "split": "test", "revision": SHA}, tmp_path)
    assert [(c.id, c.input.options, c.reference.answer, c.metadata) for c in from_file.cases] == [
        (c.id, c.input.options, c.reference.answer, c.metadata) for c in via_hf.cases
    ]
    assert from_file.content_hash == via_hf.content_hash  # the same bytes: the Hub's schema is the file's


def test_the_authors_csv_and_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "medical_genetics_test.csv"
    path.write_text('"Which gene, mostly?",BRCA1,TP53,CFTR,HBB,C\nSecond?,a,b,c,d,A\n', encoding="utf-8")
    loaded = load_mmlu({"path": str(path)}, tmp_path)
    assert [c.id for c in loaded.cases] == ["medical_genetics-0", "medical_genetics-1"]
    assert loaded.cases[0].input.question == "Which gene, mostly?"
    assert loaded.cases[0].reference.answer == "C" and loaded.cases[0].reference.answer_text == "CFTR"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(_rows("anatomy")[0]) + "\n" + json.dumps({**_rows("anatomy")[1], "answer": 7}) + "\n"
    )
    with pytest.raises(DataFileError) as err:
        load_mmlu({"path": str(bad)}, tmp_path)
    assert "answer must be 0-3" in str(err.value) and str(bad) in str(err.value) and ":2" in str(err.value)
    assert "\n" not in str(err.value)
    short = tmp_path / "short.jsonl"
    short.write_text(json.dumps({**_rows("anatomy")[0], "choices": ["x", "y"]}) + "\n")
    with pytest.raises(DataFileError, match="4 options"):
        load_mmlu({"path": str(short)}, tmp_path)


def test_catalogue_entries_use_the_hub_without_local_data(tmp_path: Path) -> None:
    model = parse_model("vllm/m", None, environ={})
    for subject in SUBJECTS:
        (entry,) = get_entries(f"mmlu_{subject}")
        assert entry.unavailable is None and entry.size == str(MMLU_TEST_SIZES[subject])
        assert task_mapping(entry, model, tmp_path)["dataset"] == {
            "format": "mmlu",
            "hf": "cais/mmlu",
            "name": subject,
            "split": "test",
        }
    code, out = invoke("eval", "mmlu_anatomy", "--model", "vllm/m1", "--print-suite")
    assert code == 0, out
    (task,) = yaml.safe_load(out)["tasks"]
    assert task["dataset"] == {"format": "mmlu", "hf": "cais/mmlu", "name": "anatomy", "split": "test"}
    code, out = invoke("tasks")
    assert code == 0 and "mmlu_professional_medicine" in out and "272" in out


def test_one_command_mmlu_run_against_the_local_repository(  # type: ignore[no-untyped-def]
    repo: Path, tmp_path: Path, start_server: StartServer, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    entry = CATALOGUE["mmlu_anatomy"]
    monkeypatch.setitem(
        CATALOGUE, entry.name, dataclasses.replace(entry, hf={**(entry.hf or {}), "hf": str(repo)})
    )
    rows = _rows("anatomy")
    # the gold letter on questions 0 and 2, "A" elsewhere: question 0's gold is A anyway -> 2 of 4 right
    answers = {rows[i]["question"]: "ABCD"[rows[i]["answer"]] for i in (0, 2)}
    srv = start_server(Script(latency_s=0.0, default_answer="A", answers_by_substring=answers))
    store = f"sqlite:///{tmp_path / 'r.db'}"
    out = tmp_path / "out"
    code, text = invoke(
        "eval", "mmlu_anatomy", "--model", "vllm/m1", "--base-url", srv.base_url, "--out", str(out),
        "--store", store, "--no-cache",
    )  # fmt: skip
    assert code == 0, text
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    expected = sum((answers.get(r["question"]) or "A") == "ABCD"[r["answer"]] for r in rows) / len(rows)
    assert expected == 0.5
    assert report["task_scores"]["mmlu_anatomy"]["accuracy"] == pytest.approx(expected)
    from clineval.store import ResultStore

    with_store = ResultStore(store)
    try:
        (info,) = with_store.list_runs()
        assert info.suite.tasks[0].dataset.args["name"] == "anatomy"
        assert any("no 'revision' pin" in w for w in info.provenance["warnings"])
    finally:
        with_store.close()


def test_unpinned_hub_source_warns(repo: Path, tmp_path: Path) -> None:
    with pytest.warns(UnpinnedRevisionWarning):
        load_mmlu({"hf": str(repo), "name": "anatomy", "split": "test"}, tmp_path)
