"""clineval.store: runs and per-case results in SQLAlchemy (SQLite file by default, PostgreSQL by URL).

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.store.engine import display_url, make_engine
    from clineval.store.eval_results import EvalResultStore
    from clineval.store.store import DEFAULT_URL, ResultStore, RunSummary
    from clineval.store.writer import ResultWriter

__all__ = [
    "DEFAULT_URL",
    "EvalResultStore",
    "ResultStore",
    "ResultWriter",
    "RunSummary",
    "display_url",
    "make_engine",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.store.engine": ("display_url", "make_engine"),
        "clineval.store.eval_results": ("EvalResultStore",),
        "clineval.store.store": ("DEFAULT_URL", "ResultStore", "RunSummary"),
        "clineval.store.writer": ("ResultWriter",),
    },
)
