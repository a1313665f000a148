"""The Airflow integration in integrations/airflow/.

The task logic (clineval_airflow_tasks.py) is tested everywhere; it imports neither Airflow nor, at import
time, clineval. The DAG file itself is loaded with Airflow's own DagBag only where Airflow is installed
(integrations/airflow/check_dags.sh builds such an environment); elsewhere those tests are skipped.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import logging
import os
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from clineval.core.errors import UserInputError

AIRFLOW_DIR = Path(__file__).resolve().parents[1] / "integrations" / "airflow"
DAG_FILE = AIRFLOW_DIR / "clineval_dags.py"


def _load(name: str, path: Path) -> types.ModuleType:
    if str(AIRFLOW_DIR) not in sys.path:  # the DAG file imports its sibling by name, as Airflow does
        sys.path.append(str(AIRFLOW_DIR))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tasks = _load("clineval_airflow_tasks", AIRFLOW_DIR / "clineval_airflow_tasks.py")


@dataclass
class FakeResult:
    passed: bool
    run_ids: list[str] = field(default_factory=lambda: ["run-1", "run-2"])

    def summary(self) -> str:
        return f"tier1 ok; regression check {'ok' if self.passed else 'FAILED: accuracy -4.1 pts'}"


class FakeRunner:
    def __init__(self, result: FakeResult | None = None, error: Exception | None = None) -> None:
        self.result = result
        self.error = error
        self.calls: list[tuple[str, str]] = []

    def __call__(self, kind: str, config: str) -> FakeResult:
        self.calls.append((kind, config))
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


# --- task logic, no Airflow needed -------------------------------------------------------------------


def test_config_path_precedence() -> None:
    env = {"CLINEVAL_PIPELINE_CONFIG": "/env/pipeline.yaml"}
    assert tasks.resolve_config_path("/var/pipeline.yaml", env) == "/var/pipeline.yaml"
    assert tasks.resolve_config_path(None, env) == "/env/pipeline.yaml"
    assert tasks.resolve_config_path("  ", env) == "/env/pipeline.yaml"
    assert tasks.resolve_config_path(None, {}) == "/opt/clineval/pipeline.yaml"
    assert tasks.resolve_config_path("", {"CLINEVAL_PIPELINE_CONFIG": ""}) == tasks.DEFAULT_CONFIG


@pytest.mark.parametrize("kind", ["nightly", "weekly"])
def test_passing_run_returns_jsonable_outcome(kind: str) -> None:
    runner = FakeRunner(FakeResult(passed=True))
    outcome = tasks.run_clineval_pipeline(kind, "/cfg.yaml", runner=runner)
    assert runner.calls == [(kind, "/cfg.yaml")]
    assert outcome == {
        "kind": kind,
        "config": "/cfg.yaml",
        "passed": True,
        "run_ids": ["run-1", "run-2"],
        "summary": "tier1 ok; regression check ok",
    }
    json.dumps(outcome)  # it becomes the task's XCom


def test_failed_checks_are_not_retryable() -> None:
    runner = FakeRunner(FakeResult(passed=False))
    with pytest.raises(tasks.PipelineChecksFailed) as caught:
        tasks.run_clineval_pipeline("nightly", "/cfg.yaml", runner=runner)
    assert isinstance(caught.value, tasks.PipelineNotRetryable)
    assert "run-1, run-2" in str(caught.value)
    assert "accuracy -4.1 pts" in str(caught.value)


def test_not_passed_without_failing_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    runner = FakeRunner(FakeResult(passed=False, run_ids=[]))
    with caplog.at_level(logging.WARNING):
        outcome = tasks.run_clineval_pipeline("weekly", "/cfg.yaml", runner=runner, fail_on_not_passed=False)
    assert outcome["passed"] is False
    assert "weekly pipeline did not pass (runs: none)" in caplog.text


def test_bad_config_is_not_retryable() -> None:
    error = UserInputError("unknown tier 'tier9'", path="/cfg.yaml", line=3, hint="use tier1..tier4")
    with pytest.raises(tasks.PipelineConfigError) as caught:
        tasks.run_clineval_pipeline("nightly", "/cfg.yaml", runner=FakeRunner(error=error))
    assert isinstance(caught.value, tasks.PipelineNotRetryable)
    assert caught.value.__cause__ is error
    assert "/cfg.yaml:3: unknown tier 'tier9' — use tier1..tier4" in str(caught.value)


def test_infrastructure_errors_propagate_for_retry() -> None:
    error = ConnectionError("store unreachable")
    with pytest.raises(ConnectionError) as caught:
        tasks.run_clineval_pipeline("nightly", "/cfg.yaml", runner=FakeRunner(error=error))
    assert caught.value is error
    assert not isinstance(caught.value, tasks.PipelineNotRetryable)


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown pipeline kind 'hourly'"):
        tasks.run_clineval_pipeline("hourly", "/cfg.yaml", runner=FakeRunner(FakeResult(passed=True)))


def test_default_runner_is_clineval_pipelines(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("clineval.pipelines")
    runner = FakeRunner(FakeResult(passed=True))
    fake.run_pipeline = runner  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "clineval.pipelines", fake)
    outcome = tasks.run_clineval_pipeline("weekly", "/cfg.yaml")
    assert runner.calls == [("weekly", "/cfg.yaml")]
    assert outcome["passed"] is True


def test_missing_clineval_pipelines_is_not_retryable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "clineval.pipelines", None)  # makes the import raise
    with pytest.raises(tasks.PipelineConfigError, match="pip install"):
        tasks.run_clineval_pipeline("nightly", "/cfg.yaml")


# --- the DAG file, loaded by Airflow ------------------------------------------------------------------


@pytest.fixture(scope="module")
def airflow_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Airflow importable, with its home in a temp folder (no ~/airflow, no metadata DB)."""
    if importlib.util.find_spec("airflow") is None:
        if os.environ.get("CLINEVAL_REQUIRE_AIRFLOW"):
            pytest.fail("CLINEVAL_REQUIRE_AIRFLOW is set but Airflow is not importable")
        pytest.skip("Airflow is not installed (integrations/airflow/check_dags.sh runs these tests)")
    with pytest.MonkeyPatch.context() as mp:
        if "airflow" not in sys.modules and "AIRFLOW_HOME" not in os.environ:
            mp.setenv("AIRFLOW_HOME", str(tmp_path_factory.mktemp("airflow_home")))
        mp.setenv("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        pytest.importorskip("airflow")
        yield


@pytest.fixture(scope="module")
def dagbag(airflow_env: None) -> Any:
    try:  # Airflow 3.1+
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 2.x, 3.0
        from airflow.models.dagbag import DagBag
    kwargs: dict[str, Any] = {}
    params = inspect.signature(DagBag).parameters
    if "include_examples" in params:
        kwargs["include_examples"] = False
    return DagBag(dag_folder=str(AIRFLOW_DIR), **kwargs)


def test_dag_folder_loads_without_errors(dagbag: Any) -> None:
    assert dagbag.import_errors == {}
    assert set(dagbag.dag_ids) == {"clineval_nightly", "clineval_weekly", "clineval_sharded_suite"}


def test_sharded_dag_shape(dagbag: Any) -> None:
    dag = dagbag.dags["clineval_sharded_suite"]
    assert dag.catchup is False
    assert set(dag.task_ids) == {"resolve_run", "run_shard", "finalize"}
    assert dag.task_dict["finalize"].upstream_task_ids == {"resolve_run", "run_shard"}
    assert dag.task_dict["run_shard"].upstream_task_ids == {"resolve_run"}
    assert type(dag.task_dict["run_shard"]).__name__.endswith("MappedOperator")  # dynamic task mapping


@pytest.mark.parametrize(
    ("dag_id", "cron", "task_id"),
    [
        ("clineval_nightly", "0 2 * * *", "run_nightly_pipeline"),
        ("clineval_weekly", "0 4 * * 0", "run_weekly_pipeline"),
    ],
)
def test_dag_shape(dagbag: Any, dag_id: str, cron: str, task_id: str) -> None:
    dag = dagbag.dags[dag_id]  # not get_dag(): in Airflow 3 that consults the metadata DB
    # Airflow 3 keeps the argument as dag.schedule, Airflow 2 as dag.schedule_interval
    assert (getattr(dag, "schedule", None) or dag.schedule_interval) == cron
    assert dag.catchup is False
    assert dag.max_active_runs == 1
    assert dag.task_ids == [task_id]
    assert "clineval" in dag.tags
    (only_task,) = dag.tasks
    assert only_task.retries == 2  # for infrastructure errors; regressions skip them (next test)


def test_not_retryable_failures_become_airflow_fail_exception(
    airflow_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    dags = _load("clineval_dags_under_test", DAG_FILE)
    try:
        from airflow.sdk.exceptions import AirflowFailException
    except ImportError:
        from airflow.exceptions import AirflowFailException

    class FakeVariable:
        @staticmethod
        def get(key: str, default: Any) -> Any:
            assert key == "clineval_pipeline_config"
            return "/from/variable.yaml"

    monkeypatch.setattr(dags, "Variable", FakeVariable)
    monkeypatch.setattr(dags, "run_clineval_pipeline", _raise(tasks.PipelineChecksFailed("regression")))
    with pytest.raises(AirflowFailException, match="regression"):
        dags._run("nightly", fail_on_not_passed=True)

    monkeypatch.setattr(dags, "run_clineval_pipeline", _raise(ConnectionError("db down")))
    with pytest.raises(ConnectionError):  # left to Airflow's retries
        dags._run("nightly", fail_on_not_passed=True)

    seen: list[tuple[str, str, bool]] = []

    def record(kind: str, config: str, *, fail_on_not_passed: bool) -> dict[str, Any]:
        seen.append((kind, config, fail_on_not_passed))
        return {"passed": True}

    monkeypatch.setattr(dags, "run_clineval_pipeline", record)
    assert dags._run("weekly", fail_on_not_passed=False) == {"passed": True}
    assert seen == [("weekly", "/from/variable.yaml", False)]


def _raise(error: Exception) -> Any:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise error

    return fail
