"""Suite files: parsing with line numbers, validation, and building through the registries.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.config.build import BuiltSuite, BuiltTask, load_suite

__all__ = ["BuiltSuite", "BuiltTask", "load_suite"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.config.build": ("BuiltSuite", "BuiltTask", "load_suite"),
    },
)
