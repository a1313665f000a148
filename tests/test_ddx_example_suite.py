"""examples/ddx_open_xddx.yaml end to end: a DDx system over HTTP (local scripted server) on Open-XDDx,
scored by `ddx`, with recall and top-1 known by construction."""

from __future__ import annotations

from pathlib import Path

from clineval.config import load_suite
from clineval.runs import run as api
from clineval.testing.cds_pipeline import running_pipeline
from tests.helpers import shared_data

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "ddx_open_xddx.yaml"
DISTRACTOR = "Unrelated condition of the xylophone"


def suite_for(tmp_path: Path, url: str) -> Path:
    data = shared_data("open_xddx", "open_xddx.jsonl").parent.parent
    text = EXAMPLE.read_text().replace("http://127.0.0.1:8002/predict", url)
    path = tmp_path / "suite.yaml"
    path.write_text(text.replace("../../shared/data", str(data)))
    return path


def test_ddx_example_suite(tmp_path: Path) -> None:
    cases = load_suite(suite_for(tmp_path, "http://127.0.0.1:1/predict"), limit=30, seed=3).tasks[0].cases
    reports, recalls, top1 = {}, [], []
    for i, case in enumerate(cases):
        truth = case.reference.differential
        names = [truth, [truth[0], DISTRACTOR], [DISTRACTOR]][i % 3]
        reports[case.id] = {"differential": [{"diagnosis": name} for name in names]}
        recalls.append([1.0, 1 / len(truth), 0.0][i % 3])
        top1.append(i % 3 != 2)
    with running_pipeline(reports) as (url, server):
        run = api.run_suite(
            api.RunRequest(
                suite_path=suite_for(tmp_path, url),
                limit=30,
                seed=3,
                store_url=f"sqlite:///{tmp_path}/s.db",
                cache_path=None,
            )
        )
    assert sum(server.calls.values()) == 30
    scores = run.aggregates["open-xddx"].scores
    assert scores["n"] == 30 and scores["n_failed"] == 0
    assert abs(float(scores["recall"]) - sum(recalls) / 30) < 1e-12  # type: ignore[arg-type]
    assert scores["top1_accuracy"] == sum(top1) / 30
    assert "specialty" in run.aggregates["open-xddx"].strata
    by_id = {r.case_id: r for r in run.results}
    first = by_id[cases[0].id].scores["ddx"].breakdown
    assert first["TP"] == len(cases[0].reference.differential) and first["FP"] == 0
