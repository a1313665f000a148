"""``log_run`` against a local file-store tracking URI: params, headline metrics with their intervals,
per-stratum metrics and the reports, read back with ``MlflowClient``."""

from __future__ import annotations

import builtins
import json
import math
from pathlib import Path
from typing import Any

import pytest

from clineval.core import RunResult, TaskAggregate
from clineval.core.errors import UserInputError
from clineval.integrations import mlflow_log
from clineval.integrations.mlflow_log import NEEDS_EXTRA, log_run, metric_name, run_metrics
from clineval.report.files import write_reports
from clineval.report.formatting import headline_metrics, interval
from clineval.runs import run as api
from clineval.testing import Script
from tests.cli_helpers import MEDQA_ROW
from tests.conftest import StartServer
from tests.golden_runs import golden_suite

mlflow = pytest.importorskip("mlflow")
KEY = "sk-live-mlflow-7Qm2ZrT9vWb4KpX8nYc3"


@pytest.fixture
def tracking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this flag
    return f"file://{tmp_path}/mlruns"


def _golden_run(tmp_path: Path) -> tuple[RunResult, Path]:
    suite = golden_suite(tmp_path, "cand", {"pneumonia"})
    request = api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/runs.db", cache_path=None)
    run = api.run_suite(request)
    out = tmp_path / "out"
    write_reports(run, out)
    return run, out


def test_log_run_params_metrics_strata_and_reports(tmp_path: Path, tracking: str) -> None:
    run, out = _golden_run(tmp_path)
    mlflow_id = log_run(run, tracking_uri=tracking, report_dir=out)
    client = mlflow.MlflowClient(tracking_uri=tracking)
    logged = client.get_run(mlflow_id)
    params, metrics, tags = logged.data.params, logged.data.metrics, logged.data.tags
    prov = run.info.provenance
    prov_task = prov["tasks"]["golden"]
    assert params["suite.hash"] == prov["suite_hash"] == run.info.suite.spec_hash
    assert params["suite.name"] == run.info.suite.name and params["clineval.run_id"] == run.run_id
    assert params["tenant"] == run.info.tenant_id and params["run_type"] == run.info.run_type
    assert params["golden/system.type"] == prov_task["system"]["type"] == "predictions"
    assert params["golden/prompt_hash"] == prov_task["system"]["content_hash"]
    assert params["golden/system.spec_hash"] == prov_task["system"]["spec_hash"]
    assert params["golden/dataset.content_hash"] == prov_task["dataset"]["content_hash"]
    assert params["golden/task_hash"] == prov_task["task_hash"]
    assert params["golden/scorers"] == ",".join(s["type"] for s in prov_task["scorers"])
    assert tags["clineval.status"] == run.info.status and tags["clineval.degraded"] == "false"
    assert tags["clineval.version"] == prov["versions"]["clineval"]

    scores = run.aggregates["golden"].scores
    heads = headline_metrics(scores)
    assert heads
    for metric in heads:
        assert metrics[f"golden/{metric}"] == pytest.approx(scores[metric])
        ci = interval(scores, metric)
        assert ci is not None
        assert (metrics[f"golden/{metric}_ci_low"], metrics[f"golden/{metric}_ci_high"]) == pytest.approx(ci)
    assert metrics["golden/n"] == scores["n"]
    strata = run.aggregates["golden"].strata["condition"]
    assert "pneumonia" in strata and len(strata) > 1
    for value, stratum in strata.items():
        for metric in headline_metrics(stratum):
            name = metric_name("golden", f"condition={value}", metric)
            assert name == f"golden/condition_{metric_name(value)}/{metric}"
            number = stratum[metric]
            if isinstance(number, float) and math.isfinite(number):
                assert metrics[name] == pytest.approx(number)
    assert metrics["golden/condition_pneumonia/guideline_adherence"] < metrics["golden/guideline_adherence"]

    listed = {a.path for a in client.list_artifacts(mlflow_id, "reports")}
    assert listed == {f"reports/{f}" for f in ("report.json", "report.md", "report.html", "results.jsonl")}

    again = log_run(run, tracking_uri=tracking, report_dir=None, experiment="other")
    assert again != mlflow_id
    assert client.get_run(mlflow_id).data.metrics == metrics  # the first one is untouched
    assert client.get_run(again).data.params == params
    assert client.list_artifacts(again) == []
    third = log_run(run, tracking_uri=tracking, report_dir=None)
    experiment = client.get_experiment_by_name(run.info.suite.name)
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id])
    assert {r.info.run_id for r in runs} == {mlflow_id, third}

    first = heads[0]
    nan_scores = {**scores, first: float("nan")}
    nan_run = run.model_copy(update={"aggregates": {"golden": TaskAggregate(scores=nan_scores)}})
    values, skipped = run_metrics(nan_run)
    assert skipped == [f"golden/{first}"] and f"golden/{first}" not in values
    assert f"golden/{first}_ci_low" in values
    nan_id = log_run(nan_run, tracking_uri=tracking, report_dir=None)
    assert client.get_run(nan_id).data.tags["clineval.skipped_metrics"] == f"golden/{first}"


def test_missing_extra_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_mlflow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "mlflow" or name.startswith("mlflow."):
            raise ImportError("No module named 'mlflow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mlflow)
    with pytest.raises(UserInputError) as err:
        mlflow_log._client("file:///nowhere")
    assert str(err.value) == NEEDS_EXTRA == "needs the mlflow extra: pip install 'clineval[mlflow]'"


def test_missing_report_dir_is_refused(tmp_path: Path, tracking: str) -> None:
    run, _ = _golden_run(tmp_path)
    with pytest.raises(UserInputError, match="no reports folder"):
        log_run(run, tracking_uri=tracking, report_dir=tmp_path / "absent")


def test_no_secret_reaches_mlflow(
    tmp_path: Path, tracking: str, start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = start_server(Script(latency_s=0.0))
    monkeypatch.setenv("CLINEVAL_MLFLOW_TEST_KEY", KEY)
    (tmp_path / "q.jsonl").write_text("".join(MEDQA_ROW.format(i=i, gold="A") + "\n" for i in range(4)))
    (tmp_path / "suite.yaml").write_text(
        "name: live\ntasks:\n  - id: live\n    dataset: {format: medqa, path: q.jsonl}\n"
        f"    system: {{type: openai, base_url: '{server.base_url}', model: scripted-model,"
        " api_key_env: CLINEVAL_MLFLOW_TEST_KEY}\n"
        "    scorers: [mcq]\n    stratify: [meta_info]\n"
    )
    request = api.RunRequest(
        suite_path=tmp_path / "suite.yaml", store_url=f"sqlite:///{tmp_path}/runs.db", cache_path=None
    )
    run = api.run_suite(request)
    write_reports(run, tmp_path / "out")
    mlflow_id = log_run(run, tracking_uri=tracking, report_dir=tmp_path / "out")
    client = mlflow.MlflowClient(tracking_uri=tracking)
    data = client.get_run(mlflow_id).data
    assert data.params["live/system.model"] == "scripted-model"
    assert data.params["live/prompt_hash"] == run.info.provenance["tasks"]["live"]["system"]["content_hash"]
    assert "live/accuracy" in data.metrics and "live/meta_info_step1/accuracy" in data.metrics
    texts = [json.dumps(data.params), json.dumps(data.tags)]
    texts += [p.read_text() for p in (tmp_path / "mlruns").rglob("*") if p.is_file()]
    assert not [t for t in texts if KEY in t or KEY[:12] in t]


def test_names_are_sanitised() -> None:
    assert (
        metric_name("t", "condition=chest pain: acute", "accuracy")
        == "t/condition_chest pain_ acute/accuracy"
    )
    assert metric_name("t", "..", "x") == "t/_/x"
