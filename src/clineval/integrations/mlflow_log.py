"""``--mlflow [URI]``: log a finished run to MLflow (the optional extra ``clineval[mlflow]``).

One MLflow run per call (never an overwrite), in the experiment named by ``experiment`` or else the suite:

* params: ``suite.name``, ``suite.hash``, ``clineval.run_id``, ``tenant``, ``run_type``, ``limit``, ``seed``
  and per task ``<task>/system.type``, ``/system.model``, ``/system.spec_hash``, ``/prompt_hash`` (the
  system's content hash: the prompt template of an ``openai`` system), ``/dataset.format``,
  ``/dataset.content_hash``, ``/task_hash``, ``/scorers``, ``/judge.model``. Nothing else of a system's
  args is logged (an ``openai`` system stores only the *name* of its key's environment variable);
* tags: ``clineval.version``, ``clineval.status``, ``clineval.degraded``, ``clineval.run_id``,
  ``clineval.skipped_metrics`` (headline metrics that are NaN or missing, not logged);
* metrics: every headline metric (``clineval.report.formatting.headline_metrics``) as ``<task>/<metric>``
  with ``<task>/<metric>_ci_low`` / ``_ci_high``, the counts ``<task>/n``, ``/n_failed``, ``/n_unscored``,
  and per stratum ``<task>/<key>=<value>/<metric>`` (``=`` and any character MLflow refuses become ``_``);
* artifacts: ``report.json``, ``report.md``, ``report.html``, ``results.jsonl`` of ``report_dir`` under
  ``reports/``.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clineval.analysis.degradation import is_degraded
from clineval.core import MetricValue, RunResult
from clineval.core.errors import UserInputError
from clineval.report.formatting import COUNT_KEYS, headline_metrics, interval

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Metric

NEEDS_EXTRA = "needs the mlflow extra: pip install 'clineval[mlflow]'"
REPORT_FILES = ("report.json", "report.md", "report.html", "results.jsonl")
MAX_PARAM_VALUE = 6000  # mlflow.utils.validation.MAX_PARAM_VAL_LENGTH
MAX_TAG_VALUE = 8000
MAX_KEY = 250
_BAD = re.compile(r"[^\w./\- ]")  # what MLflow accepts in a param or metric name on every platform


def metric_name(*parts: str) -> str:
    """``parts`` joined by ``/``, each with MLflow's refused characters (``=``, ``:``, ``@``...) as ``_``
    and never a ``.`` / ``..`` / empty segment (MLflow treats names as paths)."""
    clean = [_BAD.sub("_", p).strip() or "_" for p in parts]
    return "/".join("_" if p in {".", ".."} else p for p in clean)[:MAX_KEY]


def _text(value: object, limit: int = MAX_PARAM_VALUE) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def run_params(run: RunResult) -> dict[str, str]:
    """The params logged for ``run``: where it came from, never a secret (no system args but the model)."""
    info, suite = run.info, run.info.suite
    params: dict[str, object] = {
        "suite.name": suite.name,
        "suite.hash": info.provenance.get("suite_hash", suite.spec_hash),
        "clineval.run_id": info.run_id,
        "tenant": info.tenant_id,
        "run_type": info.run_type,
        "limit": suite.limit,
        "seed": suite.seed,
    }
    for task in suite.tasks:
        system = task.system
        params |= {
            metric_name(task.id, "system.type"): system.type,
            metric_name(task.id, "system.model"): system.args.get("model"),
            metric_name(task.id, "system.spec_hash"): system.spec_hash,
            metric_name(task.id, "prompt_hash"): system.content_hash,
            metric_name(task.id, "dataset.format"): task.dataset.type,
            metric_name(task.id, "dataset.content_hash"): task.dataset.content_hash,
            metric_name(task.id, "task_hash"): task.spec_hash,
            metric_name(task.id, "scorers"): ",".join(s.type for s in task.scorers),
        }
        if task.judge is not None:
            params[metric_name(task.id, "judge.model")] = task.judge.args.get("model")
    return {k: _text(v) for k, v in params.items() if v is not None}


def _number(value: MetricValue) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _scores_metrics(
    prefix: Sequence[str], scores: Mapping[str, MetricValue]
) -> Iterator[tuple[str, float | None]]:
    """(name, value) of every headline metric, its interval and the counts; ``None``: not a finite number."""
    for metric in headline_metrics(scores):
        yield metric_name(*prefix, metric), _number(scores[metric])
        ci = interval(scores, metric)
        if ci is not None:
            yield metric_name(*prefix, f"{metric}_ci_low"), ci[0]
            yield metric_name(*prefix, f"{metric}_ci_high"), ci[1]
    for count in COUNT_KEYS:
        if count in scores:
            yield metric_name(*prefix, count), _number(scores[count])


def run_metrics(run: RunResult) -> tuple[dict[str, float], list[str]]:
    """The metrics logged for ``run`` and the names skipped (NaN or missing values)."""
    values: dict[str, float] = {}
    skipped: list[str] = []
    for task, agg in run.aggregates.items():
        found = list(_scores_metrics([task], agg.scores))
        for key, strata in agg.strata.items():
            for value, scores in strata.items():
                found += _scores_metrics([task, f"{key}={value}"], scores)
        for name, number in found:
            if number is None:
                skipped.append(name)
            elif name not in values:  # two names that sanitise alike: the first one stays
                values[name] = number
    return values, skipped


def run_tags(run: RunResult, skipped: Sequence[str]) -> dict[str, str]:
    versions = run.info.provenance.get("versions")
    version = versions.get("clineval") if isinstance(versions, Mapping) else None
    tags = {
        "mlflow.runName": f"{run.info.suite.name} {run.run_id[:8]}",
        "clineval.run_id": run.run_id,
        "clineval.version": version or metadata.version("clineval"),
        "clineval.status": run.info.status,
        "clineval.degraded": str(is_degraded(run.info.provenance)).lower(),
    }
    if skipped:
        tags["clineval.skipped_metrics"] = _text(", ".join(skipped), MAX_TAG_VALUE)
    return tags


def _client(tracking_uri: str | None) -> MlflowClient:
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise UserInputError(NEEDS_EXTRA) from None
    logging.getLogger("mlflow").setLevel(logging.WARNING)  # its INFO lines (table creation) are not ours
    return MlflowClient(tracking_uri=tracking_uri)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def log_run(
    run: RunResult, *, tracking_uri: str | None, report_dir: Path | None, experiment: str | None = None
) -> str:
    """Log ``run`` as a new MLflow run (params, tags, metrics, ``report_dir``'s reports); its MLflow run id.

    ``tracking_uri`` ``None``: MLflow's default (``MLFLOW_TRACKING_URI``). A missing extra, a missing
    ``report_dir`` or a tracking server that refuses the run is one ``UserInputError`` line.
    """
    if report_dir is not None and not Path(report_dir).is_dir():
        raise UserInputError("no reports folder to log to MLflow", path=report_dir)
    client = _client(tracking_uri)
    from mlflow.entities import Metric, Param, RunStatus
    from mlflow.exceptions import MlflowException

    metrics, skipped = run_metrics(run)
    name = experiment or run.info.suite.name
    try:
        found = client.get_experiment_by_name(name)
        experiment_id = found.experiment_id if found is not None else client.create_experiment(name)
        mlflow_run = client.create_run(experiment_id, tags=run_tags(run, skipped))
    except MlflowException as err:
        raise UserInputError(f"MLflow refused the run: {err.message}", path=tracking_uri) from None
    run_id: str = mlflow_run.info.run_id
    try:
        for params in _chunks([Param(k, v) for k, v in run_params(run).items()], 100):
            client.log_batch(run_id, params=params)
        stamp = int(time.time() * 1000)
        entries: list[Metric] = [Metric(k, v, stamp, 0) for k, v in metrics.items()]
        for batch in _chunks(entries, 1000):
            client.log_batch(run_id, metrics=batch)
        if report_dir is not None:
            for file in REPORT_FILES:
                if (Path(report_dir) / file).is_file():
                    client.log_artifact(run_id, str(Path(report_dir) / file), artifact_path="reports")
    except (MlflowException, OSError) as err:
        client.set_terminated(run_id, RunStatus.to_string(RunStatus.FAILED))
        message = err.message if isinstance(err, MlflowException) else str(err)
        raise UserInputError(f"MLflow run {run_id} failed: {message}", path=tracking_uri) from None
    client.set_terminated(run_id)
    return run_id
