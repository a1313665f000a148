"""What every command module of the CLI shares: consoles, the --store option, bad input -> exit 2."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from clineval.api import DEFAULT_STORE
from clineval.core.errors import UserInputError

__all__ = ["DEFAULT_STORE", "StoreOpt", "console", "err_console", "user_errors"]

console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])

StoreOpt = Annotated[str, typer.Option("--store", help="SQLAlchemy URL of the results store.")]


def user_errors(func: F) -> F:
    """Bad input becomes one line on stderr and exit code 2, never a traceback."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except UserInputError as err:
            err_console.print(f"[red]error:[/red] {err.render()}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except KeyboardInterrupt:
            err_console.print("interrupted: finished cases are stored; complete the run with --resume RUN_ID")
            raise typer.Exit(130) from None

    return wrapper  # type: ignore[return-value]
