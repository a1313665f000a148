"""The audit table of docs/runs/audit.md: every built-in task type's suite (tests/audit_suites.py) audited
with the clineval on the path, written as JSON (one file per task type) for ``--render``.

Usage::

    python scripts/audit_table.py OUT_DIR [DATA_DIR]        # audit every suite, write OUT_DIR/<type>.json
    python scripts/audit_table.py --render AFTER_DIR [BEFORE_DIR]   # Markdown tables, before beside after

For a "before" column, run the first form with an older clineval first on ``PYTHONPATH`` and this
repository's ``src/clineval/audit`` copied into it; a scorer the older clineval does not know, or whose
options it refuses, is dropped from the suite (its metrics show as not existing).
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.audit_suites import SUITES  # noqa: E402


def _known_scorers(path: Path) -> None:
    """Drop the scorers this clineval cannot build (an older one, for the "before" column)."""
    import yaml

    from clineval.scoring.registry import SCORERS

    suite = yaml.safe_load(path.read_text())
    for task in suite["tasks"]:
        kept = []
        for entry in task["scorers"]:
            name, options = (entry, {}) if isinstance(entry, str) else next(iter(entry.items()))
            try:
                SCORERS.get(name)(options or {})
            except Exception:  # unknown scorer or option: not in this version
                continue
            kept.append(entry)
        task["scorers"] = kept
    path.write_text(yaml.safe_dump(suite, sort_keys=False))


def audit_all(out: Path, data: Path) -> None:
    from clineval.audit import audit_suite

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for suite in SUITES:
            path = suite.write(Path(tmp), data)
            _known_scorers(path)
            report = audit_suite(path, limit=suite.limit, seed=suite.seed)
            (out / f"{suite.name}.json").write_text(json.dumps(report.as_dict(), indent=2))
            print(f"{suite.name}: exit {report.exit_code}", file=sys.stderr)


def _fmt(value: float | None) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def _one(metric: dict[str, Any] | None, standin: str) -> str:
    if metric is None:
        return "·"  # the metric did not exist
    row = metric["standins"].get(standin)
    text = _fmt(row["value"] if row else None)
    return f"**{text}**" if standin in metric["inflated_by"] else text


def _pair(before: str | None, after: str) -> str:
    """The after value; ``before → after`` where the before column differs."""
    return after if before is None or before == after else f"{before} → {after}"


def render(after: Path, before: Path | None) -> str:
    lines: list[str] = []
    for suite in SUITES:
        a = json.loads((after / f"{suite.name}.json").read_text())
        b = json.loads((before / f"{suite.name}.json").read_text()) if before else None
        for task in a["tasks"]:
            bt = next((t for t in b["tasks"] if t["task_id"] == task["task_id"]), None) if b else None
            names = list(task["standins"])
            lines += [f"#### {suite.name}: task {task['task_id']} (n = {task['n']})", ""]
            if not task["metrics"]:
                missing = ", ".join(task["not_audited"]) or "none"
                lines += [f"No metric has a value without a judge (not audited: {missing}).", ""]
                continue
            lines.append("| metric | role | baseline | bound | " + " | ".join(names) + " |")
            lines.append("| --- | --- | --- | --- |" + " --- |" * len(names))
            before_metrics = {m["metric"]: m for m in bt["metrics"]} if bt else {}
            for m in task["metrics"]:
                bm = before_metrics.get(m["metric"])
                if b and bm is None:  # a metric added since: its after values alone
                    m = {**m, "metric": f"{m['metric']} (new)"}
                    b_task = None
                else:
                    b_task = bt
                role = m["role"] + (f" t{m['tier']}" if m["tier"] is not None else "")
                role_before = (
                    (bm["role"] + (f" t{bm['tier']}" if bm["tier"] is not None else ""))
                    if b_task and bm
                    else None
                )
                base_before = _fmt(bm["baseline"]) if b_task and bm else None
                cells = [
                    m["metric"],
                    _pair(role_before, role),
                    _pair(base_before, _fmt(m["baseline"])),
                    _fmt(m["baseline_upper"]),
                ]
                absent = set(b_task["not_applicable"]) if b_task else set()  # stand-ins with no variant there
                cells += [
                    _pair(("n/a" if s in absent else _one(bm, s)) if b_task else None, _one(m, s))
                    for s in names
                ]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--render":
        print(render(Path(args[1]), Path(args[2]) if len(args) > 2 else None))
    else:
        audit_all(Path(args[0]), Path(args[1]) if len(args) > 1 else ROOT.parent / "shared" / "data")
