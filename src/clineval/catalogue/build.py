"""Catalogue entries + a model -> the suite (the same mapping a suite YAML file holds), its YAML, its file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from clineval.catalogue.entries import CATALOGUE_PROMPTS, CatalogueEntry
from clineval.catalogue.models import ModelSpec
from clineval.core.errors import UserInputError
from clineval.core.specs import canonical_json, sha256_text

DATA_ENV = "CLINEVAL_DATA"
REPO_ROOT = Path(__file__).resolve().parents[3]  # src/clineval/catalogue/build.py -> the repository


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$CLINEVAL_DATA``, else ``../shared/data`` next to the repository."""
    env = os.environ if environ is None else environ
    return Path(env[DATA_ENV]) if env.get(DATA_ENV) else REPO_ROOT.parent / "shared" / "data"


def prompt_option(name: str) -> str:
    """A packaged prompt's name, or the path of a catalogue prompt (``catalogue/prompts/<name>.j2``)."""
    if name not in CATALOGUE_PROMPTS:
        return name
    return str(resources.files("clineval.catalogue") / "prompts" / f"{name}.j2")


def _dataset(entry: CatalogueEntry, data_dir: Path) -> dict[str, Any]:
    if entry.unavailable is not None:
        raise UserInputError(f"task {entry.name}: {entry.unavailable}")
    root = REPO_ROOT if entry.root == "repo" else data_dir
    paths = {key: (root / rel).resolve() for key, rel in entry.paths.items()}
    hf_source = {"format": entry.dataset_format, **(entry.hf or {}), **entry.dataset_options}
    if not paths and entry.hf is not None:  # no local file at all: the public Hugging Face dataset (MMLU)
        return hf_source
    for path in paths.values():
        if not path.is_file():
            if entry.hf is not None:  # the public Hugging Face dataset instead (needs the hf extra; unpinned)
                return hf_source
            where = "the repository" if entry.root == "repo" else f"--data {data_dir} (or ${DATA_ENV})"
            raise UserInputError(f"task {entry.name}: data file {path} not found", hint=f"looked in {where}")
    return {"format": entry.dataset_format, **{k: str(p) for k, p in paths.items()}, **entry.dataset_options}


def task_mapping(
    entry: CatalogueEntry, model: ModelSpec, data_dir: Path, grader: ModelSpec | None = None
) -> dict[str, Any]:
    """One suite task, exactly as it would be written in a suite file."""
    task: dict[str, Any] = {
        "id": entry.name,
        "description": entry.title,
        "dataset": _dataset(entry, data_dir),
        "system": {
            "type": "openai",
            **model.system_options(),
            "prompt": prompt_option(entry.prompt),
            **({"output": entry.output} if entry.output != "text" else {}),
        },
        "scorers": list(entry.scorers),
        "stratify": list(entry.stratify),
    }
    if entry.needs_grader:
        if grader is None:
            raise UserInputError(
                f"task {entry.name} is graded by a model: give --grader PROVIDER/MODEL",
                hint="a model other than the one under test, e.g. --grader openai/gpt-4.1",
            )
        task["judge"] = grader.system_options()
    return task


def suite_mapping(
    entries: Sequence[CatalogueEntry], model: ModelSpec, data_dir: Path, grader: ModelSpec | None = None
) -> dict[str, Any]:
    tasks = [task_mapping(e, model, data_dir, grader) for e in entries]
    name = f"{'+'.join(e.name for e in entries)}-{model.provider}-{model.model}".replace("/", "_")
    return {"name": name, "description": "built by `clineval eval` from the task catalogue", "tasks": tasks}


def suite_yaml(suite: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(suite), sort_keys=False, allow_unicode=True, width=120)


def write_suite(suite: Mapping[str, Any], folder: Path) -> Path:
    """Write the suite under ``folder`` (named by its content hash, so the same suite is one file) and return
    its path: the run records it as its suite file, and ``clineval run PATH --resume ID`` completes it."""
    text = suite_yaml(suite)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"eval-{sha256_text(canonical_json(dict(suite)))[:12]}.yaml"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path
