"""A run's sums (``run_counts``, issue 26): the writer keeps them exact, the viewer's counts read them, and a
run whose sums do not match its stored cases is counted from the cases, with the same figures."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select

from clineval.core import CaseResult, ComponentSpec, RunInfo, Score, SuiteSpec, SystemOutput, TaskSpec
from clineval.store import ResultStore
from clineval.store.case_reads import read_counts
from clineval.store.tables import run_counts, utcnow
from clineval.view import queries
from tests.backends import BACKENDS, backend_url

SUITE = SuiteSpec(
    name="counts",
    source="suite.yaml",
    tasks=[
        TaskSpec(
            id=task,
            dataset=ComponentSpec(type="medqa", args={"path": "d.jsonl"}),
            system=ComponentSpec(type="predictions", args={"path": "p.jsonl"}),
            scorers=[ComponentSpec(type="mcq")],
        )
        for task in ("a", "b")
    ],
)


def result(i: int, task: str) -> CaseResult:
    if i % 7 == 0:
        output = SystemOutput.failure("timeout" if i % 2 else "http_503", "no answer")
        scores = {"mcq": Score(value=math.nan, label="failed"), "other": Score(value=0.0)}
    else:
        output = SystemOutput(text="B")
        label = ("correct", "incorrect", "unparsed")[i % 3]
        scores = {"mcq": Score(value=float(label == "correct"), label=label), "other": Score(value=1.0)}
    return CaseResult(task_id=task, case_id=str(i), output=output, scores=scores)


def live(store: ResultStore, run_id: str) -> tuple[object, object, object]:
    """The viewer's three figures, whichever way they are counted."""
    names = {"a": ["mcq", "other"], "b": ["mcq", "other"]}
    row = queries.run_rows(store.engine, run_id)[0]
    return (
        (row.n_cases, row.n_failed),
        queries.label_counts(store.engine, run_id, names),
        queries.failure_kinds(store.engine, run_id),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_sums_match_the_cases_and_a_mismatch_falls_back(tmp_path: Path, backend: str) -> None:
    with backend_url(backend, tmp_path) as url:
        _test_sums_match_the_cases_and_a_mismatch_falls_back(ResultStore(url))


def _test_sums_match_the_cases_and_a_mismatch_falls_back(store: ResultStore) -> None:
    store.create_run(RunInfo(run_id="r1", suite=SUITE, status="running", created_at=utcnow()))
    with store.writer("r1") as writer:
        for i in range(300):
            writer.put(result(i, "a" if i % 3 else "b"))
            if i % 50 == 0:
                writer.flush()  # several batches
    with store.engine.connect() as conn:
        sums = read_counts(conn, "r1")
        batches = conn.execute(select(func.count()).select_from(run_counts)).scalar_one()
    assert sums is not None and sums.n == 300 and sums.failed == 43 and batches > 10
    from_sums = live(store, "r1")
    with store.engine.begin() as conn:
        conn.execute(delete(run_counts))  # a run stored before the sums: counted from its cases
        assert read_counts(conn, "r1") is None
    from_cases = live(store, "r1")
    assert from_sums == from_cases
    assert from_sums[2] == {"a": {"http_503": 14, "timeout": 14}, "b": {"http_503": 8, "timeout": 7}}
    store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_with_stored_rows_makes_the_sums_unusable(tmp_path: Path, backend: str) -> None:
    with backend_url(backend, tmp_path) as url:
        _test_a_batch_with_stored_rows_makes_the_sums_unusable(ResultStore(url))


def _test_a_batch_with_stored_rows_makes_the_sums_unusable(store: ResultStore) -> None:
    store.create_run(RunInfo(run_id="r1", suite=SUITE, status="running", created_at=utcnow()))
    with store.writer("r1") as writer:
        writer.put(result(1, "a"))
    with store.writer("r1") as writer:  # a resumed run writing case 1 again (ignored) and case 2
        writer.put(result(1, "a"))
        writer.put(result(2, "a"))
    with store.engine.connect() as conn:
        assert read_counts(conn, "r1") is None  # never wrong: counted from the cases
    assert live(store, "r1")[0] == (2, 0)
    store.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_filtered_pages_are_the_same_with_and_without_the_sums(tmp_path: Path, backend: str) -> None:
    with backend_url(backend, tmp_path) as url:
        _test_filtered_pages_are_the_same_with_and_without_the_sums(ResultStore(url))


def _test_filtered_pages_are_the_same_with_and_without_the_sums(store: ResultStore) -> None:
    store.create_run(RunInfo(run_id="r1", suite=SUITE, status="running", created_at=utcnow()))
    with store.writer("r1") as writer:
        for i in range(300):
            writer.put(result(i, "a" if i % 3 else "b"))
    filters = [
        queries.CaseFilter(label="mcq:incorrect"),
        queries.CaseFilter(label="mcq:failed", task="a"),
        queries.CaseFilter(label="mcq:nothing"),
        queries.CaseFilter(failure="timeout"),
        queries.CaseFilter(failure="connection"),
    ]

    def pages() -> list[tuple[int, list[int], bool]]:
        found = [queries.case_page(store.engine, "r1", flt) for flt in filters]
        return [(p.total, [i for i, _ in p.rows], p.capped) for p in found]

    with_sums = pages()
    with store.engine.begin() as conn:
        conn.execute(delete(run_counts))
    assert pages() == with_sums
    assert [total for total, _, _ in with_sums] == [86, 28, 0, 21, 0]
    store.close()
