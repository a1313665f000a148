"""The suites the metric robustness audit is tested on: one per built-in task type (docs/runs/audit.md's table
is ``scripts/audit_table.py`` over the same suites, samples and seeds).

Every suite names the task's real dataset and scorers (the catalogue's, or the example suite's); its system
is never called by the audit, so a placeholder URL serves.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOWHERE = "http://127.0.0.1:9/predict"  # the audit never calls a suite's system


@dataclass(frozen=True)
class AuditSuite:
    name: str  # the task type
    text: str  # the suite: {data} the shared data folder, {root} the repository, {judge} the judge URL
    limit: int | None
    seed: int = 1

    def write(self, folder: Path, data: Path, judge: str = "http://127.0.0.1:9/v1") -> Path:
        path = folder / f"{self.name}.yaml"
        text = self.text.replace("{judge}", judge)
        text = text.replace("../data/golden_set", "{root}/data/golden_set")  # the example's own path
        path.write_text(text.replace("{data}", str(data)).replace("{root}", str(ROOT)))
        return path


MCQ = """name: audit-mcq
tasks:
  - id: medqa
    dataset: {format: medqa, path: "{data}/medqa_usmle_4opt/phrases_no_exclude_test.jsonl"}
    system: {type: http, url: "NOWHERE"}
    scorers: [mcq]
  - id: medmcqa
    dataset: {format: medmcqa, path: "{data}/medmcqa_dev/dev.json"}
    system: {type: http, url: "NOWHERE"}
    scorers: [mcq]
  - id: pubmedqa
    dataset: {format: pubmedqa, path: "{data}/pubmedqa/ori_pqal.json",
              ground_truth: "{data}/pubmedqa/test_ground_truth.json"}
    system: {type: http, url: "NOWHERE"}
    scorers: [mcq]
"""

DDX = """name: audit-ddx
tasks:
  - id: ddxplus
    dataset: {format: ddxplus, path: "{data}/ddxplus/test_patients_sample_first1000.csv",
              evidences: "{data}/ddxplus/release_evidences.json",
              conditions: "{data}/ddxplus/release_conditions.json"}
    system: {type: http, url: "NOWHERE"}
    scorers: [ddx]
  - id: open-xddx
    dataset: {format: open_xddx, path: "{data}/open_xddx/open_xddx.jsonl"}
    system: {type: http, url: "NOWHERE"}
    scorers: [ddx]
  - id: lddx
    dataset: {format: open_xddx, path: "{data}/open_xddx/open_xddx.jsonl"}
    system: {type: lddx, path: "{data}/lddx/results_v8_6"}
    scorers: [ddx, process]
"""

HEALTHBENCH = """name: audit-healthbench
tasks:
  - id: healthbench
    dataset: {format: healthbench, path: "{data}/healthbench/healthbench_oss_eval_first30.jsonl"}
    system: {type: http, url: "NOWHERE"}
    judge: {base_url: "{judge}", model: grader}
    scorers: [rubric]
"""

SUITES = (
    AuditSuite("mcq", MCQ.replace("NOWHERE", NOWHERE), limit=200),
    AuditSuite("ddx", DDX.replace("NOWHERE", NOWHERE), limit=40),
    AuditSuite("four_tier", (ROOT / "examples" / "four_tier_cds.yaml").read_text(), limit=None),
    AuditSuite("healthbench", HEALTHBENCH.replace("NOWHERE", NOWHERE), limit=None),
)
BY_NAME = {s.name: s for s in SUITES}
