"""``clineval view``: a local web app to browse stored runs, cases, comparisons and trends.

Needs the ``view`` extra (Starlette, uvicorn); ``create_app`` is imported lazily so that importing this
package costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["create_app"]


def create_app(store_url: str, *, token: str | None = None, read_only: bool = False) -> Starlette:
    """See :func:`clineval.view.app.create_app`."""
    from clineval.view.app import create_app as build

    return build(store_url, token=token, read_only=read_only)
