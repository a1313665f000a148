"""inspect_ai both ways: a real ``inspect_ai.eval`` against the scripted OpenAI-compatible server, scored by
inspect's ``choice()`` and by ``clineval_scorer("mcq")``, then imported with ``clineval import inspect``.

The round trip on six MedQA questions (gold B D B D B D), one scripted completion each:

==  ================  ================  ====================  ===========================================
q   completion        inspect choice()  clineval mcq          why they differ
==  ================  ================  ====================  ===========================================
q0  ANSWER: B         C                 correct
q1  ANSWER: A,B       I (invalid fmt)   unparsed (0)          both 0; clineval says why (two letters)
q2  I am not sure.    I (invalid fmt)   unparsed (0)          both 0; clineval says why (no answer)
q3  The answer is D   I (invalid fmt)   correct               inspect reads only ``ANSWER: X``
q4  ANSWER: C         I                 incorrect
q5  ANSWER: D         C                 correct
==  ================  ================  ====================  ===========================================

inspect accuracy 2/6, clineval 3/6; equal (2/5) on the five samples where the rules agree (all but q3).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from clineval.core.case import Case, CaseInput, Reference
from clineval.core.output import SystemOutput
from clineval.core.protocols import ScoringContext
from clineval.integrations.inspect import ImportRequest, clineval_scorer, import_logs
from clineval.mcq.scorer import MCQScorer
from clineval.releases.gate import compare_runs
from clineval.testing.openai_server import running_server
from clineval.testing.script import Reply, Rule, Script
from tests.helpers import shared_data

pytest.importorskip("inspect_ai")  # the dev extra installs it: never skipped in CI

N = 6
COMPLETIONS = ["ANSWER: B", "ANSWER: A,B", "I am not sure.", "The answer is D", "ANSWER: C", "ANSWER: D"]
INSPECT = ["C", "I", "I", "I", "I", "C"]
FREE_TEXT_ANSWER = 3  # "The answer is D": the one sample whose scoring rules differ
CLINEVAL = ["correct", "unparsed", "unparsed", "correct", "incorrect", "correct"]


def _rows() -> list[dict[str, Any]]:
    path = shared_data("medqa_usmle_4opt", "phrases_no_exclude_test.jsonl")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(next(handle)) for _ in range(N)]


def _eval(rows: list[dict[str, Any]], completions: list[str], log_dir: Path) -> Path:
    """A real inspect eval of the rows, answered by the scripted server; the path of its .eval log."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    samples = [
        Sample(
            id=f"q{i}", input=r["question"], choices=[r["options"][k] for k in "ABCD"], target=r["answer_idx"]
        )
        for i, r in enumerate(rows)
    ]
    rules = [
        Rule(match=r["question"][:80], replies=[Reply(content=c)])
        for r, c in zip(rows, completions, strict=True)
    ]
    task = Task(
        dataset=MemoryDataset(samples),
        solver=multiple_choice(),
        scorer=[choice(), clineval_scorer("mcq")],
        name="medqa_mini",
    )
    with running_server(Script(latency_s=0.0, rules=rules)) as server:
        logs = inspect_eval(
            task,
            model="openai/scripted-model",
            model_base_url=server.base_url,
            model_args={"responses_api": False},  # the test server speaks /v1/chat/completions
            log_dir=str(log_dir),
            display="none",
        )
    assert logs[0].status == "success", logs[0].error
    return Path(logs[0].location)


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    rows = _rows()
    assert [r["answer_idx"] for r in rows] == list("BDBDBD")
    return rows


@pytest.fixture(scope="module")
def logs(rows: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("inspect")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "dummy-key")  # inspect wants a key; the server ignores it
        return {
            "mixed": _eval(rows, COMPLETIONS, folder / "mixed"),
            "perfect": _eval(rows, [f"ANSWER: {r['answer_idx']}" for r in rows], folder / "perfect"),
        }


def test_clineval_scorer_in_inspect_equals_clineval_mcq(logs: dict[str, Path]) -> None:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(logs["mixed"]))
    assert log.samples is not None and len(log.samples) == N
    mcq = MCQScorer()
    for sample, inspect_value, label in zip(log.samples, INSPECT, CLINEVAL, strict=True):
        assert sample.output.completion == COMPLETIONS[int(str(sample.id)[1:])]
        assert sample.scores is not None
        assert sample.scores["choice"].value == inspect_value
        ours = sample.scores["clineval_mcq"]
        assert ours.metadata is not None and ours.metadata["label"] == label
        # clineval's own mcq scorer on the same output and the same case
        options = dict(zip("ABCD", sample.choices or [], strict=False))
        case = Case(
            id=str(sample.id),
            input=CaseInput(question=str(sample.input), options=options),
            reference=Reference(answer=str(sample.target)),
        )
        direct = mcq(ScoringContext(case=case, output=SystemOutput(text=sample.output.completion)))
        assert (direct.value, direct.label) == (ours.value, ours.metadata["label"])
    assert log.results is not None
    metrics = {s.name: s.metrics["accuracy"].value for s in log.results.scores}
    assert metrics == {"choice": pytest.approx(2 / 6), "clineval_mcq": pytest.approx(3 / 6)}


def test_import_round_trip_and_compare(logs: dict[str, Path], tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    mixed = import_logs(ImportRequest(logs=[logs["mixed"]], store_url=store, work_dir=tmp_path / "imports"))
    assert mixed.info.status == "finished"
    scores = mixed.aggregates["medqa_mini"].scores
    assert scores["accuracy"] == pytest.approx(3 / 6) and scores["unparsed_rate"] == pytest.approx(2 / 6)
    by_id = {r.case_id: r for r in mixed.results}
    assert [by_id[f"q{i}"].scores["mcq"].label for i in range(N)] == CLINEVAL
    # the stored run keeps what inspect saw: output, usage, inspect's own score, and the log's provenance
    assert by_id["q3"].output.text == "The answer is D"
    assert by_id["q0"].output.usage is not None and by_id["q0"].output.usage.completion_tokens == 2
    summary = mixed.info.provenance["inspect"]["logs"][0]
    assert summary["model"] == "openai/scripted-model" and len(summary["sha256"]) == 64
    assert summary["inspect_scores"]["choice"]["accuracy"] == pytest.approx(2 / 6)
    # where the rules agree (all but q3, a free-text answer only clineval reads) the accuracies are equal
    agree = [i for i in range(N) if i != FREE_TEXT_ANSWER]
    inspect_acc = sum(INSPECT[i] == "C" for i in agree) / len(agree)
    clineval_acc = sum(by_id[f"q{i}"].scores["mcq"].value for i in agree) / len(agree)
    assert inspect_acc == clineval_acc == pytest.approx(2 / 5)
    perfect = import_logs(
        ImportRequest(logs=[logs["perfect"]], store_url=store, work_dir=tmp_path / "imports")
    )
    assert perfect.aggregates["medqa_mini"].scores["accuracy"] == 1.0
    comparison = compare_runs(store, mixed.run_id, perfect.run_id)
    task = comparison.tasks[0]
    assert task.n == N and {c.case_id for c in task.changes} == {"q1", "q2", "q4"}


def _cli() -> typer.Typer:
    from clineval.cli.commands import import_commands

    app = typer.Typer()

    @app.callback()
    def _root() -> None: ...

    import_commands.register(app)
    return app


def test_cli_import_and_bad_logs(
    logs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    work = ["--work-dir", str(tmp_path / "imports"), "--store", store]
    result = CliRunner().invoke(_cli(), ["import", "inspect", str(logs["mixed"]), *work, "--suite-name", "x"])
    assert result.exit_code == 0, result.output
    assert "accuracy 0.500" in result.output and "inspect choice 0.333" in result.output
    for bad in [tmp_path / "missing.eval", tmp_path / "corrupt.eval"]:
        if bad.name.startswith("corrupt"):
            bad.write_bytes(b"not a zip")
        result = CliRunner().invoke(_cli(), ["import", "inspect", str(bad), *work])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # the extra not installed
    result = CliRunner().invoke(_cli(), ["import", "inspect", str(logs["mixed"]), *work])
    assert result.exit_code == 2
    assert "needs the inspect extra: pip install 'clineval[inspect]'" in result.output
