"""Console tables that never lose a label: a table when it fits the console, else one block per row.

Rich squeezes a table that is wider than the console by cutting every column, so a task id, a metric name
or a stratum value ends up wrapped into 6-character pieces or dropped to ``…``. Here a table is printed only
when every label fits in full (free-text value columns marked ``shrink`` may be cut with an ellipsis); when
it does not, each row becomes a block: its label on one line, then ``key  value`` lines, so nothing is lost
on an 80-column terminal or in a CI log (rich assumes 80 columns when output is not a terminal).

Data strings are ``rich.text.Text`` (or plain ``str`` taken literally): ``[...]`` in data is never markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

Cell = str | Text
MIN_SHRINK = 8  # a shrinkable column is never cut below this many characters


@dataclass(frozen=True)
class Col:
    """One column. ``label`` columns identify the row: never cut, and they head a stacked block."""

    header: str
    label: bool = False
    shrink: bool = False  # free text (a suite name, metadata) that may be cut with an ellipsis
    dedupe: bool = False  # table form: blank a cell equal to the one above (grouped rows)
    justify: Literal["left", "right"] | None = None  # default: labels left, values right


def as_text(cell: Cell) -> Text:
    return cell if isinstance(cell, Text) else Text(cell)


def _width(cells: Sequence[Text], header: str) -> int:
    return max([len(header), *(c.cell_len for c in cells)])


def build_table(cols: Sequence[Col], rows: Sequence[Sequence[Text]], widths: Sequence[int | None]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    by_column = list(zip(*rows, strict=True)) if rows else [()] * len(cols)
    for col, column_cells, width in zip(cols, by_column, widths, strict=True):
        justify = col.justify or ("left" if col.label else "right")
        if col.label:  # the label's full width is its minimum: rich may never cut it
            full = _width(column_cells, col.header)
            table.add_column(col.header, justify=justify, no_wrap=True, min_width=full)
        else:
            table.add_column(col.header, justify=justify, no_wrap=True, overflow="ellipsis", width=width)
    previous: list[str] = []
    for row in rows:
        shown = [
            Text("") if col.dedupe and i < len(previous) and cell.plain == previous[i] else cell
            for i, (col, cell) in enumerate(zip(cols, row, strict=True))
        ]
        previous = [cell.plain for cell in row]
        table.add_row(*shown)
    return table


def natural_width(console: Console, table: Table) -> int:
    """The table's width with every cell in full (rich's own measure is clamped to the console)."""
    return table.__rich_measure__(console, console.options.update_width(1_000_000)).maximum


def fitted_table(console: Console, cols: Sequence[Col], rows: Sequence[Sequence[Text]]) -> Table | None:
    """The table, with ``shrink`` columns narrowed as needed; None when it cannot fit without cutting
    a label or a value."""
    widths: list[int | None] = [None] * len(cols)
    table = build_table(cols, rows, widths)
    excess = natural_width(console, table) - console.width
    if excess <= 0:
        return table
    for i, col in enumerate(cols):
        if col.shrink and excess > 0:
            full = _width([r[i] for r in rows], col.header)
            cut = min(excess, max(0, full - max(MIN_SHRINK, len(col.header))))
            widths[i], excess = full - cut, excess - cut
    if excess > 0:
        return None
    return build_table(cols, rows, widths)


def print_pairs(
    console: Console, pairs: Sequence[tuple[str, Cell]], *, indent: int = 2, packed: bool = False
) -> None:
    """``key  value`` lines: one a line with the keys aligned, or ``packed`` several a line (a pair is
    never split across lines)."""
    pad = " " * indent
    if not packed:
        key_width = max((len(k) for k, _ in pairs), default=0)
        for key, value in pairs:
            line = Text.assemble(pad, (key.ljust(key_width), "dim"), "  ", as_text(value))
            console.print(line, soft_wrap=True)
        return
    line = Text(pad)
    for key, value in pairs:
        pair = Text.assemble((key, "dim"), " ", as_text(value))
        if line.cell_len > indent and line.cell_len + 3 + pair.cell_len > console.width:
            console.print(line, soft_wrap=True)
            line = Text(pad)
        line += Text("   ") + pair if line.cell_len > indent else pair
    if line.cell_len > indent:
        console.print(line, soft_wrap=True)


def print_block(
    console: Console, label: Cell, pairs: Sequence[tuple[str, Cell]], *, indent: int = 0, packed: bool = False
) -> None:
    """A label line in full, then its pairs indented below it."""
    console.print(Text(" " * indent) + as_text(label), soft_wrap=True)
    print_pairs(console, pairs, indent=indent + 2, packed=packed)


def print_records(
    console: Console,
    cols: Sequence[Col],
    rows: Sequence[Sequence[Cell]],
    *,
    title: Cell | None = None,
    packed: bool = True,
) -> None:
    """Rows as a table when it fits the console, else as stacked blocks (label, then key value pairs).

    Empty value cells are left out of a block; an empty ``title`` prints nothing above the rows.
    """
    cells = [[as_text(c) for c in row] for row in rows]
    if title is not None:
        console.print(as_text(title))
    table = fitted_table(console, cols, cells)
    if table is not None:
        console.print(table)
        console.print()
        return
    indent = 2 if title is not None else 0
    for row in cells:
        labels = [c for col, c in zip(cols, row, strict=True) if col.label and c.plain]
        pairs = [(col.header, c) for col, c in zip(cols, row, strict=True) if not col.label and c.plain]
        print_block(console, Text("  ").join(labels), pairs, indent=indent, packed=packed)
    console.print()
