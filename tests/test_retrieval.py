"""Tier 2 retrieval: trec_eval figures reproduced on TREC CT 2022, judgments JSONL, per-source-type recall,
guideline citation rate, embedding cluster quality."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import numpy as np
import pytest

from clineval.cds.retrieval.scorer import GuidelineCitationScorer, RetrievalScorer, evaluate
from clineval.cds.retrieval.trec_run import parse_run
from clineval.core import (
    Case,
    CaseInput,
    Reference,
    RetrievedDoc,
    ScoringContext,
    StructuredOutput,
    SystemOutput,
)
from clineval.core.errors import DataFileError
from clineval.datasets.registry import DATASETS
from clineval.metrics.embedding_clusters import cluster_quality
from clineval.runs import run as api
from clineval.scoring.registry import SCORERS
from clineval.systems.registry import SYSTEMS
from tests.helpers import shared_data

# ../shared/data/trec_ct_2022/trec_eval.*.log.txt (jtreceval -c -mndcg_cut.10 -mP.5 -mRprec -mrecip_rank)
TREC_EVAL = {
    "bm25": {"nDCG@10": 0.3608, "P@5": 0.4800, "Rprec": 0.2375, "RR": 0.6398},
    "bm25_monot5-3b": {"nDCG@10": 0.4789, "P@5": 0.6440, "Rprec": 0.3165, "RR": 0.7705},
}


def test_trec_ct_2022_matches_trec_eval_logs(tmp_path: Path) -> None:
    data = shared_data("trec_ct_2022", "qrels.tsv").parent
    tasks = "".join(
        f"""
  - id: {run}
    dataset: {{format: trec_qrels, path: {data}/qrels.tsv, topics: {data}/queries.tsv}}
    system: {{type: trec_run, path: {data}/run.{run}.txt}}
    scorers: [retrieval]
"""
        for run in TREC_EVAL
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"name: trec-ct-2022\ntasks:{tasks}")
    result = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None)
    )
    for run, expected in TREC_EVAL.items():
        scores = result.aggregates[run].scores
        assert scores["n"] == 50 and scores["n_failed"] == 0
        for measure, value in expected.items():
            assert round(float(scores[measure]), 4) == value, (run, measure, scores[measure])  # type: ignore[arg-type]
        assert {"AP", "R@100"} <= set(scores)
    # the first run's ordering follows trec_eval: by score, ties by doc id descending
    case = next(r for r in result.results if r.task_id == "bm25" and r.case_id == "1")
    assert case.scores["retrieval"].breakdown["n_retrieved"] == 1000


def test_trec_run_tie_breaking_and_missing_query(tmp_path: Path) -> None:
    run = b"1 Q0 A 1 2.0 t\n1 Q0 C 2 1.0 t\n1 Q0 B 3 1.0 t\n1 Q0 D 4 3.0 t\n"
    ranked = parse_run(run, tmp_path / "run.txt")
    assert [d.doc_id for d in ranked["1"]] == ["D", "A", "C", "B"]
    assert [d.doc_id for d in parse_run(run, tmp_path / "r", order="rank")["1"]] == ["A", "C", "B", "D"]
    with pytest.raises(DataFileError, match="listed twice"):
        parse_run(run + b"1 Q0 A 5 0.1 t\n", tmp_path / "r")
    with pytest.raises(DataFileError, match=":2: expected 6 fields"):
        parse_run(b"1 Q0 A 1 2.0 t\n1 Q0 B\n", tmp_path / "r")
    (tmp_path / "run.txt").write_bytes(run)
    system = SYSTEMS.get("trec_run")({"path": "run.txt"}, tmp_path)
    missing = asyncio.run(system.call(Case(id="2", input=CaseInput())))
    assert missing.error is not None and missing.error.kind == "missing_prediction"
    scorer = RetrievalScorer()
    score = scorer(ScoringContext(case=_case({"A": 1}), output=missing))
    assert score.label == "failed" and score.value == 0.0
    assert score.breakdown["measures"]["RR"] == 0.0  # trec_eval -c: a judged query missing from the run is 0


def _case(qrels: dict[str, int], **data: object) -> Case:
    return Case(id="q", input=CaseInput(question="q"), reference=Reference(data={"qrels": qrels, **data}))


def _retrieved(*docs: str | tuple[str, str]) -> SystemOutput:
    items = [
        RetrievedDoc(doc_id=d) if isinstance(d, str) else RetrievedDoc(doc_id=d[0], source_type=d[1])
        for d in docs
    ]
    return SystemOutput(structured=StructuredOutput(retrieved=items))


def test_measures_on_a_small_ranking() -> None:
    values = evaluate(
        ["P@2", "RR", "Rprec", "nDCG@3", "R@2"], {"a": 0, "b": 2, "c": 1, "d": 3}, ["a", "b", "x", "c"]
    )
    assert values["P@2"] == 0.5 and values["RR"] == 0.5 and values["R@2"] == pytest.approx(1 / 3)
    assert values["Rprec"] == pytest.approx(1 / 3)  # 3 relevant (grade >= 1); 1 of the top 3
    ideal = 3 + 2 / math.log2(3) + 1 / 2
    assert values["nDCG@3"] == pytest.approx((2 / math.log2(3)) / ideal)
    assert evaluate(["RR"], {"a": 1}, ["b", "a", "a"]) == {
        "RR": 0.5
    }  # a repeated doc counts at its first rank


def test_judgments_jsonl_and_per_source_type_recall(tmp_path: Path) -> None:
    lines = [
        {
            "query": "CAP treatment?",
            "query_id": "q1",
            "doc_id": "g1",
            "chunk_id": "g1#0",
            "grade": 3,
            "source_type": "guideline",
            "metadata": {"query_type": "treatment"},
        },
        {
            "query": "CAP treatment?",
            "query_id": "q1",
            "doc_id": "g1",
            "chunk_id": "g1#1",
            "grade": 1,
            "source_type": "guideline",
        },
        {
            "query": "CAP treatment?",
            "query_id": "q1",
            "doc_id": "g2",
            "chunk_id": "g2#0",
            "grade": 2,
            "source_type": "guideline",
        },
        {
            "query": "CAP treatment?",
            "query_id": "q1",
            "doc_id": "n1",
            "chunk_id": "n1#0",
            "grade": 1,
            "source_type": "note",
        },
        {
            "query": "CAP treatment?",
            "query_id": "q1",
            "doc_id": "n2",
            "chunk_id": "n2#0",
            "grade": 0,
            "source_type": "note",
        },
    ]
    path = tmp_path / "retrieval_judgments.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    loaded = DATASETS.get("retrieval_judgments")({"path": path.name}, tmp_path)
    (case,) = loaded.cases
    assert case.id == "q1" and case.input.question == "CAP treatment?"
    assert case.reference.data["qrels"] == {"g1": 3, "g2": 2, "n1": 1, "n2": 0}
    assert case.reference.data["source_types"]["g2"] == "guideline"
    assert case.metadata == {"query_type": "treatment"}
    chunks = DATASETS.get("retrieval_judgments")({"path": path.name, "unit": "chunk"}, tmp_path).cases[0]
    assert chunks.reference.data["qrels"]["g1#1"] == 1 and chunks.reference.data["unit"] == "chunk"

    scorer = SCORERS.get("retrieval")({"source_type_recall": [1, 2]})
    score = scorer(ScoringContext(case=case, output=_retrieved("g1", "n2", "n1", "g2")))
    by_type = score.breakdown["by_source_type"]
    assert by_type == {"R@1[guideline]": 0.5, "R@2[guideline]": 0.5, "R@1[note]": 0.0, "R@2[note]": 0.0}
    assert score.value == score.breakdown["measures"]["nDCG@10"] > 0
    metrics = {k: v for m in scorer.metrics for k, v in m.compute([score]).items()}
    assert metrics["R@2[guideline]"] == 0.5 and metrics["P@5"] == 0.6

    chunk_score = scorer(
        ScoringContext(
            case=chunks,
            output=SystemOutput(
                structured=StructuredOutput(retrieved=[RetrievedDoc(doc_id="g1", chunk_id="g1#1")])
            ),
        )
    )
    assert chunk_score.breakdown["measures"]["RR"] == 1.0

    path.write_text('{"query": "x", "doc_id": "d", "grade": "high"}\n')
    with pytest.raises(DataFileError, match=":1: field 'grade'"):
        DATASETS.get("retrieval_judgments")({"path": path.name}, tmp_path)


def test_qrels_loader_errors(tmp_path: Path) -> None:
    (tmp_path / "q.txt").write_text("1 0 d1 1\n1 0 d2\n")
    with pytest.raises(DataFileError, match=":2: expected 4 fields"):
        DATASETS.get("trec_qrels")({"path": "q.txt"}, tmp_path)
    (tmp_path / "q.txt").write_text("1 0 d1 1\n2 0 d2 0\n")
    (tmp_path / "t.xml").write_text(
        '<topics><topic number="1">first</topic><topic number="2">two</topic></topics>'
    )
    cases = DATASETS.get("trec_qrels")({"path": "q.txt", "topics": "t.xml"}, tmp_path).cases
    assert [(c.id, c.input.question) for c in cases] == [("1", "first"), ("2", "two")]
    (tmp_path / "t.tsv").write_text("1\tfirst\n")
    with pytest.raises(DataFileError, match="1 judged queries have no topic"):
        DATASETS.get("trec_qrels")({"path": "q.txt", "topics": "t.tsv"}, tmp_path)


def test_unknown_measure_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown retrieval measure"):
        SCORERS.get("retrieval")({"measures": ["nDCG@10", "Bogus@3"]})


def test_guideline_citation_rate() -> None:
    scorer = GuidelineCitationScorer()
    treatment = Case(id="t", input=CaseInput(), metadata={"query_type": "treatment"})
    flagged = Case(id="f", input=CaseInput(), reference=Reference(data={"treatment_query": True}))
    other = Case(id="o", input=CaseInput(), metadata={"query_type": "diagnosis"})
    two = SystemOutput(  # two guideline rows, each cited by an action it is about (their key terms)
        structured=StructuredOutput.model_validate(
            {
                "recommended_actions": [
                    {"action": "Start IV furosemide (loop diuretic)", "evidence_refs": ["e1", "e3"]},
                    {"action": "Start bisoprolol", "evidence_refs": ["e2"]},
                ],
                "evidence_table": [
                    {"id": "e1", "source_type": "guideline", "text": "Loop diuretics for congestion"},
                    {"id": "e2", "source_type": "guideline", "text": "Bisoprolol, carvedilol or metoprolol"},
                    {"id": "e3", "source_type": "note"},
                ],
            }
        )
    )
    one = _retrieved(("d1", "guideline"), ("d2", "note"))
    passed = scorer(ScoringContext(case=treatment, output=two))
    failed = scorer(ScoringContext(case=flagged, output=one))
    skipped = scorer(ScoringContext(case=other, output=one))
    crashed = scorer(ScoringContext(case=treatment, output=SystemOutput.failure("timeout", "slow")))
    assert passed.label == "cited" and passed.value == 1.0
    assert failed.label == "too_few_guidelines" and failed.breakdown["from"] == "retrieved"
    assert skipped.label == "not_applicable" and math.isnan(skipped.value)
    assert crashed.value == 0.0
    (metric,) = SCORERS.get("guideline_citation")({}).metrics
    rate = metric.compute([passed, failed, skipped, crashed])
    assert rate["guideline_citation_rate"] == pytest.approx(1 / 3)


def test_cluster_quality_known_answer() -> None:
    # two orthogonal pairs: intra cos = 1, inter cos = 0
    vectors = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [0.0, 3.0]])
    result = cluster_quality(vectors, ["a", "a", "b", "b"], n_permutations=200, seed=1)
    assert result.intra_mean == pytest.approx(1.0) and result.inter_mean == pytest.approx(0.0)
    assert result.gap == pytest.approx(1.0)
    # 3 distinct labellings of 2+2; 1/3 of shuffles reproduce the clustering
    assert 0.2 < result.p_value < 0.5

    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 16)) * 3
    labels = [str(i % 3) for i in range(90)]
    clustered = centres[[i % 3 for i in range(90)]] + rng.normal(size=(90, 16))
    tight = cluster_quality(clustered, labels, n_permutations=500)
    assert tight.gap > 0.3 and tight.p_value == pytest.approx(1 / 501)
    sims = clustered / np.linalg.norm(clustered, axis=1, keepdims=True)
    gram = sims @ sims.T
    same = np.equal.outer(labels, labels)
    upper = np.triu(np.ones_like(gram, dtype=bool), 1)
    assert tight.intra_mean == pytest.approx(gram[same & upper].mean())
    assert tight.inter_mean == pytest.approx(gram[~same & upper].mean())
    assert cluster_quality(clustered, labels, n_permutations=500) == tight  # seeded: reproducible

    noise = cluster_quality(rng.normal(size=(90, 16)), labels, n_permutations=500, seed=3)
    assert noise.p_value > 0.05 and abs(noise.gap) < 0.05


def test_cluster_quality_validates() -> None:
    with pytest.raises(ValueError, match="labels for"):
        cluster_quality(np.eye(3), ["a", "b"])
    with pytest.raises(ValueError, match="zero norm"):
        cluster_quality(np.zeros((3, 2)), ["a", "a", "b"])
    with pytest.raises(ValueError, match="at least 2 labels"):
        cluster_quality(np.eye(3), ["a", "a", "a"])
