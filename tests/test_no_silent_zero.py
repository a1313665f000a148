"""No silent zero: a scorer that cannot score most of a task's cases although the system answered makes
the run degraded (warning with the label counts and the likely cause, exit 3), as a failing system does.
The two cases of issue 22 through the ``clineval`` command: a DDx task whose outputs carry no structured
differential (recall 0.00% on 100/100 ``no_differential``, exit 0 before) and ``ddx`` on an MCQ dataset
(``no_reference`` on 20/20, exit 0 before)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from clineval.analysis.degradation import assess
from clineval.core import CaseResult, Score, SystemOutput
from tests.cli_helpers import clineval, write_small_suite

DDX_CAUSE = (
    "likely cause: outputs carry no structured differential: ask the model for JSON with a `differential` "
    "list (see docs/ddx/ddx_scoring.md)"
)


def _ddx_suite(folder: Path, n: int, structured_every: int = 0) -> Path:
    rows, predictions = [], []
    for i in range(n):
        truth = ["Pneumonia", "Pulmonary embolism"] if i % 2 else ["Acute kidney injury"]
        rows.append({"id": f"c{i}", "vignette": f"Patient {i} with fever and cough.", "ground_truth": truth})
        if structured_every and i % structured_every == 0:
            output: object = {"differential": [{"diagnosis": truth[0]}]}
        else:  # a chat model that did not return JSON: text only
            output = f"The most likely diagnosis is {truth[0].lower()}, but consider others."
        predictions.append({"id": f"c{i}", "output": output})
    (folder / "ddx.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (folder / "p.jsonl").write_text("\n".join(json.dumps(p) for p in predictions) + "\n")
    suite = folder / "ddx.yaml"
    suite.write_text(
        "name: ddx-text-only\ntasks:\n  - id: ddx\n"
        "    dataset: {format: jsonl, path: ddx.jsonl}\n"
        "    system: {type: predictions, path: p.jsonl}\n"
        "    scorers: [ddx]\n"
    )
    return suite


def test_ddx_outputs_without_a_differential_are_degraded(tmp_path: Path) -> None:
    suite = _ddx_suite(tmp_path, 100)
    proc = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    one_line = " ".join(proc.stderr.split())
    assert (
        "warning: task ddx: scorer ddx could not score 100/100 cases (100%): no_differential 100 — "
        + DDX_CAUSE
    ) in one_line
    assert "degraded: run" in one_line and "exit 3" in one_line
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["task_scores"]["ddx"]["recall"] == 0.0
    # the interval says what 100 cases can say (Wilson of 0 in 100), not [0.0, 0.0]
    lo, hi = report["task_scores"]["ddx"]["recall_ci"]
    assert lo == 0.0 and math.isclose(hi, 0.036993, abs_tol=1e-6)
    assert any("no_differential 100" in w and DDX_CAUSE in w for w in report["warnings"])
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "could not score 100/100 cases" in markdown and "structured differential" in markdown
    html = (tmp_path / "out" / "report.html").read_text()
    assert "could not score 100/100 cases" in html
    allowed = clineval(
        "run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", "--allow-degraded", cwd=tmp_path
    )
    assert allowed.returncode == 0 and "could not score 100/100" in " ".join(allowed.stderr.split())


def test_ddx_on_an_mcq_dataset_is_degraded(tmp_path: Path) -> None:
    predictions = [json.dumps({"id": str(i), "output": "A"}) for i in range(20)]
    write_small_suite(tmp_path, predictions=predictions, scorers="[ddx]", n=20)
    proc = clineval("run", "suite.yaml", "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    one_line = " ".join(proc.stderr.split())
    assert (
        "warning: task t: scorer ddx could not score 20/20 cases (100%): no_reference 20 — likely cause: the "
        "dataset has no expected differential (reference.differential): `ddx` scores differential-diagnosis "
        "datasets (see docs/ddx/ddx_scoring.md)"
    ) in one_line


def test_a_few_unscored_cases_are_listed_not_degraded(tmp_path: Path) -> None:
    """10 of 100 outputs without a differential: 10% <= 20%, exit 0, the count still printed."""
    suite = _ddx_suite(tmp_path, 100, structured_every=1)
    (tmp_path / "p.jsonl").write_text(
        "\n".join(
            json.dumps(
                {"id": f"c{i}", "output": "text" if i % 10 == 0 else {"differential": [{"diagnosis": "X"}]}}
            )
            for i in range(100)
        )
        + "\n"
    )
    proc = clineval("run", str(suite), "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "task ddx: failures: scorer ddx 10/100 (no_differential 10)" in " ".join(proc.stderr.split())


def test_unscored_labels_by_hand() -> None:
    """Counted only where the system answered; a failed call is the system's failure, not the scorer's."""

    def case(i: int, label: str, *, failed: bool = False) -> CaseResult:
        output = SystemOutput.failure("http_500", "down") if failed else SystemOutput(text="x")
        value = math.nan if label in ("no_reference", "not_applicable") else 0.0
        return CaseResult(
            task_id="t", case_id=str(i), output=output, scores={"mcq": Score(value=value, label=label)}
        )

    results = [case(i, "unparsed") for i in range(3)] + [case(3, "correct"), case(4, "not_applicable")]
    results += [case(5, "failed", failed=True), case(6, "incorrect")]
    found = assess(results, 0.2)
    rows = {c["component"]: c for c in found["components"]}
    assert rows["scorer mcq"]["failed"] == 3 and rows["scorer mcq"]["total"] == 7
    assert rows["scorer mcq"]["kinds"] == {"unparsed": 3} and rows["scorer mcq"]["unscored"] is True
    assert found["warnings"] == [
        "task t: scorer mcq could not score 3/7 cases (43%): unparsed 3 — likely cause: no answer could be "
        "read from the outputs: ask for the option letter (or a JSON `answer`) and check the prompt"
    ]
    # 3/7 = 42.9%: not degraded at a 50% threshold
    assert assess(results, 0.5)["warnings"] == []
