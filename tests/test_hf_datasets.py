"""`dataset: {hf: ...}` through `datasets.load_dataset`, offline: local repositories in the HF schemas."""

from __future__ import annotations

import builtins
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from clineval.config import load_suite
from clineval.core import LoadedDataset
from clineval.core.errors import DataFileError, UserInputError
from clineval.datasets.hf import EXTRA_HINT, UnpinnedRevisionWarning
from clineval.datasets.medmcqa import load_medmcqa
from clineval.datasets.medqa import load_medqa
from clineval.datasets.pubmedqa import load_pubmedqa
from tests.helpers import shared_data

datasets = pytest.importorskip("datasets")
N = 120
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


def _jsonl_head(path: Path, n: int) -> list[str]:
    with path.open(encoding="utf-8") as lines:
        return [next(lines) for _ in range(n)]


def _parquet(folder: Path, split: str, rows: list[dict[str, Any]]) -> Path:
    (folder / "data").mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows).to_parquet(str(folder / "data" / f"{split}-00000-of-00001.parquet"))
    return folder


def _same_cases(a: LoadedDataset, b: LoadedDataset) -> None:
    assert [c.id for c in a.cases] == [c.id for c in b.cases]
    for x, y in zip(a.cases, b.cases, strict=True):
        assert x.input.question == y.input.question
        assert x.input.options == y.input.options
        assert x.input.context == y.input.context
        assert x.reference.answer == y.reference.answer
        assert x.reference.answer_text == y.reference.answer_text


def _medqa_repo(tmp_path: Path) -> tuple[Path, Path]:
    """GBaker/MedQA-USMLE-4-options: the JSONL fields as parquet columns (options a struct A..D)."""
    lines = _jsonl_head(shared_data("medqa_usmle_4opt", "phrases_no_exclude_test.jsonl"), N)
    local = tmp_path / "medqa.jsonl"
    local.write_text("".join(lines), encoding="utf-8")
    return _parquet(tmp_path / "GBaker--MedQA", "test", [json.loads(line) for line in lines]), local


def _medmcqa_repo(tmp_path: Path) -> tuple[Path, Path]:
    """openlifescienceai/medmcqa: split `validation`, `cop` 0-based."""
    lines = _jsonl_head(shared_data("medmcqa_dev", "dev.json"), N)
    local = tmp_path / "dev.json"
    local.write_text("".join(lines), encoding="utf-8")
    rows = [json.loads(line) for line in lines]
    hf_rows = [{**row, "cop": row["cop"] - 1} for row in rows]
    return _parquet(tmp_path / "medmcqa", "validation", hf_rows), local


def _pubmedqa_repo(tmp_path: Path) -> Path:
    """qiaojin/PubMedQA: config `pqa_labeled` (README configs), split `train`, `context` a struct."""
    records = json.loads(shared_data("pubmedqa", "ori_pqal.json").read_text(encoding="utf-8"))
    rows = [
        {
            "pubid": int(pmid),
            "question": rec["QUESTION"],
            "context": {
                "contexts": rec["CONTEXTS"],
                "labels": rec["LABELS"],
                "meshes": rec.get("MESHES", []),
                "reasoning_required_pred": rec.get("reasoning_required_pred", []),
                "reasoning_free_pred": rec.get("reasoning_free_pred", []),
            },
            "long_answer": rec.get("LONG_ANSWER", ""),
            "final_decision": rec["final_decision"],
        }
        for pmid, rec in records.items()
    ]
    repo = tmp_path / "PubMedQA"
    (repo / "pqa_labeled").mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(str(repo / "pqa_labeled" / "train-00000-of-00001.parquet"))
    (repo / "README.md").write_text(
        "---\nconfigs:\n- config_name: pqa_labeled\n  data_files:\n  - split: train\n"
        "    path: pqa_labeled/train-*\n---\n"
    )
    return repo


def test_medqa_hf_equals_the_local_file(tmp_path: Path) -> None:
    repo, local = _medqa_repo(tmp_path)
    via_hf = load_medqa({"hf": str(repo), "revision": SHA, "split": "test"}, tmp_path)
    _same_cases(via_hf, load_medqa({"path": str(local)}, tmp_path))
    assert len(via_hf.cases) == N
    assert via_hf.content_hash.startswith("sha256:")
    assert f"@{SHA}:test" in via_hf.source


def test_medmcqa_hf_maps_the_zero_based_cop(tmp_path: Path) -> None:
    repo, local = _medmcqa_repo(tmp_path)
    via_hf = load_medmcqa({"hf": str(repo), "revision": SHA, "split": "validation"}, tmp_path)
    from_file = load_medmcqa({"path": str(local)}, tmp_path)
    _same_cases(via_hf, from_file)
    assert [c.metadata for c in via_hf.cases] == [c.metadata for c in from_file.cases]


def test_pubmedqa_hf_config_and_ground_truth(tmp_path: Path) -> None:
    repo = _pubmedqa_repo(tmp_path)
    gold = str(shared_data("pubmedqa", "test_ground_truth.json"))
    options = {"hf": str(repo), "name": "pqa_labeled", "revision": SHA, "split": "train"}
    via_hf = load_pubmedqa({**options, "ground_truth": gold}, tmp_path)
    from_file = load_pubmedqa(
        {"path": str(shared_data("pubmedqa", "ori_pqal.json")), "ground_truth": gold}, tmp_path
    )
    _same_cases(via_hf, from_file)
    assert len(via_hf.cases) == 500
    everything = load_pubmedqa({**options, "contexts": False}, tmp_path)
    assert len(everything.cases) == 1000 and everything.cases[0].input.context == []


def test_revision_and_content_hash_reach_the_suite_spec(tmp_path: Path) -> None:
    repo, _ = _medqa_repo(tmp_path)
    first = json.loads(_jsonl_head(shared_data("medqa_usmle_4opt", "phrases_no_exclude_test.jsonl"), 1)[0])
    (tmp_path / "p.jsonl").write_text(json.dumps({"id": "0", "output": first["answer_idx"]}) + "\n")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: hf\ntasks:\n  - id: t\n"
        f"    dataset: {{format: medqa, hf: {repo}, revision: {SHA}, split: test}}\n"
        "    system: {type: predictions, path: p.jsonl}\n    scorers: [mcq]\n"
    )
    spec = load_suite(suite).tasks[0].spec.dataset
    assert spec.args["revision"] == SHA and spec.args["hf"] == str(repo)
    assert (
        spec.content_hash
        == load_medqa({"hf": str(repo), "split": "test", "revision": SHA}, tmp_path).content_hash
    )


def test_a_missing_revision_warns(tmp_path: Path) -> None:
    repo, _ = _medqa_repo(tmp_path)
    with pytest.warns(UnpinnedRevisionWarning, match="no 'revision' pin"):
        load_medqa({"hf": str(repo), "split": "test"}, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnpinnedRevisionWarning)
        load_medqa({"hf": str(repo), "split": "test", "revision": SHA}, tmp_path)


def test_an_unknown_split_is_one_clear_error(tmp_path: Path) -> None:
    repo, _ = _medmcqa_repo(tmp_path)
    with pytest.raises(DataFileError, match="unknown split 'test'") as err:
        load_medmcqa({"hf": str(repo), "revision": SHA, "split": "test"}, tmp_path)
    assert "\n" not in str(err.value)


def test_path_and_hf_are_exclusive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="either 'path'"):
        load_medqa({"path": "q.jsonl", "hf": "GBaker/MedQA-USMLE-4-options"}, tmp_path)
    with pytest.raises(ValueError, match="either 'path'"):
        load_medqa({}, tmp_path)


def test_without_the_hf_extra_one_clean_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_datasets(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "datasets" or name.startswith("datasets."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_datasets)
    with pytest.raises(UserInputError) as err:
        load_medqa({"hf": "GBaker/MedQA-USMLE-4-options", "revision": SHA, "split": "test"}, tmp_path)
    assert str(err.value) == EXTRA_HINT == "needs the hf extra: pip install 'clineval[hf]'"


def test_an_unpinned_revision_reaches_the_run_provenance(tmp_path: Path) -> None:
    from clineval.runs import run as api

    repo, _ = _medqa_repo(tmp_path)
    cases = load_medqa({"hf": str(repo), "split": "test", "revision": SHA}, tmp_path).cases
    (tmp_path / "p.jsonl").write_text("".join(json.dumps({"id": c.id, "output": "A"}) + "\n" for c in cases))
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: hf\ntasks:\n  - id: t\n"
        f"    dataset: {{format: medqa, hf: {repo}, split: test}}\n"
        "    system: {type: predictions, path: p.jsonl}\n    scorers: [mcq]\n"
    )
    run = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path / 's.db'}", cache_path=None)
    )
    warned = [w for w in run.info.provenance["warnings"] if "revision" in w]
    assert len(warned) == 1 and warned[0].startswith("task t: ")
