"""`--help` of every command is readable at 80 columns (issue 23): nothing cut with "…" (rich's table cut
`--degraded-thre…` and `sqlite:///.cline…`), every option name whole, each default on a line of its own,
no line wider than the terminal, on a terminal and piped to a file alike."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from clineval.cli.help_format import first_sentence, help_lines
from clineval.cli.main import app
from tests.preflight_helpers import run_cli


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(get_command(app)))


def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "clineval" for p, _ in COMMANDS])
def test_help_at_80_columns_cuts_nothing(path: tuple[str, ...], command: Any) -> None:
    text = _help(path)
    lines = text.splitlines()
    assert "…" not in text
    assert max(map(len, lines)) <= 80, [line for line in lines if len(line) > 80]
    for param in command.params:
        for name in (*param.opts, *param.secondary_opts):
            if name.startswith("-"):
                assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (path, name)
    defaults = [line.strip() for line in lines if "[default: " in line]
    assert all(line.startswith("[default: ") and line.endswith("]") for line in defaults), defaults
    listed = text.split("\nCommands:\n", 1)[1] if "\nCommands:\n" in text else ""
    assert "..." not in listed  # each command's whole first sentence, not cut at the width


def test_the_issues_examples_are_whole() -> None:
    text = _help(("run",))
    assert "  --degraded-threshold F " in text and "[default: sqlite:///.clineval/clineval.db]" in text
    defaults = [line.strip() for line in text.splitlines() if line.strip().startswith("[default: 0.2")]
    assert defaults == ["[default: 0.2; 0.0<=x<=1.0]"]  # on its own line, under the help of the option


@pytest.mark.parametrize("command", ["run", "eval"])
def test_help_piped_to_a_file_is_80_columns_too(tmp_path: Path, command: str) -> None:
    done, _ = run_cli(command, "--help", cwd=tmp_path)  # no terminal, no COLUMNS: click's 80
    assert done.returncode == 0 and "…" not in done.stdout
    assert max(map(len, done.stdout.splitlines())) <= 80
    assert "--max-outage S" in done.stdout and "--no-preflight" in done.stdout


def test_help_lines_keep_words_and_urls_whole() -> None:
    text = "Log to this tracking URI (e.g. sqlite:///mlflow.db; --degraded-threshold).  [default: a-b; x>=1]"
    assert help_lines(text, 20) == [
        "Log to this tracking",
        "URI (e.g.",
        "sqlite:///mlflow.db;",
        "--degraded-threshold).",
        "[default: a-b; x>=1]",
    ]
    assert help_lines("A table:\n\n\b\n  a   1\n  bb  2", 40) == ["A table:", "  a   1", "  bb  2"]
    assert first_sentence("Snapshot a run. More.\n\nDetails.") == "Snapshot a run."
