"""The scale paths of issue 16 keep every number: a run is aggregated from its results read back once
(``finalize_run`` no longer reads and validates them a second time), and a resumed run still aggregates
over all its stored results, earlier ones included; ``iter_results`` streams what ``load_results`` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import clineval
from clineval.analysis.gate import snapshot
from clineval.config import load_suite
from clineval.core import RunResult
from clineval.core.system_identity import task_system_names
from clineval.metrics.aggregate import overall_scores
from clineval.report.formats.results_jsonl import write_results_jsonl
from clineval.runs import run as api
from clineval.store import ResultStore

DEMO = Path(clineval.__file__).parent / "demo" / "suite.yaml"


def _dumped(run: RunResult) -> dict[str, Any]:
    return {task: agg.model_dump(mode="json") for task, agg in run.aggregates.items()}


def _request(store_url: str, **options: Any) -> api.RunRequest:
    return api.RunRequest(suite_path=DEMO, store_url=store_url, cache_path=None, **options)


def _check_against_store(run: RunResult, store_url: str) -> None:
    """What the run returned and stored equals a fresh aggregation over every result read back."""
    with ResultStore(store_url) as store:
        results = store.load_results(run.run_id)
        stored = store.load_run(run.run_id)
    expected = api.aggregate_results(run.info.suite, results)
    assert _dumped(run) == {t: a.model_dump(mode="json") for t, a in expected.items()}
    assert _dumped(stored) == _dumped(run)
    assert stored.overall == run.overall == overall_scores(expected, task_system_names(run.info.suite))
    assert [r.model_dump(mode="json") for r in run.results] == [r.model_dump(mode="json") for r in results]
    scorers = api.scorers_for(run.info.suite)
    assert snapshot(run, scorers) == snapshot(stored, scorers)  # what record_metrics stores


def test_a_run_aggregates_what_a_fresh_read_back_aggregates(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    run = api.run_suite(_request(url))
    assert len(run.results) == 400
    _check_against_store(run, url)


def test_a_resumed_run_aggregates_its_earlier_results_too(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    full = api.run_suite(_request(url))
    suite = load_suite(DEMO, limit=None, seed=0)
    with ResultStore(url) as store:
        partial_id = "0" * 32
        store.create_run(api.new_run_info(suite, _request(url), partial_id))
        with store.writer(partial_id) as writer:  # an interrupted run: 150 of its 400 results stored
            for result in full.results[:150]:
                writer.put(result)
        store.mark_interrupted(partial_id)
    resumed = api.run_suite(_request(url, resume=partial_id))
    assert resumed.run_id == partial_id
    assert resumed.info.status == "finished"
    assert len(resumed.results) == 400
    _check_against_store(resumed, url)
    assert _dumped(resumed) == _dumped(full)
    assert resumed.overall == full.overall


def test_iter_results_streams_what_load_results_reads(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/runs.db"
    run = api.run_suite(_request(url))
    with ResultStore(url) as store:
        loaded = store.load_results(run.run_id)
        streamed = list(store.iter_results(run.run_id, batch=7))
        assert [r.model_dump(mode="json") for r in streamed] == [r.model_dump(mode="json") for r in loaded]
        a = write_results_jsonl(loaded, tmp_path / "loaded.jsonl")
        b = write_results_jsonl(store.iter_results(run.run_id), tmp_path / "streamed.jsonl")
    assert a.read_bytes() == b.read_bytes()
    assert len(a.read_text().splitlines()) == 400
