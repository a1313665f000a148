"""What every command module of the CLI shares: consoles, the --store option, bad input -> exit 2."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from clineval.cli.defaults import DEFAULT_STORE
from clineval.core.errors import UserInputError

__all__ = ["DEFAULT_STORE", "StoreOpt", "console", "err_console", "user_errors"]

console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])

StoreOpt = Annotated[str, typer.Option("--store", help="SQLAlchemy URL of the results store.", metavar="URL")]


def _error_line(text: str) -> None:
    # escape: a message may hold brackets (`pip install 'clineval[postgresql]'`), which are not markup
    err_console.print(f"[red]error:[/red] {escape(text)}", highlight=False, soft_wrap=True)


def _storage_error(err: Exception) -> str | None:
    """One line for a file or database that refused a write or read, without the data (or None)."""
    from clineval.store.errors import write_failure_reason  # imported on error only (start-up time)

    if isinstance(err, OSError) and (err.strerror or err.filename):
        where = f"{err.filename}: " if err.filename else ""
        return f"{where}{err.strerror or type(err).__name__}"
    reason = write_failure_reason(err)
    return None if reason is None else f"the store failed: {reason}"


def user_errors(func: F) -> F:
    """Bad input, and a store or file that cannot be written, become one line on stderr and exit code 2,
    never a traceback (a SQLAlchemy traceback prints its SQL parameters: case text, model output)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UserInputError as err:
            _error_line(err.render())
            raise typer.Exit(2) from None
        except KeyboardInterrupt as err:
            command = getattr(err, "resume_command", None)
            if command:
                err_console.print(
                    f"interrupted: finished cases are stored; complete the run with: {command}",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
            else:
                err_console.print("interrupted", highlight=False, markup=False)
            raise typer.Exit(getattr(err, "exit_code", 130)) from None  # 143 after SIGTERM (interrupts)
        except Exception as err:
            line = _storage_error(err)
            if line is None:
                raise
            _error_line(line)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]
