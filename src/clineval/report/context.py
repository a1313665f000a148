"""What a report can show beyond the stored run, given by its caller: the report layer imports only
``clineval.core`` (tests/test_architecture.py), so the edge layers hand in what they built.

- ``scorers``: each task's scorers as built (``api.scorers_for(run.info.suite)``); their declared ``tier``
  and metrics give the four-tier scorecard (``report.tiers``). Duck-typed: ``name``, ``tier``, ``metrics``.
- ``load_dataset``: ``(format, options, base folder) -> loaded dataset`` (``DATASETS.get(format)(options,
  base)``); used to read back the inputs (question, options) of the sample cases (``report.case_inputs``).

An empty context (the default) gives the report without a scorecard and without questions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DatasetLoader = Callable[[str, Mapping[str, Any], Path], Any]


@dataclass(frozen=True)
class ReportContext:
    scorers: Mapping[str, Sequence[object]] = field(default_factory=dict)
    load_dataset: DatasetLoader | None = None


EMPTY = ReportContext()
