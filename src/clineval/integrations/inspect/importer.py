"""``clineval import inspect LOG...``: inspect eval logs -> one stored clineval run (one task per log).

Design: each log is written as the two files clineval already knows how to replay, under a folder named by
the logs' hashes (``.clineval/imports/inspect/<hash>/``): a generic ``jsonl`` dataset (question, lettered
choices, target; inspect's own per-sample scores as metadata) and a ``predictions`` file (the completion,
token usage, latency, inspect's sample error), with a suite YAML naming them and the chosen scorers. The suite
then runs through :func:`clineval.runs.run.run_suite` like any other, so the stored run has the same
provenance (content hashes of both files), aggregation, ``eval_results`` rows, reports, ``compare`` and
``gate`` as a run of clineval's own; no code path is special to imports. What only the log knows (its path and
sha256, model, generate config, token usage per model, inspect's metrics) goes to ``provenance["inspect"]``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clineval.core import RunResult
from clineval.core.errors import UserInputError
from clineval.integrations.inspect.convert import (
    case_row,
    file_sha256,
    log_summary,
    prediction_row,
    read_log,
    task_id_for,
)

DEFAULT_WORK_DIR = Path(".clineval/imports/inspect")


@dataclass
class ImportRequest:
    logs: Sequence[Path]
    store_url: str = "sqlite:///.clineval/clineval.db"
    suite_name: str | None = None
    scorers: Sequence[str] = ("mcq",)
    work_dir: Path = DEFAULT_WORK_DIR
    stratify: Sequence[str] = field(default_factory=tuple)


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")


def _task_entry(task_id: str, scorers: Sequence[str], stratify: Sequence[str]) -> dict[str, Any]:
    fields = {"id": "id", "question": "question", "answer": "answer", "options": "options"}
    return {
        "id": task_id,
        "dataset": {
            "format": "jsonl",
            "path": f"{task_id}.cases.jsonl",
            "fields": {**fields, "vignette": None, "ground_truth": None},
        },
        "system": {"type": "predictions", "path": f"{task_id}.predictions.jsonl"},
        "scorers": list(scorers),
        "stratify": list(stratify),
    }


def write_suite(request: ImportRequest) -> tuple[Path, list[dict[str, Any]]]:
    """Read every log, write its dataset and predictions and the suite; return the suite path and the
    provenance summary of each log."""
    if not request.logs:
        raise UserInputError("no inspect log given", hint="clineval import inspect LOG [LOG...]")
    scorers = [s.strip() for s in request.scorers if s.strip()]
    if not scorers:
        raise UserInputError("--scorers names no scorer", hint="e.g. --scorers mcq")
    loaded = [(path, read_log(path), file_sha256(path)) for path in request.logs]
    key = hashlib.sha256(json.dumps([[d for _, _, d in loaded], scorers, list(request.stratify)]).encode())
    folder = request.work_dir / key.hexdigest()[:16]
    folder.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    tasks, summaries = [], []
    for path, log, digest in loaded:
        task_id = task_id_for(log.eval.task, taken)
        samples = log.samples or []
        epochs = max(s.epoch for s in samples)
        _write_jsonl(folder / f"{task_id}.cases.jsonl", [case_row(s, epochs) for s in samples])
        _write_jsonl(folder / f"{task_id}.predictions.jsonl", [prediction_row(s, epochs) for s in samples])
        tasks.append(_task_entry(task_id, scorers, request.stratify))
        summaries.append(log_summary(log, path, digest, task_id))
    name = request.suite_name or f"inspect-{'-'.join(t['id'] for t in tasks)}"[:120]
    suite_path = folder / "suite.yaml"
    suite_path.write_text(yaml.safe_dump({"name": name, "tasks": tasks}, sort_keys=False), encoding="utf-8")
    return suite_path, summaries


def import_logs(request: ImportRequest) -> RunResult:
    """Store the logs as one clineval run, scored by ``request.scorers``; return the stored run."""
    from clineval.runs import run as api
    from clineval.store import ResultStore

    suite_path, summaries = write_suite(request)
    run = api.run_suite(api.RunRequest(suite_path=suite_path, store_url=request.store_url, cache_path=None))
    with ResultStore(request.store_url) as store:
        store.update_provenance(run.run_id, {"imported_from": "inspect", "inspect": {"logs": summaries}})
        return store.load_run(run.run_id)
