"""``--out DIR`` checked before a run starts, not after it.

The reports are written once every case has run, so a folder that cannot take them (a file of that name, a
path under a file, a folder without write permission) was found only at the end: the run was stored but its
reports were lost. Now the folder is created and a file written in it (then removed) before anything is
loaded or run: a problem is one line, exit code 2, no run started and none stored.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from clineval.core.errors import UserInputError

HINT = "name a folder clineval can create and write (nothing was run)"


def check_out_dir(out: Path | None, option: str = "--out") -> None:
    """Create ``out`` (with its parents) and prove a file can be written in it; a UserInputError if not."""
    if out is None:
        return
    if out.exists() and not out.is_dir():
        raise UserInputError(f"{option} {out} is a file, not a folder", hint=HINT)
    try:
        out.mkdir(parents=True, exist_ok=True)
        handle, probe = tempfile.mkstemp(prefix=".clineval-write-check-", dir=out)
        os.close(handle)
        os.unlink(probe)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise UserInputError(f"{option} {out} cannot be written ({reason})", hint=HINT) from None
