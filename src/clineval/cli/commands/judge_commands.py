"""``clineval judge qualify`` and ``clineval judge list``: qualify a task's LLM judge against clinicians'
labels (``clineval.runs.qualify``; docs/judging/judge_qualification.md) and list the stored qualifications.

Exit codes of ``qualify``: 0 qualified, 1 not qualified, 2 bad input (one line: a labels file error with
FILE:LINE, labels without variance so that kappa is undefined, an unknown task, a live system without
``--from-run``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from clineval.cli.common import DEFAULT_STORE, StoreOpt, console, user_errors
from clineval.report.layout import Col, fitted_table, print_pairs

if TYPE_CHECKING:
    from clineval.judging.qualification import Qualification
    from clineval.runs.qualify import QualifyOutcome

judge_app = typer.Typer(
    no_args_is_help=True, help="Qualify an LLM judge against clinicians; list qualifications."
)


def _num(x: object, digits: int = 3) -> str:
    return f"{x:.{digits}f}" if isinstance(x, int | float) else "-"


def _interval(pair: object) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]" if isinstance(pair, list | tuple) and len(pair) == 2 else "none"


def table(result: Qualification) -> list[str]:
    """The qualification table (Markdown): one row per dimension / criterion group."""
    from clineval.judging.qualification import as_dict

    head = (
        "| group | n | kappa [95%] | bal. F1 | bias | flip rate | within-item var. | order change"
        " | clinicians / judge ceiling | verdict |"
    )
    lines = [head, "|" + " --- |" * 10]
    for group in as_dict(result)["groups"]:
        fig = group["figures"]
        agreement, stability, order, ceiling = (
            fig["agreement"],
            fig["stability"],
            fig["order"],
            fig["ceiling"],
        )
        kappa = agreement["kappa"]
        f1 = agreement.get("balanced_f1")
        ceil = "-" if ceiling is None else f"{_num(ceiling.get('clinicians'))} / {_num(ceiling.get('judge'))}"
        verdict = "qualified" if group["qualified"] else "NOT: " + "; ".join(group["reasons"])
        lines.append(
            f"| {group['group']} | {fig['compared']}/{fig['labelled']} | {_num(kappa['kappa'])}"
            f" {_interval(kappa['interval'])} | {_num(f1['value']) if f1 else '-'}"
            f" | {_num(agreement['bias']['value'], 2)} | {_num(stability['flip_rate'])}"
            f" | {_num(stability['within_item_variance'])} | {_num(order['share'] if order else None)}"
            f" | {ceil} | {verdict} |"
        )
    return lines


def _write(outcome: QualifyOutcome, out: Path) -> None:
    from clineval.judging.qualification import as_dict

    out.mkdir(parents=True, exist_ok=True)
    doc = {"record": outcome.record.as_dict(), "qualification": as_dict(outcome.result)}
    (out / "qualification.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n")
    rec = outcome.record
    md = [
        f"# Judge qualification {rec.qualification_id}",
        "",
        f"- judge: {outcome.identity.describe()}",
        f"- task {rec.task_id} of {rec.suite}; labels {rec.labels_ref} ({rec.labels_source},"
        f" {rec.n_labelled} items, {rec.reviewers} reviewer(s), sha256 {rec.labels_hash[:12]})",
        f"- samples K = {rec.samples} (majority of {rec.vote_samples} as a run takes), seed {rec.seed}",
        f"- verdict: {'QUALIFIED' if rec.qualified else 'NOT QUALIFIED'}",
        "",
        *table(outcome.result),
        "",
        *(f"- {r}" for r in rec.reasons),
    ]
    (out / "qualification.md").write_text("\n".join(md) + "\n")


@judge_app.command("qualify")
@user_errors
def qualify_command(
    suite: Annotated[Path, typer.Argument(help="The suite file whose task's judge is qualified.")],
    task: Annotated[str, typer.Option("--task", help="The task id (its judge, prompt and settings).")],
    labels: Annotated[
        Path | None, typer.Option("--labels", help="Clinicians' labels, JSON Lines (grade / met / same).")
    ] = None,
    from_run: Annotated[
        str | None,
        typer.Option("--from-run", help="Use a stored run's outputs and its clinician adjudications."),
    ] = None,
    samples: Annotated[int, typer.Option("--samples", help="K: samples per item (>= 2).")] = 3,
    min_kappa: Annotated[float, typer.Option("--min-kappa", help="Kappa point estimate at least.")] = 0.6,
    min_kappa_lower: Annotated[
        float, typer.Option("--min-kappa-lower", help="Lower end of kappa's 95% interval at least.")
    ] = 0.4,
    max_flip: Annotated[
        float, typer.Option("--max-flip", help="Items whose K samples differ, at most.")
    ] = 0.1,
    max_order: Annotated[
        float, typer.Option("--max-order", help="Items whose grade changes with the order shown, at most.")
    ] = 0.1,
    seed: Annotated[int, typer.Option("--seed", help="Permutation and bootstrap seed.")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write qualification.json and qualification.md here.")
    ] = None,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """Qualify the task's judge: agreement with clinicians, stability, order sensitivity. Exit 0 qualified,
    1 not qualified, 2 bad input."""
    from clineval.core.errors import UserInputError
    from clineval.judging.qualification import Thresholds
    from clineval.runs.qualify import QualifyRequest, qualify_judge

    if labels is not None and from_run is None and not labels.exists():
        raise UserInputError("no such labels file", path=labels)
    if labels is not None and from_run is not None:
        # the clinicians labelled the stored run's outputs: use them, with the file's labels
        raise UserInputError("give --labels FILE or --from-run RUN, not both")
    try:
        thresholds = Thresholds(
            min_kappa=min_kappa,
            min_kappa_lower=min_kappa_lower,
            max_flip_rate=max_flip,
            max_order_change=max_order,
        )
    except ValueError as err:
        raise UserInputError(str(err)) from None
    request = QualifyRequest(
        suite_path=suite,
        task_id=task,
        labels_path=labels,
        from_run=from_run,
        samples=samples,
        thresholds=thresholds,
        seed=seed,
        store_url=store,
    )
    outcome = qualify_judge(request)
    rec = outcome.record
    console.print(f"judge: {outcome.identity.describe()}", highlight=False, soft_wrap=True)
    for row in table(outcome.result):
        console.print(row, highlight=False, markup=False, soft_wrap=True)
    for note in outcome.notes:
        console.print(f"note: {note}", highlight=False)
    verdict = "QUALIFIED" if rec.qualified else "NOT QUALIFIED: " + "; ".join(outcome.result.reasons)
    console.print(f"{rec.qualification_id}: {verdict}", highlight=False, markup=False, soft_wrap=True)
    if out is not None:
        _write(outcome, out)
    raise typer.Exit(outcome.result.exit_code)


@judge_app.command("list")
@user_errors
def list_command(
    model: Annotated[str | None, typer.Option("--model", help="Only this judge model.")] = None,
    prompt: Annotated[str | None, typer.Option("--prompt", help="Only this judge prompt.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON record per line.")] = False,
    store: StoreOpt = DEFAULT_STORE,
) -> None:
    """The stored judge qualifications, newest first."""
    from clineval.store import ResultStore
    from clineval.store.qualifications import list_qualifications

    with ResultStore(store, must_exist=True) as opened:
        records = list_qualifications(opened, model=model, prompt=prompt)
    if as_json:
        for rec in records:
            console.print(
                json.dumps(rec.as_dict(), default=str), highlight=False, markup=False, soft_wrap=True
            )
        return
    if not records:
        console.print("no judge qualification stored", highlight=False)
        return
    _print_records(records)


_LIST_COLUMNS = (
    Col("id", label=True),
    Col("date", justify="left"),
    Col("model", justify="left", shrink=True),
    Col("prompt", justify="left"),
    Col("settings", justify="left"),
    Col("labels", justify="left"),
    Col("n"),
    Col("groups passed"),
    Col("verdict", justify="left"),
    Col("lowest kappa"),
)


def _record_cells(rec: Any) -> list[str]:
    kappas = [
        ((g.get("figures") or {}).get("agreement") or {}).get("kappa", {}).get("kappa") for g in rec.figures
    ]
    lowest = min((k for k in kappas if isinstance(k, int | float)), default=None)
    passed = sum(1 for g in rec.figures if g.get("qualified"))
    return [
        rec.qualification_id,
        f"{rec.created_at:%Y-%m-%d %H:%M}",
        rec.judge_model,
        f"{rec.prompt}@{rec.prompt_hash[:8]}",
        rec.settings_hash[:8],
        rec.labels_hash[:8],
        str(rec.n_labelled),
        f"{passed}/{len(rec.figures)}",
        "qualified" if rec.qualified else "NOT qualified",
        _num(lowest),
    ]


def _print_records(records: Sequence[Any]) -> None:
    """A table when every cell fits the console (as ``clineval runs``), else one block per record."""
    rows = [_record_cells(rec) for rec in records]
    table = fitted_table(console, _LIST_COLUMNS, [[Text(c) for c in row] for row in rows])
    if table is not None:
        console.print(table)
        return
    for row in rows:
        console.print(Text.assemble("  ", (row[0], "bold"), "  ", row[8]), soft_wrap=True)
        shown = [*range(1, 8), 9]
        print_pairs(console, [(_LIST_COLUMNS[i].header, row[i]) for i in shown], indent=4)


def register(app: typer.Typer) -> None:
    """Add ``clineval judge qualify|list`` to the CLI."""
    app.add_typer(judge_app, name="judge")
