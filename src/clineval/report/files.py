"""``write_reports``: the four files of ``--out DIR``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from clineval.core import GateDecision, RunResult
from clineval.report.html import render_html
from clineval.report.json_report import report_json_text
from clineval.report.markdown import render_markdown
from clineval.report.results_jsonl import write_results_jsonl


def write_reports(run: RunResult, out_dir: Path, gates: Sequence[GateDecision] = ()) -> list[Path]:
    """Write ``report.json``, ``report.md``, ``report.html`` and ``results.jsonl`` into ``out_dir``.

    ``gates``: the run's stored release-gate decisions (``clineval.releases.gate_decisions``), shown in a
    "Release gate" section of each report (none: no section, ``"gates": []`` in ``report.json``).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (
        ("report.json", report_json_text(run, gates)),
        ("report.md", render_markdown(run, gates)),
        ("report.html", render_html(run, gates)),
    ):
        path = out_dir / name
        path.write_text(text, encoding="utf-8", newline="\n")
        written.append(path)
    written.append(write_results_jsonl(run.results, out_dir / "results.jsonl"))
    return written
