"""``--store`` with a folder that does not exist: an error naming it, unless ``--create-store``.

A mistyped ``--store sqlite:////nonexistent/dir/x.db`` silently created the whole directory tree and a new
empty store in it, and the run went there. Commands that write a store (``run``, ``eval``, ``demo``,
``import``, ``db upgrade``) now check first: a SQLite file whose folder is missing is refused with one line
naming the folder, unless ``--create-store`` asks for it. clineval's own ``.clineval/`` folder (where the
default store lives) is always created. Read commands already refuse a store that does not exist.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clineval.core.errors import UserInputError

OWN_FOLDER = ".clineval"  # the default store's folder: created as needed

CreateStoreOpt = Annotated[
    bool,
    typer.Option(
        "--create-store", help="Create the --store file's folder if it does not exist (else: an error)."
    ),
]


def missing_folder(store: str) -> Path | None:
    """The folder of a SQLite ``store`` that does not exist (None: it exists, is clineval's own, or the
    store is not a SQLite file)."""
    from clineval.store.engine import sqlite_path  # SQLAlchemy: only when a command runs

    try:
        path = sqlite_path(store)
    except Exception:  # not a URL: ResultStore says so, in its own words
        return None
    if path is None:
        return None
    folder = path.expanduser().parent
    if folder.exists() or (folder.name == OWN_FOLDER and folder.parent.exists()):
        return None
    return folder


def check_store_folder(store: str, create_store: bool) -> None:
    """A UserInputError when the folder of ``store`` does not exist and ``create_store`` is off."""
    folder = None if create_store else missing_folder(store)
    if folder is not None:
        raise UserInputError(
            f"--store {store}: the folder {folder} does not exist (nothing was run or stored)",
            hint="check the path, or pass --create-store to create it",
        )
