"""A run's lifecycle, top-down: request -> plan -> execute -> finalize.

``run_suite(RunRequest(...))`` runs (or resumes) a suite: the request is checked (``runs.request``), the suite
loaded and checked and the run stored (``runs.plan``), every pending case run into the store
(``runs.execute``), then aggregated (``runs.finalize``). ``runs.run`` is the one place deciding between an
unsharded run and a shard of a shared run (``runs.shards``). Provenance (content hashes of data, prompts,
rules and vocabularies) and reading stored runs back are here too. Docs: ``docs/runs/``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.runs.interrupts import RunInterrupted
    from clineval.runs.request import DEFAULT_STORE, ProgressHooks, RunRequest
    from clineval.runs.run import load_run, open_run, run_suite

__all__ = [
    "DEFAULT_STORE",
    "ProgressHooks",
    "RunInterrupted",
    "RunRequest",
    "load_run",
    "open_run",
    "run_suite",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.runs.request": (
            "DEFAULT_STORE",
            "ProgressHooks",
            "RunRequest",
        ),
        "clineval.runs.run": (
            "load_run",
            "open_run",
            "run_suite",
        ),
        "clineval.runs.interrupts": ("RunInterrupted",),
    },
)
