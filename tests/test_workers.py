"""``--workers N`` (issue 26): one run as N forked processes over the shard partition gives the results of one
process case for case, sums the progress, and the same command resumes every worker."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete

from clineval.core import CaseResult
from clineval.core.errors import UserInputError
from clineval.runner.engine import TaskStats
from clineval.runs import run as api
from clineval.store import ResultStore
from clineval.store.tables import case_results
from tests.backends import BACKENDS, backend_url


def suite_file(folder: Path, cases: int = 240) -> Path:
    rng = random.Random(7)
    with (folder / "q.jsonl").open("w") as qf, (folder / "a.jsonl").open("w") as af:
        for i in range(cases):
            options = {k: f"option {k} of {i}" for k in "ABCD"}
            right = rng.choice("ABCD")
            said = right if rng.random() < 0.7 else rng.choice("ABCDX")
            row = {"question": f"Q{i}?", "answer": options[right], "options": options, "answer_idx": right}
            row["meta_info"] = f"step{1 + i % 3}"
            qf.write(json.dumps(row) + "\n")
            reply = {"step_by_step_thinking": "...", "answer_choice": said}
            af.write(json.dumps({"id": i, "raw_output": [json.dumps(reply)]}) + "\n")
    suite = folder / "suite.yaml"
    suite.write_text(
        "name: workers\ntasks:\n"
        + "".join(
            f"  - id: {task}\n    dataset: {{format: medqa, path: q.jsonl}}\n"
            "    system: {type: predictions, path: a.jsonl, output_field: raw_output, numeric_ids: true}\n"
            "    scorers: [mcq]\n    stratify: [meta_info]\n"
            for task in ("first", "second")
        )
    )
    return suite


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any, ...]] = []

    def task_started(self, task_id: str, total: int, already_done: int) -> None:
        self.events.append(("start", task_id, total, already_done))

    def case_finished(self, task_id: str, result: CaseResult) -> None:
        self.events.append(("case", task_id, result.failed))

    def task_finished(self, task_id: str, stats: TaskStats) -> None:
        self.events.append(("end", task_id, stats.done))


def by_case(store: ResultStore, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r.task_id, r.case_id): r.model_dump(mode="json") for r in store.load_results(run_id)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_workers_give_one_process_results_case_for_case(tmp_path: Path, backend: str) -> None:
    with backend_url(backend, tmp_path) as url:
        _same_results(suite_file(tmp_path), url)


def _same_results(suite: Path, url: str) -> None:
    one = api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None))
    recorder = Recorder()
    two = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=url, cache_path=None, workers=2), hooks=recorder
    )
    assert two.info.status == "finished" and two.info.provenance["shards"] == 2
    with ResultStore(url) as store:
        single, split = by_case(store, one.run_id), by_case(store, two.run_id)
    assert len(single) == 480 and single == split
    assert two.aggregates == one.aggregates
    assert two.info.provenance["timings"]["first"]["done"] == 240
    # progress: each task once, in suite order, with every case of both workers
    starts = [e for e in recorder.events if e[0] in ("start", "end")]
    assert starts == [("start", "first", 240, 0), ("end", "first", 240), ("start", "second", 240, 0),
                      ("end", "second", 240)]  # fmt: skip
    assert sum(1 for e in recorder.events if e[0] == "case") == 480


def test_the_same_command_resumes_every_worker(tmp_path: Path) -> None:
    suite = suite_file(tmp_path, cases=60)
    url = f"sqlite:///{tmp_path / 'store.db'}"
    request = api.RunRequest(suite_path=suite, store_url=url, cache_path=None, workers=2, run_id="nightly")
    first = api.run_suite(request)
    with ResultStore(url) as store:
        before = by_case(store, first.run_id)
        with store.engine.begin() as conn:  # as if both workers had stopped half way
            conn.execute(delete(case_results).where(case_results.c.id % 2 == 0))
    again = api.run_suite(request)
    assert again.run_id == first.run_id
    with ResultStore(url) as store:
        assert by_case(store, again.run_id) == before
    assert again.aggregates == first.aggregates


def test_workers_refuse_shard_and_resume() -> None:
    with pytest.raises(UserInputError, match="--workers does not take --shard"):
        api.RunRequest(suite_path=Path("s.yaml"), workers=2, shard=(0, 2), run_id="r")
    with pytest.raises(UserInputError, match="--workers does not take --resume"):
        api.RunRequest(suite_path=Path("s.yaml"), workers=2, resume="abc")
