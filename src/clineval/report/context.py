"""What a report can show beyond the stored run, given by its caller: the report layer imports only
``clineval.core`` (tests/test_architecture.py), so the edge layers hand in what they built.

- ``scorers``: each task's scorers as built (``api.scorers_for(run.info.suite)``); their declared ``tier``
  and metrics give the four-tier scorecard (``report.tiers``). Duck-typed: ``name``, ``tier``, ``metrics``.
- ``load_dataset``: ``(format, options, base folder) -> loaded dataset`` (``DATASETS.get(format)(options,
  base)``); used to read back the inputs (question, options) of the sample cases (``report.case_inputs``).

- ``load_results``: ``(task_id, case_id) keys -> CaseResult`` of a stored run (``ResultStore.results_for``),
  so a run with columns has its sample cases read alone, not found by reading every result.

An empty context (the default) gives the report without a scorecard and without questions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DatasetLoader = Callable[[str, Mapping[str, Any], Path], Any]


ResultsLoader = Callable[[Iterable[tuple[str, str]]], Mapping[tuple[str, str], Any]]


@dataclass(frozen=True)
class ReportContext:
    scorers: Mapping[str, Sequence[object]] = field(default_factory=dict)
    load_dataset: DatasetLoader | None = None
    load_results: ResultsLoader | None = None


EMPTY = ReportContext()
