"""Lazy re-exports for package ``__init__`` files, so that ``clineval --help`` does not import the world.

A package lists its public names by defining module; a name is imported on first attribute access
(``from clineval.report import write_reports`` imports ``clineval.report.files`` and nothing else) and then
cached on the package. Type checkers read the same names from an ``if TYPE_CHECKING:`` block beside it::

    if TYPE_CHECKING:
        from clineval.report.files import write_reports
    __all__ = ["write_reports"]
    __getattr__, __dir__ = lazy_exports(__name__, {"clineval.report.files": ("write_reports",)})

A name the package used to export from a module that has since moved resolves through
:func:`clineval.core.helpers.moved.moved_name` (a ``DeprecationWarning`` naming the new path).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_exports(
    package: str, by_module: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package`` (``by_module``: module -> names)."""
    owner = {name: module for module, names in by_module.items() for name in names}

    def __getattr__(name: str) -> object:
        module = owner.get(name)
        if module is None:  # a name the package re-exported from a module that has since moved: warns
            from clineval.core.helpers.moved import moved_name

            return moved_name(package, name)
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next access is a plain attribute read
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *owner})

    return __getattr__, __dir__
