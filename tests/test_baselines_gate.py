"""Baselines (promote / list / show / history, never drifting) and the regression gate (strict and
statistical modes)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from clineval.core.errors import UserInputError
from clineval.releases import gate as releases
from clineval.runs import run as api
from clineval.store import ResultStore
from clineval.store.baselines import BaselineStore
from clineval.store.tables import dumps
from tests.backends import BACKENDS, backend_url
from tests.cli_helpers import clineval
from tests.golden_runs import GOLDEN, ROWS, run_golden

# The fixture's runs score all 102 golden-set cases, 82 of them tuned-on (split: train): these tests are
# about the gate's rules, so they gate knowingly. Held-out isolation is tested at the end of the file.
gate = functools.partial(releases.gate_run, allow_tuned_cases=True)


@pytest.fixture(scope="module", params=BACKENDS)
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, dict[str, str]]]:
    """The same five runs in a SQLite file and in a PostgreSQL schema (every test runs on both)."""
    folder = tmp_path_factory.mktemp("gate")
    with backend_url(request.param, folder) as url:
        yield url, _five_runs(folder, url)


def _five_runs(folder: Path, url: str) -> dict[str, str]:
    return {
        # the baseline misses PE and MI: adherence 0 on 30 cases
        "baseline": run_golden(folder, url, "baseline", {"pe", "mi"}),
        "same": run_golden(folder, url, "same", {"pe", "mi"}),
        # fixes PE and MI, breaks COPD: the mean improves (15 wrong instead of 30), COPD regresses
        "mixed": run_golden(folder, url, "mixed", {"copd"}),
        "better": run_golden(folder, url, "better", {"mi"}),
        # noise: the baseline's misses plus two single cases (of 102) in two other conditions
        "noise": run_golden(folder, url, "noise", {"pe", "mi", "gs2-pneumonia-01", "gs2-chf-01"}),
    }


def test_promote_list_show_history_never_drifts(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    first = releases.promote_baseline(url, ids["baseline"], "hist", tenant="acme")
    assert (first.name, first.tenant, first.version, first.run_id) == ("hist", "acme", 1, ids["baseline"])
    task = first.snapshot["tasks"]["golden"]
    assert task["tiers"]["schema_pass_rate"] == 1 and task["tiers"]["guideline_adherence"] == 3
    assert task["strata"]["condition"]["pe"]["guideline_adherence"] == 0.0
    assert gate(url, ids["better"], "hist", tenant="acme").passed  # a later version needs a passing gate
    second = releases.promote_baseline(url, ids["better"][:10], "hist", tenant="acme")
    assert second.version == 2 and second.run_id == ids["better"]
    # the old version is unchanged; the latest is the new one; other tenants are separate
    # (compared as JSON text: snapshots hold NaN, which is unequal to itself)
    again = releases.show_baseline(url, "hist", "acme", version=1)
    assert (again.run_id, again.promoted_at) == (first.run_id, first.promoted_at)
    assert dumps(again.snapshot) == dumps(first.snapshot)
    assert releases.show_baseline(url, "hist", "acme").run_id == second.run_id
    assert [b.version for b in releases.baseline_history(url, "hist", "acme")] == [1, 2]
    assert [(b.name, b.version) for b in releases.list_baselines(url, "acme")] == [("hist", 2)]
    with pytest.raises(UserInputError, match="no baseline 'hist' for tenant 'default'"):
        releases.show_baseline(url, "hist")


def test_gate_passes_and_blocks_a_condition_regression(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    promoted = releases.promote_baseline(url, ids["baseline"], "main")
    same = gate(url, ids["same"], "main")
    assert same.passed and same.mode == "strict"
    # gating: schema_pass_rate (tier 1), guideline_adherence (tier 3) overall and per condition; tracked:
    # the per-rule adherence rates (tier 3, the rule's own rate)
    task = promoted.snapshot["tasks"]["golden"]
    rules = [k for k, v in task["scores"].items() if k.startswith("adherence_") and isinstance(v, float)]
    assert same.n_gating == 2 + len(task["strata"]["condition"]) == 9
    assert same.n_tracked == len(rules) > 0
    assert {(r.role, r.direction) for r in same.rows if r.metric in rules} == {("track", "higher")}
    better = gate(url, ids["better"], "main")
    assert better.passed
    mixed = gate(url, ids["mixed"], "main")
    mean = next(r for r in mixed.rows if r.metric == "guideline_adherence" and not r.stratum)
    assert mean.status == "pass" and mean.delta is not None and mean.delta > 0
    assert [(r.metric, r.stratum) for r in mixed.failures] == [("guideline_adherence", "condition=copd")]
    assert mixed.failures[0].p is None
    store = ResultStore(url)
    try:
        records = BaselineStore(store.engine).gate_history(ids["mixed"])
    finally:
        store.close()
    assert [(r.baseline_name, r.baseline_version, r.passed, r.mode) for r in records] == [
        ("main", 1, False, "strict")
    ]
    assert records[0].details["n_failed"] == 1
    assert records[0].details["n_gating"] == 9 and records[0].details["n_tracked"] == mixed.n_tracked
    copd = next(r for r in records[0].details["rows"] if r["stratum"] == "condition=copd")
    assert (copd["role"], copd["direction"], copd["status"]) == ("gate", "higher", "fail")


def test_statistical_mode_passes_noise_that_strict_mode_blocks(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    releases.promote_baseline(url, ids["baseline"], "stat")
    strict = gate(url, ids["noise"], "stat")
    assert {(r.metric, r.stratum) for r in strict.failures} == {
        ("guideline_adherence", ""),
        ("guideline_adherence", "condition=pneumonia"),
        ("guideline_adherence", "condition=chf"),
    }
    stat = gate(url, ids["noise"], "stat", mode="statistical")
    assert stat.passed and stat.mode == "statistical"
    overall = next(r for r in stat.rows if r.metric == "guideline_adherence" and not r.stratum)
    assert overall.delta is not None and overall.delta < 0
    assert overall.p is not None and overall.p >= 0.05  # two discordant cases of 102: not significant
    assert overall.ci is not None and overall.ci[0] < 0 <= overall.ci[1] + 1e-12
    schema = next(r for r in stat.rows if r.metric == "schema_pass_rate" and not r.stratum)
    assert schema.status == "pass" and schema.p == 1.0
    # identical runs pass with p = 1 everywhere a test ran
    same = gate(url, ids["same"], "stat", mode="statistical")
    assert same.passed and all(r.p == 1.0 for r in same.rows if r.status != "tracked")


def test_statistical_mode_still_blocks_a_clear_condition_regression(runs: tuple[str, dict[str, str]]) -> None:
    # COPD goes from adherent to not on all 15 of its cases: exact McNemar p = 2 / 2**15, far below 0.05
    # even after Holm across the gate's tests, and the paired interval is entirely below zero
    url, ids = runs
    releases.promote_baseline(url, ids["baseline"], "stat-mixed")
    mixed = gate(url, ids["mixed"], "stat-mixed", mode="statistical")
    assert [(r.metric, r.stratum) for r in mixed.failures] == [("guideline_adherence", "condition=copd")]
    copd = mixed.failures[0]
    assert copd.p is not None and copd.p < 0.01
    assert copd.ci is not None and copd.ci[1] < 0
    assert "p_holm < 0.05" in copd.note and "CI upper" in copd.note
    mean = next(r for r in mixed.rows if r.metric == "guideline_adherence" and not r.stratum)
    assert mean.status == "pass" and mean.delta is not None and mean.delta > 0
    # a very loose alpha with a huge margin: the CI rule cannot fire, the test still does
    loose = gate(url, ids["mixed"], "stat-mixed", mode="statistical", margin=2.0)
    assert [(r.metric, r.stratum) for r in loose.failures] == [("guideline_adherence", "condition=copd")]
    assert "CI upper" not in loose.failures[0].note
    # an impossible alpha: only the interval rule fires
    ci_only = gate(url, ids["mixed"], "stat-mixed", mode="statistical", alpha=1e-12)
    assert len(ci_only.failures) == 1 and "p_holm" not in ci_only.failures[0].note


def test_gate_refuses_bad_options_and_unknown_baseline(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    releases.promote_baseline(url, ids["baseline"], "opts")
    with pytest.raises(UserInputError, match="unknown gate mode"):
        gate(url, ids["same"], "opts", mode="bayesian")
    with pytest.raises(UserInputError, match="--alpha"):
        gate(url, ids["same"], "opts", mode="statistical", alpha=1.5)
    with pytest.raises(UserInputError, match="--margin"):
        gate(url, ids["same"], "opts", mode="statistical", margin=-0.1)
    with pytest.raises(UserInputError, match="no baseline 'nope'"):
        gate(url, ids["same"], "nope")


def test_cli_exit_codes(runs: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, ids = runs
    store = ("--store", url, "--allow-tuned-cases")  # the fixture's runs use all 102 golden-set cases
    db = ("--store", url)
    promoted = clineval(
        "baseline", "promote", ids["baseline"], "--name", "cli", "--tenant", "t1", *db, cwd=tmp_path
    )
    assert promoted.returncode == 0, promoted.stderr
    assert "v1" in promoted.stdout
    listed = clineval("baseline", "list", *db, cwd=tmp_path)
    assert listed.returncode == 0 and "cli" in listed.stdout
    shown = clineval("baseline", "show", "cli", "--tenant", "t1", "--json", *db, cwd=tmp_path)
    assert shown.returncode == 0 and json.loads(shown.stdout)["version"] == 1
    history = clineval("baseline", "history", "cli", "--tenant", "t1", *db, cwd=tmp_path)
    assert history.returncode == 0 and "cli" in history.stdout

    ok = clineval("gate", ids["better"], "--baseline", "cli", "--tenant", "t1", *store, cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "PASS: 9 gating metrics, none regressed; " in ok.stdout
    blocked = clineval("gate", ids["mixed"], "--baseline", "cli", "--tenant", "t1", *store, cwd=tmp_path)
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "condition=copd" in blocked.stdout and "REGRESSION" in blocked.stdout

    stat = ("--tenant", "t1", "--mode", "statistical")
    noise = clineval("gate", ids["noise"], "--baseline", "cli", *stat, *store, cwd=tmp_path)
    assert noise.returncode == 0, noise.stdout + noise.stderr
    assert "PASS" in noise.stdout
    strict = clineval("gate", ids["noise"], "--baseline", "cli", "--tenant", "t1", *store, cwd=tmp_path)
    assert strict.returncode == 1, strict.stdout + strict.stderr
    blocked = clineval(
        "gate", ids["mixed"], "--baseline", "cli", *stat, "--alpha", "0.01", *store, cwd=tmp_path
    )
    assert blocked.returncode == 1, blocked.stdout + blocked.stderr
    assert "condition=copd" in blocked.stdout and "REGRESSION" in blocked.stdout

    for bad in (
        ("gate", ids["mixed"], "--baseline", "cli", "--tenant", "t1", "--mode", "nope"),
        ("gate", ids["mixed"], "--baseline", "cli", *stat, "--alpha", "0"),
        ("gate", ids["mixed"], "--baseline", "missing"),
        ("gate", "no-such-run", "--baseline", "cli", "--tenant", "t1"),
    ):
        result = clineval(*bad, *store, cwd=tmp_path)
        assert result.returncode == 2, (bad, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and "error:" in result.stderr
    tuned = ("gate", ids["better"], "--baseline", "cli", "--tenant", "t1")  # without --allow-tuned-cases
    for bad in (("baseline", "show", "missing"), tuned):
        result = clineval(*bad, *db, cwd=tmp_path)
        assert result.returncode == 2, (bad, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and "error:" in result.stderr


def test_gate_refuses_a_candidate_of_other_tasks(runs: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    url, ids = runs
    (tmp_path / "p.jsonl").write_text(
        "\n".join(json.dumps({"id": r["id"], "output": {"recommended_actions": []}}) for r in ROWS) + "\n"
    )
    suite = tmp_path / "other.yaml"
    suite.write_text(
        "name: other\ntasks:\n  - id: elsewhere\n"
        f"    dataset: {{format: golden_set, path: {GOLDEN}}}\n"
        "    system: {type: predictions, path: p.jsonl}\n"
        "    scorers: [schema]\n"
    )
    other = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id
    releases.promote_baseline(url, ids["baseline"], "tasks")
    with pytest.raises(UserInputError, match="differ from the baseline's"):
        gate(url, other, "tasks")


def test_statistical_mode_refuses_different_case_sets(runs: tuple[str, dict[str, str]]) -> None:
    url, ids = runs
    base, cand = api.load_run(url, ids["baseline"]), api.load_run(url, ids["same"])
    fewer = cand.model_copy(update={"results": cand.results[1:]})
    with pytest.raises(UserInputError, match="different cases than the baseline's run"):
        releases._paired_case_sets(base, fewer)
    base_sets, cand_sets = releases._paired_case_sets(base, cand)
    assert set(base_sets["golden"]) == set(cand_sets["golden"]) and len(base_sets["golden"]) == 102


def test_eval_results_hold_run_metrics_and_gate_decisions(runs: tuple[str, dict[str, str]]) -> None:
    """Run rows: every headline metric overall and per condition, with its tier. Gate rows: config_gate,
    the baseline's row id, passed_baseline per metric (None when tracked)."""
    url, ids = runs
    promoted = releases.promote_baseline(url, ids["baseline"], "rows", tenant="acme")
    gate(url, ids["mixed"], "rows", tenant="acme")
    store = ResultStore(url)
    try:
        run_rows = store.eval_results.query(run_id=ids["baseline"], run_type="adhoc")
        decided = store.eval_results.query(run_id=ids["mixed"], run_type="config_gate", tenant_id="acme")
    finally:
        store.close()
    by_key = {(r.metric_name, r.condition): r for r in run_rows}
    # the baseline misses every PE case: adherence 0 there, 1 on COPD; overall = the mean of the
    # per-case values over cases with an applicable rule (NaN = no rule applies)
    overall = by_key["guideline_adherence", None]
    per_condition = [r for r in run_rows if r.metric_name == "guideline_adherence" and r.condition]
    assert len(per_condition) == 7 and overall.tier == 3
    values = [r.scores["guideline_adherence"].value for r in api.load_run(url, ids["baseline"]).results]
    applicable = [v for v in values if v == v]
    assert 0 < len(applicable) < 102
    assert overall.metric_value == pytest.approx(sum(applicable) / len(applicable))
    assert by_key["guideline_adherence", "pe"].metric_value == 0.0
    assert by_key["guideline_adherence", "copd"].metric_value == 1.0
    assert by_key["schema_pass_rate", None].tier == 1 and by_key["schema_pass_rate", None].metric_value == 1.0
    assert {r.tenant_id for r in run_rows} == {"default"} and overall.metadata["task"] == "golden"
    assert all(r.timestamp.tzinfo is not None and r.baseline_id is None for r in run_rows)
    # the gate: COPD fails (1.0 -> 0.0), the mean passes (it improves), per-rule rates are tracked
    g = {(r.metric_name, r.condition): r for r in decided}
    copd = g["guideline_adherence", "copd"]
    assert (copd.passed_baseline, copd.metric_value, copd.baseline_id) == (False, 0.0, promoted.id)
    assert copd.metadata["baseline_value"] == 1.0 and copd.metadata["delta"] == -1.0
    mean = g["guideline_adherence", None]
    assert mean.passed_baseline is True and mean.metadata["delta"] > 0
    assert [r.metric_name for r in decided if r.passed_baseline is False] == ["guideline_adherence"]
    assert any(r.passed_baseline is None for r in decided)  # per-rule adherence rates are tracked


def test_gate_refuses_tuned_on_cases_unless_told(runs: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    """82 of the golden set's 102 cases are split: train. A gate refuses them by default; a run of the
    20 held-out cases is gated without the flag."""
    url, ids = runs
    releases.promote_baseline(url, ids["baseline"], "iso")
    with pytest.raises(UserInputError, match=r"includes 82 tuned-on case\(s\) of 102"):
        releases.gate_run(url, ids["same"], "iso")
    assert releases.gate_run(url, ids["same"], "iso", allow_tuned_cases=True).passed

    def heldout_run(name: str, wrong: set[str]) -> str:
        return run_golden(tmp_path, url, name, wrong, split="heldout")

    base, cand = heldout_run("h-base", set()), heldout_run("h-cand", {"copd"})
    releases.promote_baseline(url, base, "iso-heldout")
    result = releases.gate_run(url, cand, "iso-heldout")  # no flag needed: no tuned-on case
    held = sum(1 for r in ROWS if r["metadata"]["split"] == "heldout")
    assert held == 20 and len(api.load_run(url, cand).results) == held
    # breaking COPD (the baseline is perfect) lowers the mean and COPD
    assert [(r.metric, r.stratum) for r in result.failures] == [
        ("guideline_adherence", ""),
        ("guideline_adherence", "condition=copd"),
    ]
