"""Runs over the synthetic golden set whose recommendations are adherent except where told, so that only
guideline adherence moves (for the baseline, gate, report and pipeline tests)."""

from __future__ import annotations

import json
from pathlib import Path

from clineval.runs import run as api

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = (
    ROOT / "data" / "golden_set" / "golden_set_v2.jsonl"
)  # its references are adherent to the packaged rules
ROWS = [json.loads(line) for line in GOLDEN.read_text().splitlines()]


def golden_suite(folder: Path, name: str, wrong: set[str], *, split: str = "all") -> Path:
    """A suite replaying the reference actions for every case, except cases whose condition (or id) is in
    ``wrong``: those get only an unrelated action and no escalation (tier 1 ``schema`` passes everywhere)."""
    lines = []
    for row in ROWS:
        ref = row["reference"]
        bad = row["metadata"]["condition"] in wrong or row["id"] in wrong
        actions = ["Review in clinic"] + ([] if bad else ref["expected_actions"])
        output = {
            "recommended_actions": [{"action": a, "evidence_refs": []} for a in actions],
            # escalation texts name actions too ("activate the cath lab"): a wrong report gets none
            "when_to_escalate": [] if bad else ref["escalation_reasons"],
        }
        lines.append(json.dumps({"id": row["id"], "output": output}))
    (folder / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    suite = folder / f"{name}.yaml"
    suite.write_text(
        f"name: golden-{name}\n"
        "tasks:\n"
        "  - id: golden\n"
        f"    dataset: {{format: golden_set, path: {GOLDEN}, split: {split}}}\n"
        f"    system: {{type: predictions, path: {name}.jsonl}}\n"
        "    scorers: [schema, guideline_adherence]\n"
        "    stratify: [condition]\n"
    )
    return suite


def run_golden(folder: Path, url: str, name: str, wrong: set[str], *, split: str = "all") -> str:
    suite = golden_suite(folder, name, wrong, split=split)
    return api.run_suite(api.RunRequest(suite_path=suite, store_url=url, cache_path=None)).run_id
