"""``write_reports``: the four files of ``--out DIR``.

Each file is written beside its final name and renamed into place, so a disk that fills up leaves no
half-written report that looks complete; a folder that cannot be written is one ``UserInputError`` line
naming it (the run itself is stored, and ``clineval report`` writes its reports again).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from clineval.core import GateDecision, RunResult
from clineval.core.errors import UserInputError
from clineval.report.context import EMPTY, ReportContext
from clineval.report.formats.html import render_html
from clineval.report.formats.json_report import report_json_text
from clineval.report.formats.markdown import render_markdown
from clineval.report.formats.results_jsonl import write_results_jsonl


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8", newline="\n")


def _replace_atomically(path: Path, write: Callable[[Path], object]) -> None:
    partial = path.with_name(f".{path.name}.partial")
    try:
        write(partial)
        os.replace(partial, path)
    finally:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)


def write_reports(
    run: RunResult, out_dir: Path, gates: Sequence[GateDecision] = (), *, context: ReportContext = EMPTY
) -> list[Path]:
    """Write ``report.json``, ``report.md``, ``report.html`` and ``results.jsonl`` into ``out_dir``.

    ``gates``: the run's stored release-gate decisions (``clineval.releases.gate.gate_decisions``), shown in a
    "Release gate" section of each report (none: no section, ``"gates": []`` in ``report.json``).
    """
    out_dir = Path(out_dir)
    written: list[Path] = []
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, render in (
            ("report.json", report_json_text),
            ("report.md", render_markdown),
            ("report.html", render_html),
        ):
            text = render(run, gates, context=context)
            path = out_dir / name
            _replace_atomically(path, partial(_write_text, text=text))
            written.append(path)
        path = out_dir / "results.jsonl"
        _replace_atomically(path, lambda p: write_results_jsonl(run.results, p))
        written.append(path)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        short = run.run_id[:12]
        raise UserInputError(
            f"cannot write the reports to {out_dir}: {reason}",
            hint=f"run {short} is stored: once the folder is writable, `clineval report {short} --out DIR`",
        ) from None
    return written
