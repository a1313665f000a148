"""Case summaries: each result reduced, when it is written, to what a run's totals are computed from.

A summary (``clineval.core.helpers.columns``) keeps the scores' values and labels, the breakdown keys metrics
read, the stratification metadata and, under ``x``, each component's outcome (``degradation``), the kind
and first line of a failed system call's message (``m``, when it failed) and the token usage (``usage``).
:class:`RunTotals` folds summaries read back from the store into the columns, the failure counts (with a
few messages each) and the usage totals, holding ~100 bytes per case instead of the ~9 kB of a
``CaseResult``. The plan of what to keep is fixed by the suite (``SummaryPlan.fingerprint``): a run
whose stored summaries were made under another plan is summarized again from its full results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_json

from clineval.analysis.degradation import (
    MAX_MESSAGES,
    ComponentFailures,
    FailureCounter,
    Outcome,
    failure_message,
    outcomes,
)
from clineval.analysis.usage import UsageTotals, case_usages
from clineval.core.helpers.columns import SUMMARY_VERSION, ColumnsBuilder, TaskColumns, summarize_scores
from clineval.core.output import Usage
from clineval.core.protocols import Scorer
from clineval.core.score import CaseResult
from clineval.core.specs import SuiteSpec, canonical_json, sha256_text
from clineval.metrics.aggregate import breakdown_plan

ALWAYS_KEPT = ("split",)  # held-out isolation (analysis.heldout) reads it on every run


@dataclass(frozen=True)
class SummaryPlan:
    """Per task: the breakdown keys kept per scorer (None: all) and the metadata keys kept."""

    breakdown: Mapping[str, Mapping[str, tuple[str, ...] | None]]
    metadata: Mapping[str, tuple[str, ...]]

    @classmethod
    def for_suite(cls, spec: SuiteSpec, scorers: Mapping[str, Sequence[Scorer]]) -> SummaryPlan:
        breakdown = {t.id: breakdown_plan(scorers.get(t.id, ())) for t in spec.tasks}
        metadata = {t.id: tuple(dict.fromkeys((*t.stratify, *ALWAYS_KEPT))) for t in spec.tasks}
        return cls(breakdown, metadata)

    @property
    def fingerprint(self) -> str:
        """Stored with the run: summaries made under another plan are not trusted."""
        plan = {"v": SUMMARY_VERSION, "breakdown": self.breakdown, "metadata": self.metadata}
        return sha256_text(canonical_json(plan))[:16]

    def summarize(self, result: CaseResult) -> dict[str, Any]:
        task = result.task_id
        summary = summarize_scores(result, self.breakdown.get(task, {}), self.metadata.get(task, ()))
        own, judged = case_usages(result)
        summary["x"] = {
            "o": [[o.component, o.calls, list(o.failures)] for o in outcomes(result)],
            "u": [_usage(own[0]), own[1]],
            "j": [[_usage(u), cached] for u, cached in judged],
        }
        message = failure_message(result)
        if message is not None:
            summary["x"]["m"] = list(message)
        return summary

    def encode(self, result: CaseResult) -> str:
        """The summary as JSON text (the store's ``case_results.summary``). pydantic-core's encoder, ~5x
        ``json.dumps`` on a summary (20 -> 4 us), writes what ``json.dumps(separators=(",", ":"),
        ensure_ascii=False, default=str)`` wrote, NaN included, to the same values when read back (a float
        may be spelled ``1e-7`` for ``1e-07``; a ``None`` dict key becomes ``"None"``, not ``"null"``)."""
        return to_json(self.summarize(result), inf_nan_mode="constants", fallback=str).decode("utf-8")


def _usage(usage: Usage | None) -> list[int | None] | None:
    if usage is None:
        return None
    return [usage.prompt_tokens, usage.completion_tokens, usage.total_tokens]


def _from_list(found: Any) -> Usage | None:
    if not isinstance(found, list | tuple) or len(found) != 3:
        return None
    return Usage.model_construct(prompt_tokens=found[0], completion_tokens=found[1], total_tokens=found[2])


OutcomesKey = tuple[tuple[str, int, tuple[str, ...]], ...]
UsageKey = tuple[tuple[Any, bool], tuple[tuple[Any, bool], ...]]


def _frozen(found: Any) -> Any:
    return tuple(found) if isinstance(found, list) else found


@dataclass
class RunTotals:
    """Everything a run's aggregates, degradation and usage are computed from, folded from summaries.

    Outcomes and usages repeat from case to case (an MCQ run has one or two distinct ones): each distinct
    one is counted, and folded into the totals once, with its count."""

    plan: SummaryPlan
    n_cases: int = 0
    _builder: ColumnsBuilder | None = None
    _outcomes: dict[str, Counter[OutcomesKey]] = field(default_factory=dict)
    _usages: dict[str, Counter[UsageKey]] = field(default_factory=dict)
    _messages: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)  # (task, kind) -> lines

    def __post_init__(self) -> None:
        self._builder = ColumnsBuilder(self.plan.metadata, folds=(self._fold,))

    def _fold(self, task_id: str, case_id: str, extensions: Mapping[str, Any]) -> None:
        self.n_cases += 1
        outcomes = tuple((c, calls, tuple(kinds)) for c, calls, kinds in extensions.get("o", ()))
        own = extensions.get("u") or [None, False]
        judged = tuple((_frozen(u), bool(cached)) for u, cached in extensions.get("j", ()))
        if task_id not in self._outcomes:
            self._outcomes[task_id], self._usages[task_id] = Counter(), Counter()
        self._outcomes[task_id][outcomes] += 1
        self._usages[task_id][((_frozen(own[0]), bool(own[1])), judged)] += 1
        message = extensions.get("m")
        if isinstance(message, list) and len(message) == 2:
            found = self._messages.setdefault((task_id, str(message[0])), Counter())
            if message[1] in found or len(found) < MAX_MESSAGES:  # distinct messages held: bounded
                found[str(message[1])] += 1

    def add(self, task_id: str, case_id: str, summary: Mapping[str, Any]) -> None:
        if self._builder is None:
            raise RuntimeError("the columns were built already")
        self._builder.add(task_id, case_id, summary)

    def add_results(self, results: Iterable[CaseResult]) -> None:
        for result in results:
            self.add(result.task_id, result.case_id, self.plan.summarize(result))

    def columns(self) -> dict[str, TaskColumns]:
        """The columns of every task (tasks without a stored case get empty columns). Once: the builder's
        lists are handed over, not copied."""
        if self._builder is None:
            raise RuntimeError("the columns were built already")
        built = self._builder.build()
        for task_id in self.plan.metadata:
            built.setdefault(task_id, self._builder.empty(task_id))
        self._builder = None
        return built

    def components(self) -> list[ComponentFailures]:
        """Failures per (task, component), in the order components were first seen."""
        counter = FailureCounter()
        for task_id, counts in self._outcomes.items():
            for key, times in counts.items():
                counter.add(task_id, (Outcome(c, calls, kinds) for c, calls, kinds in key), times=times)
        for (task_id, kind), messages in self._messages.items():
            for message, times in messages.items():
                counter.add_message(task_id, kind, message, times=times)
        return counter.components()

    def usage_totals(self) -> dict[str, tuple[UsageTotals, UsageTotals]]:
        """``task -> (system, judge)`` token usage totals."""
        totals: dict[str, tuple[UsageTotals, UsageTotals]] = {}
        for task_id, counts in self._usages.items():
            system, judge = totals[task_id] = (UsageTotals(), UsageTotals())
            for ((own, cached), judged), times in counts.items():
                system.add(_from_list(own), cached=cached, times=times)
                for usage, judge_cached in judged:
                    judge.add(_from_list(usage), cached=judge_cached, times=times)
        return totals
