"""clineval.store: runs and per-case results in SQLAlchemy (SQLite file by default, PostgreSQL by URL)."""

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
