"""A command that fails before its run starts leaves nothing behind, and names what the user typed.

``run`` and ``eval`` create ``--out`` before anything is loaded (``cli.out_dir``), and ``eval`` writes the
suite it generated there. When the command then fails before its run is stored (a bad option, a missing
data file, a judge that is the model under test), :func:`guarded_out` removes what it wrote: the generated
suite file, and the folder when the command created it and it is empty again. Once the run has started
(``OutGuard.start``, the ``on_start`` of ``api.run_suite``) nothing is removed: the run is stored and its
suite file is what ``--resume`` completes it with.

``eval`` errors found in the suite it generated named that file and a YAML key the user never wrote
(``hbout/eval-d445465e743d.yaml:21: the judge uses the system's own model``): the guard words them as the
user's command instead (``guarded_out(..., command=...)``; ``eval`` checks its own options first, so this
is the net for what it does not foresee).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from clineval.cli.out_dir import check_out_dir
from clineval.core.errors import UserInputError


class OutGuard:
    """What a command wrote under ``--out`` before its run started, to undo if it fails before then."""

    def __init__(self, out: Path | None) -> None:
        self.out = out
        self.created = _first_missing(out)  # the outermost folder check_out_dir will create, if any
        self.before = set(out.iterdir()) if out is not None and out.is_dir() else set()
        self.suite: Path | None = None
        self.started = False

    def start(self, run_id: str) -> None:
        """The run is stored: from here on, everything written stays."""
        self.started = True

    def generated(self, path: Path) -> Path:
        """``path`` is the suite this command generated (its errors are worded as the command's)."""
        self.suite = path
        return path

    def undo(self) -> None:
        suite = self.suite
        # a suite file that was there before is not ours to remove
        if (
            suite is not None
            and self.out is not None
            and suite.parent == self.out
            and suite not in self.before
        ):
            suite.unlink(missing_ok=True)
        if self.out is None or self.created is None:
            return
        folder = self.out
        while True:  # the folders this command created, innermost first, as long as they are empty
            with contextlib.suppress(OSError):
                folder.rmdir()
            if folder == self.created or folder.parent == folder:
                return
            folder = folder.parent

    def reword(self, err: UserInputError, command: str) -> UserInputError:
        """An error located in the generated suite, as an error of ``command`` (no file, no line)."""
        if self.suite is None or err.path is None or Path(err.path).resolve() != self.suite.resolve():
            return err
        hint = (err.hint + "; " if err.hint else "") + "--print-suite shows the suite these options make"
        return UserInputError(f"{command}: {err.problem}", hint=hint)


def _first_missing(out: Path | None) -> Path | None:
    if out is None or out.exists():
        return None
    missing = out
    while not missing.parent.exists() and missing.parent != missing:
        missing = missing.parent
    return missing


@contextlib.contextmanager
def guarded_out(out: Path | None, option: str = "--out", *, command: str = "") -> Iterator[OutGuard]:
    """``check_out_dir(out)``, then the block; if the block fails before ``guard.start``, what the command
    wrote under ``out`` is removed again, and an error in the suite it generated is worded as an error of
    ``command``."""
    guard = OutGuard(out)
    check_out_dir(out, option)
    try:
        yield guard
    except UserInputError as err:
        if not guard.started:
            guard.undo()
        reworded = guard.reword(err, command) if command else err
        if reworded is err:
            raise
        raise reworded from None
    except BaseException:
        if not guard.started:
            guard.undo()
        raise


F = TypeVar("F", bound=Callable[..., Any])


def removes_created_out(func: F) -> F:
    """For a command with an ``out`` option: when it fails, the ``--out`` folders it created are removed
    again while they are empty (a failed ``clineval run`` left an empty report folder behind)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        guard = OutGuard(kwargs.get("out"))
        try:
            return func(*args, **kwargs)
        except BaseException:
            guard.undo()  # only empty folders it created: reports or a stored run's files stay
            raise

    return wrapper  # type: ignore[return-value]
