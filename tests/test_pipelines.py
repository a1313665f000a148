"""``clineval pipeline nightly|weekly``: steps run and stored with the pipeline's tenant and run type, the
regression check (baseline gate on the held-out golden set, floors), alerts to a local webhook, exit codes,
config errors with their line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clineval.core.errors import SuiteError
from clineval.pipelines import load_pipeline_config, run_pipeline
from clineval.releases import gate as releases
from clineval.runs import run as api
from clineval.store import ResultStore
from tests.cli_helpers import clineval
from tests.golden_runs import ROOT, ROWS, golden_suite
from tests.test_alerts import _Server, http_server  # noqa: F401  (fixture)

HELDOUT = [r for r in ROWS if r["metadata"]["split"] == "heldout"]


def _suite(folder: Path, name: str, broken: set[str]) -> Path:
    """The held-out golden-set cases, adherent except for conditions in ``broken``."""
    return golden_suite(folder, name, broken, split="heldout")


def _config(folder: Path, suite: Path, webhook: str, *, extra_step: str = "", floor: float = 1.0) -> Path:
    path = folder / "pipeline.yaml"
    path.write_text(
        "name: acme-cds\n"
        "tenant: acme\n"
        f"alerts: {{webhook_url: '{webhook}'}}\n"
        "nightly:\n"
        "  - name: tier3-golden\n"
        f"    suite: {suite.name}\n"
        "    baseline: golden-main\n"
        f"    floors: {{schema_pass_rate: {floor}}}\n"
        f"{extra_step}"
        "weekly:\n"
        f"  - name: tracked\n    suite: {suite.name}\n"
    )
    return path


@pytest.fixture
def setup(tmp_path: Path, http_server: _Server) -> tuple[Path, str, str]:  # noqa: F811
    url = f"sqlite:///{tmp_path / 'store.db'}"
    base = api.run_suite(
        api.RunRequest(suite_path=_suite(tmp_path, "base", set()), store_url=url, cache_path=None)
    )
    releases.promote_baseline(url, base.run_id, "golden-main", tenant="acme")
    return tmp_path, url, f"http://127.0.0.1:{http_server.server_address[1]}/services/T0/B0/SECRET"


def test_a_clean_night_passes_stores_and_sends_nothing(
    setup: tuple[Path, str, str],
    http_server: _Server,  # noqa: F811
) -> None:
    folder, url, hook = setup
    config = _config(folder, _suite(folder, "tonight", set()), hook)
    result = run_pipeline("nightly", config, store_url=url)
    assert result.passed and [s.status for s in result.steps] == ["pass"]
    assert result.alert is None and http_server.requests == []
    (step,) = result.steps
    assert step.gate is not None and step.gate.passed and [f.passed for f in step.floors] == [True]
    with ResultStore(url) as store:
        info = store.get_run(step.run_id or "")
        rows = store.eval_results.query(run_id=info.run_id)
    assert (info.tenant_id, info.run_type) == ("acme", "nightly")
    assert {r.run_type for r in rows} == {"nightly", "config_gate"}
    assert all(r.tenant_id == "acme" for r in rows)


def test_a_regression_is_blocked_and_alerted(
    setup: tuple[Path, str, str],
    http_server: _Server,  # noqa: F811
) -> None:
    folder, url, hook = setup
    config = _config(folder, _suite(folder, "tonight", {"copd"}), hook)
    result = run_pipeline("nightly", config, store_url=url)
    assert not result.passed and result.steps[0].status == "regression"
    assert result.alert is not None and result.alert.ok
    (request,) = http_server.requests
    payload = json.loads(request.body)
    assert "nightly pipeline acme-cds: regression in tier3-golden" in payload["text"]
    assert "guideline_adherence (condition=copd)" in payload["text"]
    assert "SECRET" not in json.dumps(result.to_dict())  # the webhook's token stays out of the result
    cli = clineval("pipeline", "nightly", str(config), "--store", url, cwd=folder)
    assert cli.returncode == 1, cli.stdout + cli.stderr
    assert "tier3-golden: regression" in cli.stdout


def test_floors_fail_and_a_broken_step_is_an_error_not_a_crash(
    setup: tuple[Path, str, str],
    http_server: _Server,  # noqa: F811
) -> None:
    folder, url, hook = setup
    missing = "  - name: no-baseline\n    suite: tonight.yaml\n    baseline: never-promoted\n"
    config = _config(folder, _suite(folder, "tonight", set()), hook, extra_step=missing, floor=1.01)
    result = run_pipeline("nightly", config, store_url=url)
    first, second = result.steps
    assert first.status == "regression" and [f.passed for f in first.floors] == [False]
    assert second.status == "error"
    assert "no baseline 'never-promoted' for tenant 'acme'" in (second.error or "")
    payload = json.loads(http_server.requests[0].body)
    assert "1 step(s) failed to run" in payload["text"]
    json_out = folder / "out" / "result.json"
    args = ("pipeline", "nightly", str(config), "--store", url, "--json-out", str(json_out))
    cli = clineval(*args, cwd=folder)
    assert cli.returncode == 2, cli.stdout + cli.stderr
    assert json.loads(json_out.read_text())["steps"][1]["status"] == "error"


def test_weekly_is_tracked_and_never_gates(setup: tuple[Path, str, str], http_server: _Server) -> None:  # noqa: F811
    folder, url, hook = setup
    config = _config(folder, _suite(folder, "tonight", {"copd"}), hook)
    result = run_pipeline("weekly", config, store_url=url)
    assert result.passed and [s.status for s in result.steps] == ["tracked"]
    assert http_server.requests == []
    with ResultStore(url) as store:
        assert store.get_run(result.run_ids[0]).run_type == "weekly"


def test_config_mistakes_are_one_line_with_the_line_number(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "s", set())
    bad = tmp_path / "weekly_gates.yaml"
    bad.write_text(f"name: x\nweekly:\n  - name: judge\n    suite: {suite.name}\n    baseline: main\n")
    with pytest.raises(SuiteError, match="weekly step 'judge' has a baseline or floors") as err:
        load_pipeline_config(bad)
    assert err.value.line == 3
    typo = tmp_path / "typo.yaml"
    typo.write_text(f"name: x\nnightly:\n  - name: a\n    suite: {suite.name}\n    baseline_name: m\n")
    cli = clineval("pipeline", "nightly", str(typo), cwd=tmp_path)
    assert cli.returncode == 2 and "Traceback" not in cli.stderr
    assert "typo.yaml:5" in cli.stderr and "did you mean 'baseline'" in cli.stderr
    missing = tmp_path / "missing.yaml"
    missing.write_text("name: x\nnightly:\n  - name: a\n    suite: nowhere.yaml\n")
    with pytest.raises(SuiteError, match=r"suite file .*nowhere\.yaml not found"):
        load_pipeline_config(missing)


def test_feedback_for_tuning_never_returns_held_out_cases(tmp_path: Path) -> None:
    """Tuning-visible feedback of a run over all 102 golden-set cases: the 20 held-out ones are withheld
    (counted, never returned or counted in the label tallies), in the API and in the exported JSONL."""
    from clineval.releases.feedback import feedback

    suite = golden_suite(tmp_path, "all", {"copd"})
    # predictions for every case (the helper wrote the held-out ones only)
    lines = [
        json.dumps({"id": r["id"], "output": {"recommended_actions": [{"action": "Review in clinic"}]}})
        for r in ROWS
    ]
    (tmp_path / "all.jsonl").write_text("\n".join(lines) + "\n")
    url = f"sqlite:///{tmp_path / 'fb.db'}"
    run_id = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id
    found = feedback(url, run_id, failing_only=False)
    assert found.withheld == 20 and len(found.results) == 82
    assert all(r.metadata["split"] == "train" for r in found.results)
    assert sum(found.labels["schema"].values()) == 82
    out = tmp_path / "fb.jsonl"
    cli = clineval("feedback", run_id[:10], "--store", url, "--out", str(out), cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    heldout_ids = {r["id"] for r in HELDOUT}
    assert exported and not heldout_ids & {e["case_id"] for e in exported}
    assert json.loads(cli.stdout[: cli.stdout.rindex("}") + 1])["withheld_heldout"] == 20


def test_the_shipped_example_pipeline_runs_end_to_end(tmp_path: Path) -> None:
    """examples/pipelines: promote a baseline of the tier 3 suite, then the nightly pipeline passes; the
    production window holds the 48 records of [2026-11-20T12:00Z, 2026-11-21T12:00Z) (rec-NNNN at
    (NNNN - 1) x 30 min after 2026-11-20T00:00Z: rec-0025 at 12:00, the window's first, to rec-0072), two of
    them recorded errors (every 25th record: rec-0025, rec-0050), so schema_pass_rate = 46/48."""
    example = ROOT / "examples" / "pipelines"
    url = f"sqlite:///{tmp_path / 'ex.db'}"
    request = api.RunRequest(
        suite_path=example / "tier3_golden.yaml", store_url=url, cache_path=None, tenant_id="acme"
    )
    releases.promote_baseline(url, api.run_suite(request).run_id, "golden-main", tenant="acme")
    result = run_pipeline("nightly", example / "pipeline.yaml", store_url=url)
    assert result.passed, result.summary()
    production = api.load_run(url, result.steps[0].run_id or "")
    assert len(production.results) == 48
    assert production.aggregates["production"].scores["schema_pass_rate"] == pytest.approx(46 / 48)
    assert sorted(r.case_id for r in production.results if r.failed) == ["rec-0025", "rec-0050"]


def test_pipeline_steps_are_logged_to_mlflow(
    setup: tuple[Path, str, str],
    http_server: _Server,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mlflow import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    folder, url, hook = setup
    tracking = f"file://{folder}/mlruns"
    config = _config(folder, _suite(folder, "tonight", set()), hook)
    result = run_pipeline("nightly", config, store_url=url, mlflow_uri=tracking)
    (step,) = result.steps
    assert step.status == "pass" and not [w for w in step.warnings if w.startswith("mlflow")]
    client = MlflowClient(tracking_uri=tracking)
    runs = [r for e in client.search_experiments() for r in client.search_runs([e.experiment_id])]
    assert [r.data.tags["clineval.run_id"] for r in runs] == [step.run_id]
    assert runs[0].data.params["tenant"] == "acme" and runs[0].data.params["run_type"] == "nightly"
