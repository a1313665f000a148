"""examples/cds_pipeline_medqa.yaml end to end: a local CDS pipeline over HTTP, the MCQ selection step
against the scripted OpenAI-compatible server, type-aware scores stratified by question type, and
`clineval compare` of two pipeline versions on the same seeded sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clineval.config import load_suite
from clineval.mcq.cds_report import DEFAULT_ORDER
from clineval.releases import gate as releases
from clineval.runner.policy import CallPolicy
from clineval.runs import run as api
from clineval.testing import Reply, Rule, Script
from clineval.testing.cds_pipeline import running_pipeline
from tests.cli_helpers import clineval
from tests.conftest import StartServer

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cds_pipeline_medqa.yaml"
SECTION_KEYS = {
    "differential": "differential",
    "next_steps": "next_steps",
    "workup": "recommended_workup",
    "reasoning": "reasoning_chain",
    "recommendations": "recommendations",
}
FILLER = ["Observation only", "Routine follow-up visit"]


def suite_for(tmp_path: Path, pipeline_url: str, model_url: str) -> Path:
    text = EXAMPLE.read_text().replace("http://127.0.0.1:8001/predict", pipeline_url)
    text = text.replace("http://127.0.0.1:8000/v1", model_url)
    text = text.replace("../../shared/data", str(EXAMPLE.parents[2] / "shared" / "data"))
    path = tmp_path / "suite.yaml"
    path.write_text(text)
    return path


def scripted_report(index: int, answer: str) -> tuple[dict[str, Any], str | None, int | None]:
    """The answer text placed by construction: in section k (cycling), at rank 1 or 2, or nowhere."""
    places = ["differential", "next_steps", "workup", "reasoning", "recommendations", None]
    section = places[index % len(places)]
    rank = 1 + (index // len(places)) % 2
    report: dict[str, Any] = {key: list(FILLER) for key in SECTION_KEYS.values()}
    if section is not None:
        items = report[SECTION_KEYS[section]]
        items.insert(rank - 1, answer)
    return report, section, rank if section else None


def expected_label(qtype: str, section: str | None, rank: int | None) -> str:
    order = DEFAULT_ORDER.get(qtype, DEFAULT_ORDER["other"])
    if section is None:
        return "missed"
    if section not in order:
        return "mentioned_only"  # only in the full text
    if section == order[0]:
        return "top1" if rank == 1 else "top3"
    return "other_section"


def test_example_suite_scores_the_pipeline_by_question_type(
    tmp_path: Path, start_server: StartServer
) -> None:
    cases = (
        load_suite(
            suite_for(tmp_path, "http://127.0.0.1:1/predict", "http://127.0.0.1:1/v1"), limit=50, seed=42
        )
        .tasks[0]
        .cases
    )
    placed = {c.id: scripted_report(i, c.reference.answer_text or "") for i, c in enumerate(cases)}
    failing = cases[3]  # its selection call always fails
    model = start_server(
        Script(
            latency_s=0.0,
            rules=[Rule(match=(failing.input.question or "")[:80], replies=[Reply(status=500)])],
        )
    )
    with running_pipeline({cid: r for cid, (r, _, _) in placed.items()}) as (url, pipeline):
        run = api.run_suite(
            api.RunRequest(
                suite_path=suite_for(tmp_path, url, model.base_url),
                store_url=f"sqlite:///{tmp_path}/s.db",
                limit=50,
                seed=42,
                cache_path=None,
                concurrency=8,
                policy=CallPolicy(backoff_base_s=0.01, backoff_max_s=0.02),
            )
        )
        assert sum(pipeline.calls.values()) == 50
    results = {r.case_id: r for r in run.results}
    assert len(results) == 50
    for c in cases:
        result = results[c.id]
        _, section, rank = placed[c.id]
        expected = expected_label(result.metadata["question_type"], section, rank)
        assert result.scores["cds_report"].label == expected, (c.id, section, rank)
    scores = run.aggregates["cds"].scores
    labels = [r.scores["cds_report"].label for r in results.values()]
    assert scores["top1_accuracy"] == labels.count("top1") / 50
    assert scores["mentioned_rate"] == sum(1 for _, s, _ in placed.values() if s) / 50
    gold_a = sum(1 for c in cases if c.reference.answer == "A" and c.id != failing.id)
    assert scores["mcq_accuracy"] == gold_a / 50 and scores["mcq_failed_rate"] == 1 / 50  # server answers "A"
    strata = run.aggregates["cds"].strata
    by_type = strata["question_type"]
    assert sum(v["n"] for v in by_type.values()) == 50  # type: ignore[misc]
    assert set(strata["pipeline_appropriate"]) <= {"yes", "no"}
    appropriate = [r for r in results.values() if r.metadata["pipeline_appropriate"] == "yes"]
    assert strata["pipeline_appropriate"]["yes"]["n"] == len(appropriate)
    assert all(r.metadata["question_type"] in {"diagnostic", "treatment", "lab_finding"} for r in appropriate)
    record = results[cases[0].id].output.raw["mcq_selection"]  # type: ignore[index]
    assert json.loads(record["text"])["answer_choice"] == "A"
    assert set(results[cases[0].id].output.stage_latency_s) == {"pipeline", "mcq_selection"}


def test_compare_two_pipeline_versions(tmp_path: Path, start_server: StartServer) -> None:
    model = start_server(Script(latency_s=0.0))
    store = f"sqlite:///{tmp_path}/s.db"
    suite0 = suite_for(tmp_path, "http://127.0.0.1:1/predict", model.base_url)
    cases = load_suite(suite0, limit=20, seed=7).tasks[0].cases
    # v1 puts every answer at rank 1 of the differential; v2 does so only for even cases.
    v1 = {c.id: {"differential": [c.reference.answer_text]} for c in cases}
    v2 = {
        c.id: {"differential": [c.reference.answer_text] if i % 2 == 0 else ["Observation only"]}
        for i, c in enumerate(cases)
    }
    run_ids = []
    for reports in (v1, v2):
        with running_pipeline(reports) as (url, _):
            request = api.RunRequest(
                suite_path=suite_for(tmp_path, url, model.base_url),
                store_url=store,
                limit=20,
                seed=7,
                cache_path=None,
            )
            run_ids.append(api.run_suite(request).run_id)
    comparison = releases.compare_runs(store, *run_ids)
    [task] = comparison.tasks
    by_metric = {d.metric: d for d in task.overall}
    assert task.n == 20 and by_metric["mentioned_rate"].a == 1.0 and by_metric["mentioned_rate"].b == 0.5
    changed = [ch for ch in task.changes if ch.scorer == "cds_report"]
    assert {ch.case_id for ch in changed} <= {c.id for i, c in enumerate(cases) if i % 2 == 1}
    [test] = [t for t in task.tests if t.scorer == "cds_report"]
    lost = sum(1 for ch in changed if ch.a_value == 1.0 and ch.b_value == 0.0)
    assert (test.a_only, test.b_only) == (lost, 0)
    assert lost > 0 and test.p_value == min(1.0, 2 * 0.5**lost)  # exact two-sided binomial, by hand
    out = clineval(
        "compare", run_ids[0][:10], run_ids[1][:10], "--store", store, "--out", "cmp.md", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    assert "question_type" in out.stdout and "mentioned_rate" in out.stdout
    assert "Exact McNemar (cds_report)" in (tmp_path / "cmp.md").read_text()
