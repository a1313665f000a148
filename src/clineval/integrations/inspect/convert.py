"""An inspect eval log as clineval records: one dataset row and one prediction per sample, plus what the
run's provenance keeps about the log (model, generate config, token usage, inspect's own scores).

Pure functions of an ``EvalLog``; reading the file and running the suite is ``importer``'s job.
"""

from __future__ import annotations

import hashlib
import re
import string
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clineval.core.errors import UserInputError

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ModelUsage

MISSING_EXTRA = "needs the inspect extra: pip install 'clineval[inspect]'"


def require_inspect() -> None:
    """Raise a one-line UserInputError when inspect_ai is not installed."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise UserInputError(MISSING_EXTRA) from None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_log(path: Path) -> EvalLog:
    """The whole log (samples included); a missing, unreadable or sample-less log is one UserInputError."""
    require_inspect()
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise UserInputError("inspect log not found", path=path, hint="give an inspect .eval or .json log")
    try:
        log = read_eval_log(str(path))
    except Exception as err:  # inspect raises zip, JSON and pydantic errors alike for a corrupt log
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserInputError(
            f"not a readable inspect eval log ({message[:200]})",
            path=path,
            hint="give an inspect .eval or .json log (inspect_ai.log.read_eval_log must read it)",
        ) from None
    if not log.samples:
        raise UserInputError("the inspect log holds no samples", path=path)
    return log


def task_id_for(name: str, taken: set[str]) -> str:
    """A clineval task id from inspect's task name (``inspect_evals/medqa`` -> ``inspect_evals_medqa``)."""
    base = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "task"
    candidate, number = base, 2
    while candidate in taken:
        candidate, number = f"{base}-{number}", number + 1
    taken.add(candidate)
    return candidate


def _input_text(sample: EvalSample) -> str:
    if isinstance(sample.input, str):
        return sample.input
    users = [m.text for m in sample.input if m.role == "user"]
    return users[-1] if users else "\n".join(m.text for m in sample.input)


def _target(sample: EvalSample) -> str:
    target = sample.target
    return target if isinstance(target, str) else ",".join(target)


def _score_value(value: Any) -> str | float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float | str):
        return value
    return None  # list / dict values are not kept as case metadata


def case_id(sample: EvalSample, epochs: int) -> str:
    return str(sample.id) if epochs <= 1 else f"{sample.id}#epoch{sample.epoch}"


def case_row(sample: EvalSample, epochs: int) -> dict[str, Any]:
    """A row of the generic ``jsonl`` dataset: question, lettered options, gold; inspect's scores and the
    epoch as metadata (so a report can be stratified by them)."""
    row: dict[str, Any] = {
        "id": case_id(sample, epochs),
        "question": _input_text(sample),
        "options": {string.ascii_uppercase[i]: text for i, text in enumerate(sample.choices or [])},
        "answer": _target(sample),
        "epoch": sample.epoch,
        "inspect_sample_id": str(sample.id),
    }
    for name, score in (sample.scores or {}).items():
        row[f"inspect_{name}"] = _score_value(score.value)
    return row


def _usage(usages: dict[str, ModelUsage]) -> dict[str, Any] | None:
    if not usages:
        return None
    costs = [u.total_cost for u in usages.values() if u.total_cost is not None]
    return {
        "prompt_tokens": sum(u.input_tokens for u in usages.values()),
        "completion_tokens": sum(u.output_tokens for u in usages.values()),
        "total_tokens": sum(u.total_tokens for u in usages.values()),
        "cost_usd": sum(costs) if costs else None,
    }


def prediction_row(sample: EvalSample, epochs: int) -> dict[str, Any]:
    """A line of the ``predictions`` file: the completion, its token usage, latency, and inspect's error."""
    row: dict[str, Any] = {"id": case_id(sample, epochs), "output": sample.output.completion}
    usage = _usage(sample.model_usage)
    if usage is not None:
        row["usage"] = usage
    if sample.total_time is not None:
        row["latency_s"] = sample.total_time
    if sample.error is not None:
        row["error"] = {"kind": "inspect_error", "message": sample.error.message}
    return row


def log_summary(log: EvalLog, path: Path, digest: str, task_id: str) -> dict[str, Any]:
    """What the run's provenance keeps about one log."""
    spec = log.eval
    config = {
        **log.plan.config.model_dump(exclude_none=True),
        **spec.model_generate_config.model_dump(exclude_none=True),
    }
    scores: dict[str, dict[str, float]] = {}
    for eval_score in log.results.scores if log.results else []:
        scores[eval_score.name] = {name: m.value for name, m in eval_score.metrics.items()}
    return {
        "task_id": task_id,
        "path": str(path.resolve()),
        "sha256": digest,
        "task": spec.task,
        "eval_id": spec.eval_id,
        "inspect_run_id": spec.run_id,
        "created": spec.created,
        "status": log.status,
        "model": spec.model,
        "model_base_url": spec.model_base_url,
        "generate_config": config,
        "solver": spec.solver,
        "epochs": spec.config.epochs or 1,
        "samples": len(log.samples or []),
        "model_usage": {name: u.model_dump(exclude_none=True) for name, u in log.stats.model_usage.items()},
        "inspect_scores": scores,
        "packages": dict(spec.packages),
    }
