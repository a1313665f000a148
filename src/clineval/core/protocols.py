"""The protocols every pluggable component implements (scorers, metrics, systems, dataset loaders)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from clineval.core.case import Case
from clineval.core.output import SystemOutput
from clineval.core.run import MetricValue
from clineval.core.score import Score
from clineval.core.specs import ComponentSpec


@dataclass(frozen=True, slots=True)
class ScoringContext:
    """Everything a scorer may look at for one case (one object, like pydantic-evals' EvaluatorContext)."""

    case: Case
    output: SystemOutput
    task_id: str = ""
    extras: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Metric(Protocol):
    """Aggregates one scorer's per-case scores into named values (``accuracy``, ``accuracy_ci``...)."""

    name: str

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]: ...


@runtime_checkable
class Scorer(Protocol):
    """A pure function of one ScoringContext. ``metrics`` say how its scores aggregate."""

    name: str
    metrics: Sequence[Metric]

    def __call__(self, ctx: ScoringContext) -> Score: ...


@runtime_checkable
class System(Protocol):
    """The system under test.

    ``call`` returns a SystemOutput or raises ``SystemCallError`` (``RetryableCallError`` if worth
    retrying). The runner owns concurrency, timeouts, retries and the cache; a system only makes one call.
    ``cache_key`` is None for systems whose outputs must not be cached (replayed predictions).
    """

    spec: ComponentSpec
    live: bool

    async def start(self, concurrency: int) -> None: ...

    async def close(self) -> None: ...

    def cache_key(self, case: Case) -> str | None: ...

    async def call(self, case: Case) -> SystemOutput: ...


@dataclass(frozen=True)
class LoadedDataset:
    """Cases of one dataset and the hash of the bytes they came from (``cases`` may be read from the file
    when used: ``clineval.datasets.lazy_cases``)."""

    cases: Sequence[Case]
    content_hash: str
    source: str
