"""Runs are aggregated, reported and compared from case summaries (issue 16): the numbers equal those
computed from the full results, a run stored without summaries (or under another plan) is read in full,
and only the sample cases a report shows are read whole."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

import clineval
from clineval.analysis.case_summary import RunTotals
from clineval.core import CaseResult, Metric, RunResult, Score, ScoringContext, SystemOutput
from clineval.core.helpers.columns import columns_of
from clineval.metrics.aggregate import aggregate_columns
from clineval.metrics.basic import Accuracy, LabelRate
from clineval.releases import gate as releases
from clineval.report.sections.cases import failures_by_kind, pick_cases
from clineval.report.sections.run_cases import pick_keys, run_failures
from clineval.runs import run as api
from clineval.runs.stored import PLAN_KEY, open_run, read_totals, summary_plan
from clineval.store import ResultStore
from clineval.store.tables import case_results

DEMO = Path(clineval.__file__).parent / "demo" / "suite.yaml"


def _request(url: str, **options: Any) -> api.RunRequest:
    return api.RunRequest(suite_path=DEMO, store_url=url, cache_path=None, **options)


def _dumped(aggregates: dict[str, Any]) -> dict[str, Any]:
    return {task: agg.model_dump(mode="json") for task, agg in aggregates.items()}


def _from_full_results(store: ResultStore, run_id: str) -> RunTotals:
    info = store.get_run(run_id)
    totals = RunTotals(summary_plan(info.suite))
    totals.add_results(store.iter_results(run_id))
    return totals


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('columns')}/runs.db"
    run = api.run_suite(_request(url))
    return url, run.run_id


def test_summaries_give_the_numbers_of_the_full_results(demo_run: tuple[str, str]) -> None:
    url, run_id = demo_run
    with ResultStore(url) as store:
        info = store.get_run(run_id)
        assert info.provenance[PLAN_KEY] == summary_plan(info.suite).fingerprint
        fast, slow = read_totals(store, info), _from_full_results(store, run_id)
        stored = store.load_run(run_id)
        results = store.load_results(run_id)
    assert [c.as_dict(0.2) for c in fast.components()] == [c.as_dict(0.2) for c in slow.components()]
    assert fast.usage_totals() == slow.usage_totals()
    scorers = api.scorers_for(info.suite)
    fast_cols, slow_cols = fast.columns(), slow.columns()
    fast_aggs = {
        t.id: aggregate_columns(fast_cols[t.id], scorers[t.id], t.stratify) for t in info.suite.tasks
    }
    slow_aggs = {
        t.id: aggregate_columns(slow_cols[t.id], scorers[t.id], t.stratify) for t in info.suite.tasks
    }
    assert _dumped(fast_aggs) == _dumped(slow_aggs)
    assert _dumped(api.aggregate_results(info.suite, results)) == _dumped(fast_aggs)
    assert {t: dict(a.scores) for t, a in stored.aggregates.items()} == {
        t: json.loads(json.dumps(a.model_dump(mode="json")["scores"])) for t, a in fast_aggs.items()
    }


def test_finalize_reads_summaries_not_results(
    demo_run: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, run_id = demo_run
    with ResultStore(url) as store:
        before = store.load_run(run_id)

        def refuse(*_args: object, **_kwargs: object) -> None:
            raise AssertionError("finalize read the full results")

        monkeypatch.setattr(ResultStore, "iter_results", refuse)
        monkeypatch.setattr(ResultStore, "load_results", refuse)
        again = api.finalize_run(store, run_id)
    assert _dumped(again.aggregates) == _dumped(before.aggregates)
    assert again.overall == before.overall
    assert len(again.results) == 400


def _reference_and_a_new_run(demo_run: tuple[str, str], tmp_path: Path) -> tuple[RunResult, str, str]:
    """The demo run as stored, and the same suite run again into another store (to be tampered with)."""
    url, run_id = demo_run
    with ResultStore(url) as store:
        reference = store.load_run(run_id)
    copy_url = f"sqlite:///{tmp_path}/copy.db"
    return reference, copy_url, api.run_suite(_request(copy_url)).run_id


def test_a_run_stored_without_summaries_is_read_in_full(demo_run: tuple[str, str], tmp_path: Path) -> None:
    reference, copy_url, run_id = _reference_and_a_new_run(demo_run, tmp_path)
    with ResultStore(copy_url) as store:
        with store.engine.begin() as conn:  # as stored by a clineval before summaries
            conn.execute(update(case_results).values(summary=None))
        again = api.finalize_run(store, run_id)
    assert _dumped(again.aggregates) == _dumped(reference.aggregates)
    assert again.overall == reference.overall


def test_summaries_made_under_another_plan_are_not_trusted(demo_run: tuple[str, str], tmp_path: Path) -> None:
    reference, copy_url, run_id = _reference_and_a_new_run(demo_run, tmp_path)
    with ResultStore(copy_url) as store:
        with store.engine.begin() as conn:  # summaries that lost every score: an older, narrower plan
            for row in conn.execute(case_results.select()).fetchall():
                summary = json.loads(row.summary)
                summary["s"] = {}
                conn.execute(
                    update(case_results)
                    .where(case_results.c.id == row.id)
                    .values(summary=json.dumps(summary))
                )
        store.update_provenance(run_id, {PLAN_KEY: "an-older-plan"})
        again = api.finalize_run(store, run_id)
    assert _dumped(again.aggregates) == _dumped(reference.aggregates)


def test_report_picks_and_failures_from_columns_equal_those_from_results(demo_run: tuple[str, str]) -> None:
    url, run_id = demo_run
    with ResultStore(url) as store:
        results = store.load_results(run_id)
        run = open_run(store, run_id)
        assert run.columns is not None
        expected = [(kind, (r.task_id, r.case_id)) for kind, r in pick_cases(results, 50)]
        assert expected  # the demo has cases that went wrong
        assert pick_keys(run, 50) == expected
        assert run_failures(run) == failures_by_kind(results)


def test_compare_of_a_run_with_itself_changes_nothing(demo_run: tuple[str, str]) -> None:
    url, run_id = demo_run
    comparison = releases.compare_runs(url, run_id, run_id)
    assert comparison.tasks and all(not t.changes for t in comparison.tasks)
    for task in comparison.tasks:
        assert all(d.delta == 0 for d in task.overall if not math.isnan(d.delta))
        assert all(p.wins == p.losses == 0 for p in task.paired)


def _result(case_id: str, value: float, label: str, stratum: str | None, failed: bool = False) -> CaseResult:
    output = SystemOutput.failure("timeout", "slow") if failed else SystemOutput(text="B")
    return CaseResult(
        task_id="t",
        case_id=case_id,
        output=output,
        scores={"mcq": Score(value=value, label=label)},
        metadata={} if stratum is None else {"exam": stratum},
    )


class _Mcq:
    name = "mcq"
    metrics: Sequence[Metric] = (Accuracy(), LabelRate("unparsed"))

    def __call__(self, ctx: ScoringContext) -> Score:
        raise NotImplementedError  # aggregation only reads name and metrics


def test_column_aggregation_by_hand() -> None:
    """6 cases: correct, correct, incorrect, unparsed (step1); correct, failed (step2); one with no stratum
    and a NaN score: accuracy over the 6 scorable = 3/6, unparsed 1/6; step1 2/4, step2 1/2."""
    results = [
        _result("1", 1.0, "correct", "step1"),
        _result("2", 1.0, "correct", "step1"),
        _result("3", 0.0, "incorrect", "step1"),
        _result("4", 0.0, "unparsed", "step1"),
        _result("5", 1.0, "correct", "step2"),
        _result("6", 0.0, "failed", "step2", failed=True),
        _result("7", math.nan, "not_scorable", None),
    ]
    agg = aggregate_columns(columns_of(results, {"mcq": ()}, ["exam"]), [_Mcq()], ["exam"])
    assert agg.scores["accuracy"] == pytest.approx(3 / 6)
    assert agg.scores["unparsed_rate"] == pytest.approx(1 / 6)
    assert (agg.scores["n"], agg.scores["n_failed"], agg.scores["n_unscored"]) == (7, 1, 1)
    assert agg.strata["exam"]["step1"]["accuracy"] == pytest.approx(2 / 4)
    assert agg.strata["exam"]["step2"]["accuracy"] == pytest.approx(1 / 2)
    assert agg.strata["exam"]["(missing)"]["n_unscored"] == 1
    assert math.isnan(float(agg.strata["exam"]["(missing)"]["accuracy"]))  # type: ignore[arg-type]


def test_stored_results_read_only_what_is_asked(demo_run: tuple[str, str]) -> None:
    url, run_id = demo_run
    with ResultStore(url) as store:
        every = [r.model_dump(mode="json") for r in store.load_results(run_id)]
        lazy = open_run(store, run_id).results
        assert len(lazy) == len(every) == 400
        assert lazy[0].model_dump(mode="json") == every[0]
        assert lazy[-1].model_dump(mode="json") == every[-1]
        assert [r.model_dump(mode="json") for r in lazy[10:13]] == every[10:13]
        assert [r.model_dump(mode="json") for r in lazy[5:50:20]] == every[5:50:20]
        assert [r.model_dump(mode="json") for r in lazy] == every
        with pytest.raises(IndexError):
            lazy[400]
        picked = lazy.by_keys([(every[7]["task_id"], every[7]["case_id"])])  # type: ignore[attr-defined]
        assert [r.model_dump(mode="json") for r in picked.values()] == [every[7]]
