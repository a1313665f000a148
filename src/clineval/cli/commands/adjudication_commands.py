"""``clineval adjudications RUN_ID --out FILE.jsonl [--vocabulary FILE.yaml]``: export a run's clinician
reviews (``clineval.view.review.adjudication``), and its DDx equivalence corrections as a vocabulary file that
``load_vocabulary(extra_synonyms=...)`` and a suite's ``extra_synonyms`` accept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from clineval.cli.common import DEFAULT_STORE, StoreOpt, console, user_errors


@user_errors
def adjudications_command(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    out: Annotated[Path, typer.Option("--out", help="JSONL file: one stored review per line.")],
    vocabulary: Annotated[
        Path | None,
        typer.Option("--vocabulary", help="Also write the DDx equivalence corrections as a vocabulary YAML."),
    ] = None,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """Export a run's adjudications (append-only history, oldest first)."""
    import yaml

    from clineval.store import ResultStore
    from clineval.view.review.adjudication import export_records, history, vocabulary_document

    with ResultStore(store, must_exist=True) as opened:
        full = opened.resolve_run_id(run_id)
        records = export_records(opened, full)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        console.print(f"{len(records)} adjudications of run {full} -> {out}", highlight=False)
        if vocabulary is not None:
            doc = vocabulary_document(history(opened, full), version=f"adjudications-{full[:12]}")
            vocabulary.parent.mkdir(parents=True, exist_ok=True)
            vocabulary.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
            n_groups, n_distinct = len(doc.get("groups", [])), len(doc.get("distinct", []))
            console.print(f"{n_groups} synonym groups, {n_distinct} distinct pairs -> {vocabulary}")


def register(app: typer.Typer) -> None:
    """Add ``clineval adjudications`` to the CLI."""
    app.command("adjudications")(adjudications_command)
