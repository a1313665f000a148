"""Catalogue entries + a model -> the suite (the same mapping a suite YAML file holds), its YAML, its file.

Data: a task's files are read from the data folder (``--data DIR``, else ``$CLINEVAL_DATA``, else
``../shared/data`` next to the repository); a folder or file that is not there is an error naming it, never
a silent switch to the Hugging Face Hub (issue 23: 25 s of retries, then an error that never named the
path). The Hub is used only when asked for: ``--data hf`` (tasks with a public Hub dataset), or a task the
catalogue defines by its Hub dataset alone (``mmlu_*``: no local file).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from clineval.catalogue.entries import CATALOGUE_PROMPTS, CatalogueEntry
from clineval.catalogue.models import ModelSpec
from clineval.core.errors import UserInputError
from clineval.core.specs import canonical_json, sha256_text

DATA_ENV = "CLINEVAL_DATA"
HUB = "hf"  # --data hf: every task with a public Hugging Face dataset loads it from the Hub
REPO_ROOT = Path(__file__).resolve().parents[3]  # src/clineval/catalogue/build.py -> the repository


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$CLINEVAL_DATA``, else ``../shared/data`` next to the repository."""
    env = os.environ if environ is None else environ
    return Path(env[DATA_ENV]) if env.get(DATA_ENV) else REPO_ROOT.parent / "shared" / "data"


@dataclass(frozen=True)
class DataSource:
    """Where the tasks' files come from: ``folder``, or the Hugging Face Hub (``folder`` None); ``named``
    says how the user chose it, for the errors (``--data X``, ``$CLINEVAL_DATA=X``, the default)."""

    folder: Path | None
    named: str


def data_source(
    data: str | Path | None, environ: Mapping[str, str] | None = None, entries: Sequence[CatalogueEntry] = ()
) -> DataSource:
    """``--data`` (a folder, or ``hf``), else ``$CLINEVAL_DATA``, else the default folder. A folder the
    user named must exist (the error's hint names what ``entries`` read from it); the default one is
    checked only when a task needs a file from it (``mmlu_*`` needs none)."""
    env = os.environ if environ is None else environ
    if data is not None and str(data).strip().lower() == HUB:
        return DataSource(None, f"--data {HUB}")
    if data is None and not env.get(DATA_ENV):
        folder = default_data_dir(env)
        return DataSource(folder, f"the default data folder {folder}")
    folder = Path(data if data is not None else env[DATA_ENV])
    named = f"--data {data}" if data is not None else f"${DATA_ENV}={env[DATA_ENV]}"
    if not folder.is_dir():
        local = [e for e in entries if e.paths and e.root != "repo"]
        hint = _data_hint(local[0], "give the folder that holds") if local else "give a folder that exists"
        raise UserInputError(f"{named}: folder not found", hint=hint)
    return DataSource(folder, named)


def prompt_option(name: str) -> str:
    """A packaged prompt's name, or the path of a catalogue prompt (``catalogue/prompts/<name>.j2``)."""
    if name not in CATALOGUE_PROMPTS:
        return name
    return str(resources.files("clineval.catalogue") / "prompts" / f"{name}.j2")


def _dataset(entry: CatalogueEntry, source: DataSource) -> dict[str, Any]:
    if entry.unavailable is not None:
        raise UserInputError(f"task {entry.name}: {entry.unavailable}")
    hf_source = {"format": entry.dataset_format, **(entry.hf or {}), **entry.dataset_options}
    if not entry.paths and entry.hf is not None:  # the catalogue names no local file: its Hub dataset (MMLU)
        return hf_source
    if entry.root == "repo":  # files the repository ships
        root, where = REPO_ROOT, "the repository"
    elif source.folder is None:  # --data hf
        if entry.hf is None:
            raise UserInputError(
                f"task {entry.name} has no Hugging Face dataset: --data {HUB} cannot load it",
                hint=f"give --data DIR, the folder that holds {next(iter(entry.paths.values()))}",
            )
        return hf_source  # needs the hf extra; an unpinned revision (the run records a warning)
    else:
        root, where = source.folder, source.named
        if not root.is_dir():
            raise UserInputError(
                f"{source.named}: folder not found",
                hint=_data_hint(entry, "give the folder that holds"),
            )
    for rel in entry.paths.values():
        path = (root / rel).resolve()
        if not path.is_file():
            raise UserInputError(
                f"task {entry.name}: data file {path} not found (looked in {where})",
                hint=_data_hint(entry, "check the folder, or give the one that holds"),
            )
    paths = {key: str((root / rel).resolve()) for key, rel in entry.paths.items()}
    return {"format": entry.dataset_format, **paths, **entry.dataset_options}


def _data_hint(entry: CatalogueEntry, lead: str) -> str:
    hub = f", or --data {HUB} to load {entry.name} from the Hugging Face Hub" if entry.hf is not None else ""
    return f"{lead} {next(iter(entry.paths.values()))} (--data DIR or ${DATA_ENV}){hub}"


def task_mapping(
    entry: CatalogueEntry, model: ModelSpec, data: DataSource | Path, grader: ModelSpec | None = None
) -> dict[str, Any]:
    """One suite task, exactly as it would be written in a suite file (``data``: a folder, or where the
    data comes from, :func:`data_source`)."""
    source = data if isinstance(data, DataSource) else DataSource(Path(data), f"--data {data}")
    task: dict[str, Any] = {
        "id": entry.name,
        "description": entry.title,
        "dataset": _dataset(entry, source),
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
    entries: Sequence[CatalogueEntry],
    model: ModelSpec,
    data: DataSource | Path,
    grader: ModelSpec | None = None,
) -> dict[str, Any]:
    tasks = [task_mapping(e, model, data, grader) for e in entries]
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
