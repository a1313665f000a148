"""``clineval counterfactual make|analyse``: variants of a dataset, and a published per-variant answer file
analysed with clineval's paired statistics (issue 27, docs/runs/counterfactual.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from clineval.cli.common import console, user_errors
from clineval.core.errors import UserInputError

counterfactual_app = typer.Typer(
    no_args_is_help=True, help="Counterfactual fairness: make variants, analyse per-variant answers."
)


def _split(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


@counterfactual_app.command("make")
@user_errors
def make(
    dataset: Annotated[Path, typer.Argument(help="MedQA / MedMCQA / any JSONL file with a vignette field.")],
    out: Annotated[
        Path, typer.Option("--out", help="The variants, as JSONL (its report: OUT.report.md/.json).")
    ],
    attributes: Annotated[str, typer.Option(help="Comma-separated: sex, race, ses.")] = "sex,race,ses",
    format: Annotated[
        str,
        typer.Option("--format", help="medqa | medmcqa | jsonl (options are rewritten for medqa/medmcqa)."),
    ] = "medqa",
    vignette_field: Annotated[str, typer.Option(help="The vignette's field (jsonl).")] = "question",
    keep_unvaried: Annotated[
        bool, typer.Option(help="Keep the reference of records no attribute could be swapped in.")
    ] = False,
) -> None:
    """Write rule-based variants (ids BASE:VARIANT, metadata group/variant) and the generation report:
    per attribute how many vignettes were swapped, skipped (by exclusion rule) and not applicable (why)."""
    from clineval.counterfactual.generation_report import render_markdown
    from clineval.counterfactual.make import FORMATS, make_variants, read_jsonl, write_jsonl

    if format not in (*FORMATS, "jsonl"):
        raise UserInputError(f"--format {format!r}: use medqa, medmcqa or jsonl")
    if not dataset.is_file():
        raise UserInputError(f"{dataset}: file not found")
    fields = FORMATS.get(format, {"vignette_field": vignette_field, "option_fields": ()})
    try:
        records = read_jsonl(dataset)
        variants, report = make_variants(
            records,
            _split(attributes),
            str(fields["vignette_field"]),
            option_fields=tuple(fields["option_fields"]),
            keep_unvaried=keep_unvaried,
        )
    except (ValueError, OSError, UnicodeDecodeError) as err:
        raise UserInputError(f"{dataset}: {err}") from None
    out.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(out, variants)
    source = {"dataset": str(dataset), "format": format, "attributes": attributes}
    markdown = render_markdown(
        report, title=f"Counterfactual generation report: {dataset.name}", source=source
    )
    out.with_suffix(".report.md").write_text(markdown, encoding="utf-8")
    out.with_suffix(".report.json").write_text(
        json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8"
    )
    console.print(f"{report.n_records} records -> {report.n_variants} records in {out}", highlight=False)
    for name, counts in report.attributes.items():
        console.print(
            f"  {name}: swapped {counts.swapped}, skipped {counts.n_skipped}, "
            f"not applicable {counts.n_not_applicable}",
            highlight=False,
        )
    console.print(f"report: {out.with_suffix('.report.md')}", highlight=False)


@counterfactual_app.command("analyse")
@user_errors
def analyse(
    answers: Annotated[
        Path, typer.Argument(help="Per-variant answers: one row per question (jsonl/csv/tsv).")
    ],
    pairs: Annotated[list[str], typer.Option("--pair", help="a,b (repeat for several pairs).")],
    reference: Annotated[str, typer.Option(help="The unmodified vignette's variant.")] = "reference",
    answer_prefix: Annotated[
        str, typer.Option(help="Answer columns start with this; the rest names the variant.")
    ] = "test_model_answer_",
    out: Annotated[Path | None, typer.Option("--out", help="Write the analysis as JSON here.")] = None,
) -> None:
    """Re-analyse a published fairness study (AMQA-shaped answer files) with clineval's paired statistics."""
    from clineval.counterfactual.importers import import_per_variant_answers, read_answer_file
    from clineval.counterfactual.paired import counterfactual_analysis, outcomes_from_records
    from clineval.report.sections.counterfactual import console_lines

    if not answers.is_file():
        raise UserInputError(f"{answers}: file not found")
    chosen = [_split(p) for p in pairs]
    bad = [p for p, c in zip(pairs, chosen, strict=True) if len(c) != 2]
    if bad:
        raise UserInputError(f"--pair {bad[0]!r}: give two variants, e.g. --pair white,black")
    try:
        records = import_per_variant_answers(read_answer_file(answers), answer_prefix=answer_prefix)
        analysis = counterfactual_analysis(outcomes_from_records(records), chosen, reference)
    except (ValueError, KeyError, OSError, UnicodeDecodeError) as err:
        raise UserInputError(f"{answers}: {err}") from None
    for line in console_lines({answers.stem: analysis}):
        console.print(line, highlight=False, soft_wrap=True)
    if out is not None:
        out.write_text(json.dumps(analysis, indent=1, allow_nan=False) + "\n", encoding="utf-8")
        console.print(f"analysis: {out}", highlight=False)
