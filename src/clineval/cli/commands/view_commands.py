"""``clineval view``: serve the local web viewer (the ``view`` extra, imported lazily)."""

from __future__ import annotations

import errno
import os
import socket
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
    sock = bind_port(host, port)  # before the URL is printed: a busy port is one line, exit 2
    port = sock.getsockname()[1]  # --port 0: the one the system chose
    shown = f"[{host}]" if ":" in host else host
    suffix = "/?token=..." if token else "/"
    err_console.print(
        f"clineval view on http://{shown}:{port}{suffix} (Ctrl-C to stop)", highlight=False, markup=False
    )
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    server.run(sockets=[sock])


def bind_port(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; a port in use (or an address that cannot be bound) is a
    UserInputError. Before, uvicorn found it after the URL was printed: a traceback-like Errno 98 line and
    exit 3, the code of a degraded run."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    except socket.gaierror as err:
        raise UserInputError(f"--host {host} cannot be resolved ({err.strerror})") from None
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a restart may reuse it
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise UserInputError(
                f"port {port} on {host} is in use (another clineval view?)",
                hint="stop it, or pass --port N (--port 0: any free port)",
            ) from None
        raise UserInputError(f"cannot listen on {host}:{port} ({err.strerror})") from None
    sock.set_inheritable(True)
    return sock
