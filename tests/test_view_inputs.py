"""The viewer's case inputs of a JSONL dataset are read from its file when shown (issue 26): the same inputs
as the dataset held whole, none once the file changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from clineval.core import ComponentSpec, SuiteSpec, TaskSpec
from clineval.datasets.medqa import load_medqa
from clineval.view.queries_inputs import FileInputs, _load, matching_ids


def test_file_inputs_are_the_dataset_inputs(tmp_path: Path) -> None:
    rows = [
        {"question": f"Which drug {i}?", "answer": "x", "options": {"A": "x"}, "answer_idx": "A"}
        for i in range(30)
    ]
    data = tmp_path / "q.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    loaded = load_medqa({"path": "q.jsonl"}, tmp_path)
    whole = {case.id: case.input for case in loaded.cases}
    digest = loaded.content_hash
    suite = SuiteSpec(
        name="s",
        source=str(tmp_path / "suite.yaml"),
        tasks=[
            TaskSpec(
                id="t",
                dataset=ComponentSpec(type="medqa", args={"path": "q.jsonl"}, content_hash=digest),
                system=ComponentSpec(type="predictions", args={"path": "p.jsonl"}),
                scorers=[ComponentSpec(type="mcq")],
            )
        ],
    )
    inputs = _load(suite, "t").inputs
    assert isinstance(inputs, FileInputs)
    assert dict(inputs.items()) == whole and {k: inputs[k] for k in whole} == whole
    assert matching_ids(_load(suite, "t"), "DRUG 7?") == ("7",)
    stat = data.stat()
    os.utime(data, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # touched: maybe not what was asked
    assert inputs.get("3") is None and dict(inputs.items()) == {}
