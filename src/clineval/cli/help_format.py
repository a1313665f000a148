"""``--help`` readable at 80 columns: every option name whole, its default on a line of its own.

Typer's rich help lays the options out as a table whose columns share the width, so at 80 columns it cut
option names and defaults with "…" (``--degraded-thre…``, ``sqlite:///.cline…``; issue 23). The app uses
click's plain help instead (``rich_markup_mode=None``): a definition list that puts an option name longer
than its column on a line of its own and wraps the help under it. :class:`HelpFormatter` then puts the
bracketed ``[default: …; x>=1]`` on its own line, never breaks a word or a URL, and :class:`HelpGroup`
lists each command with the whole first sentence of its help (click cut it at the width with "...").
A paragraph starting with ``\\b`` keeps its line breaks (click's convention: tables in a help text).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from typer._click.formatting import HelpFormatter as _BaseFormatter
else:
    _BaseFormatter = typer.Context.formatter_class  # click's formatter (typer vendors click)

# what click/typer append to an option's help: "  [default: X; x>=1]", "[required]", "[env var: V]", a range
_EXTRA = re.compile(r"(?:\A|\s+)(?P<extra>\[(?:default: |required|env var: |[-\d.]*<=?x|x[<>])[^\[\]]*\])\Z")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def help_lines(text: str, width: int) -> list[str]:
    """An option's or command's help as lines of at most ``width`` characters (a longer word is kept
    whole), its bracketed default/range/required on a line of its own."""
    match = _EXTRA.search(text)
    body, extra = (text[: match.start()], match.group("extra")) if match else (text, "")
    lines: list[str] = []
    for paragraph in _PARAGRAPH.split(body):
        if paragraph.lstrip(" ").startswith("\b"):  # click's "keep these lines as they are"
            lines.extend(paragraph.split("\n")[1:])
        elif paragraph.strip():
            lines.extend(_wrap(paragraph, width))
    if extra:
        lines.extend(_wrap(extra, width))
    return lines


def _wrap(text: str, width: int) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), width, break_long_words=False, break_on_hyphens=False)


class HelpFormatter(_BaseFormatter):
    """Click's formatter with :func:`help_lines` for the definition lists (options, commands)."""

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first_col = min(max((len(term) for term, _ in rows), default=0), col_max) + col_spacing
        indent = " " * self.current_indent
        text_width = max(self.width - first_col - self.current_indent, 20)
        for term, text in rows:
            lines = help_lines(text, text_width)
            if len(term) <= first_col - col_spacing and lines:
                self.write(f"{indent}{term:<{first_col}}{lines[0]}\n")
                lines = lines[1:]
            else:
                self.write(f"{indent}{term}\n")
            for line in lines:
                self.write(f"{indent}{' ' * first_col}{line}\n")


class HelpContext(typer.Context):
    formatter_class = HelpFormatter


def first_sentence(text: str) -> str:
    """The first sentence of a help text's first paragraph (what a command list shows)."""
    paragraph = " ".join(text.split("\n\n", 1)[0].split())
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0]


def _plain_help(commands: Iterable[Any]) -> None:
    """Every command below: :class:`HelpContext`, and a short help that is a whole first sentence."""
    for command in commands:
        command.context_class = HelpContext
        if not command.short_help and command.help:
            command.short_help = first_sentence(command.help)
        _plain_help(getattr(command, "commands", {}).values())


class HelpGroup(TyperGroup):
    """The ``clineval`` group: its help and every sub-command's through :class:`HelpFormatter`."""

    context_class = HelpContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_help(self.commands.values())
