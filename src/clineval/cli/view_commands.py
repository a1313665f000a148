"""``clineval view``: serve the local web viewer (the ``view`` extra, imported lazily)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from clineval.cli.common import StoreOpt, err_console, user_errors
from clineval.cli.defaults import DEFAULT_STORE
from clineval.core.errors import UserInputError

TOKEN_ENV = "CLINEVAL_VIEW_TOKEN"
MISSING_EXTRA = "clineval view needs the view extra: pip install 'clineval[view]'"


@user_errors
def view_command(
    store: StoreOpt = DEFAULT_STORE,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8765,
    host: Annotated[str, typer.Option(help="Address to bind; any but loopback needs a token.")] = "127.0.0.1",
    token: Annotated[
        str | None, typer.Option(help=f"Access token required on every request (or env {TOKEN_ENV}).")
    ] = None,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Show no review forms; refuse every change.")
    ] = False,
) -> None:
    """Browse stored runs, cases, comparisons and trends in a local web app."""
    try:
        import uvicorn

        from clineval.view.app import create_app
        from clineval.view.security import is_loopback
    except ImportError:
        err_console.print(MISSING_EXTRA, highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(2) from None
    token = token or os.environ.get(TOKEN_ENV) or None
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host  # [::1]: what to bind is ::1
    if not is_loopback(host) and token is None:
        raise UserInputError(
            f"--host {host} makes the viewer reachable from other machines: it needs a token",
            hint=f"pass --token or set {TOKEN_ENV}, or bind 127.0.0.1",
        )
    app = create_app(store, token=token, read_only=read_only)
    shown = f"[{host}]" if ":" in host else host
    suffix = "/?token=..." if token else "/"
    err_console.print(
        f"clineval view on http://{shown}:{port}{suffix} (Ctrl-C to stop)", highlight=False, markup=False
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")
