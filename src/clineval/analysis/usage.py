"""Token usage per task and, from a user's price table, its cost. Pure: no I/O beyond reading the table.

Counted per task, for the system under test and (separately) for the equivalence judge:

* ``calls``: live calls, i.e. outputs that were not cache hits (a cache hit made no call; those are
  counted in ``cached`` and their tokens are *not* added: they were spent by an earlier run);
* ``calls_with_usage``: live calls whose endpoint reported a ``usage`` object (a prompt, completion or
  total count). A call that reported nothing adds nothing: no number is ever estimated for it, and the
  report says "n of N calls reported usage";
* ``prompt_tokens = Σ usage.prompt_tokens`` and ``completion_tokens = Σ usage.completion_tokens`` over the
  live calls that reported them;
* ``total_tokens = Σ (usage.total_tokens if reported, else prompt + completion of that call)``.

Cost, only where the price table names the task's model (the system's ``model`` option; the judge's own
``model`` for the judge) and at least one call reported usage::

    cost = prompt_tokens / 1000 × prompt_per_1k + completion_tokens / 1000 × completion_per_1k

in the table's ``currency``. It covers the calls that reported usage, nothing else; a model the table does
not name gets no cost (never a guessed price). The judge's tokens come from
``output.raw["equivalence_judge_usage"]`` (one entry per judge reply, written by
``clineval.runner.judging``).

The price table (``clineval run --prices prices.yaml``) is a YAML mapping from model name to prices::

    gpt-4o-mini: {prompt_per_1k: 0.00015, completion_per_1k: 0.0006, currency: USD}

``currency`` is optional (default ``USD``); prices are non-negative numbers. A bad file raises a one-line
:class:`~clineval.core.errors.DataFileError` naming the file and line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clineval.core import CaseResult, SuiteSpec
from clineval.core.errors import DataFileError
from clineval.core.helpers.safe_yaml import check_yaml, decode_yaml
from clineval.core.output import Usage

JUDGE_USAGE_KEY = "equivalence_judge_usage"
PRICE_KEYS = ("prompt_per_1k", "completion_per_1k", "currency")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


@dataclass
class UsageTotals:
    """Running totals; :meth:`add` one reply at a time."""

    calls: int = 0
    calls_with_usage: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def add(self, usage: Usage | None, *, cached: bool = False, times: int = 1) -> None:
        """One reply (``times``: as many replies with the same usage)."""
        if cached:
            self.cached += times
            return
        self.calls += times
        if usage is None or (
            usage.prompt_tokens is None and usage.completion_tokens is None and usage.total_tokens is None
        ):
            return
        prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
        total = usage.total_tokens if usage.total_tokens is not None else prompt + completion
        self.calls_with_usage += times
        self.prompt_tokens += prompt * times
        self.completion_tokens += completion * times
        self.total_tokens += total * times


@dataclass(frozen=True)
class Price:
    prompt_per_1k: float
    completion_per_1k: float
    currency: str = "USD"


@dataclass(frozen=True)
class PriceTable:
    prices: dict[str, Price] = field(default_factory=dict)
    source: str = ""  # the file's name, shown beside a cost


def cost(totals: UsageTotals, price: Price) -> float:
    """``prompt_tokens / 1000 × prompt_per_1k + completion_tokens / 1000 × completion_per_1k``."""
    return math.fsum(
        (
            totals.prompt_tokens / 1000 * price.prompt_per_1k,
            totals.completion_tokens / 1000 * price.completion_per_1k,
        )
    )


def _judge_usages(result: CaseResult) -> Iterable[tuple[Usage | None, bool]]:
    entries = (result.output.raw or {}).get(JUDGE_USAGE_KEY)
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        counts = {k: entry.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        valid = all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in counts.values())
        yield (Usage(**counts) if valid else None), bool(entry.get("cached"))


def case_usages(result: CaseResult) -> tuple[tuple[Usage | None, bool], list[tuple[Usage | None, bool]]]:
    """``((system usage, cached), [(judge usage, cached)...])`` of one case."""
    return (result.output.usage, result.output.cached), list(_judge_usages(result))


def task_totals(results: Sequence[CaseResult]) -> tuple[UsageTotals, UsageTotals]:
    """``(system, judge)`` totals of one task's results."""
    system, judge = UsageTotals(), UsageTotals()
    for result in results:
        add_case(system, judge, *case_usages(result))
    return system, judge


def add_case(
    system: UsageTotals,
    judge: UsageTotals,
    own: tuple[Usage | None, bool],
    judged: Iterable[tuple[Usage | None, bool]],
) -> None:
    system.add(own[0], cached=own[1])
    for usage, cached in judged:
        judge.add(usage, cached=cached)


def _entry(totals: UsageTotals, model: str | None, prices: PriceTable | None) -> dict[str, Any]:
    price = prices.prices.get(model) if prices is not None and model is not None else None
    priced = price is not None and totals.calls_with_usage > 0
    return {
        **asdict(totals),
        "model": model,
        "cost": cost(totals, price) if priced and price is not None else None,
        "currency": price.currency if priced and price is not None else None,
    }


def _model(args: Mapping[str, Any]) -> str | None:
    model = args.get("model")
    return model if isinstance(model, str) and model else None


def usage_summary(
    spec: SuiteSpec, results: Sequence[CaseResult], prices: PriceTable | None = None
) -> dict[str, Any]:
    """What a run stores in ``provenance["usage"]`` (see :func:`usage_from_totals`)."""
    by_task: dict[str, list[CaseResult]] = {t.id: [] for t in spec.tasks}
    for result in results:
        by_task.setdefault(result.task_id, []).append(result)
    return usage_from_totals(spec, {t.id: task_totals(by_task[t.id]) for t in spec.tasks}, prices)


def usage_from_totals(
    spec: SuiteSpec, totals: Mapping[str, tuple[UsageTotals, UsageTotals]], prices: PriceTable | None = None
) -> dict[str, Any]:
    """``{"prices_file", "tasks": {task: {"system": ..., "judge": ... or None}}}``, each entry the totals
    plus ``model``, ``cost``, ``currency``."""
    tasks: dict[str, Any] = {}
    for task in spec.tasks:
        system, judge = totals.get(task.id) or (UsageTotals(), UsageTotals())
        judge_model = _model(task.judge.args) if task.judge is not None else None
        tasks[task.id] = {
            "system": _entry(system, _model(task.system.args), prices),
            "judge": _entry(judge, judge_model, prices) if judge.calls or judge.cached else None,
        }
    return {"prices_file": prices.source if prices is not None else None, "tasks": tasks}


# -- the price table ---------------------------------------------------------------------------------------
def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _price(model: str, node: yaml.Node, path: Path) -> Price:
    if not isinstance(node, yaml.MappingNode):
        raise DataFileError(
            f"the price of {model!r} is not a mapping",
            path=path,
            line=_line(node),
            hint="write e.g. {prompt_per_1k: 0.5, completion_per_1k: 1.5, currency: USD}",
        )
    values: dict[str, Any] = {}
    for key_node, value_node in node.value:
        key = str(key_node.value)
        if key not in PRICE_KEYS:
            raise DataFileError(
                f"{model}: unknown key {key!r}",
                path=path,
                line=_line(key_node),
                hint=f"use {', '.join(PRICE_KEYS)}",
            )
        value = yaml.SafeLoader(" ").construct_object(value_node)
        if key == "currency":
            if not isinstance(value, str) or not _CURRENCY.match(value):
                raise DataFileError(
                    f"{model}: currency {value!r} is not a 3-letter code",
                    path=path,
                    line=_line(value_node),
                    hint="e.g. USD",
                )
        elif isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
            raise DataFileError(
                f"{model}: {key} {value!r} is not a non-negative number", path=path, line=_line(value_node)
            )
        values[key] = value
    missing = [k for k in PRICE_KEYS[:2] if k not in values]
    if missing:
        raise DataFileError(f"{model}: {' and '.join(missing)} missing", path=path, line=_line(node))
    return Price(
        float(values["prompt_per_1k"]), float(values["completion_per_1k"]), values.get("currency", "USD")
    )


def load_prices(path: Path) -> PriceTable:
    """The price table in ``path`` (see the module docstring); DataFileError naming file:line if bad."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise DataFileError(f"cannot read the price table: {err.strerror or err}", path=path) from None
    text = decode_yaml(data, path=path, error=DataFileError)
    check_yaml(text, path=path, error=DataFileError)  # tags, depth, duplicate keys, aliases: file:line
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:  # check_yaml parsed it already; kept for safety
        raise DataFileError(f"invalid YAML: {err}", path=path) from None
    if not isinstance(root, yaml.MappingNode) or not root.value:
        raise DataFileError(
            "the price table is not a mapping of model names to prices",
            path=path,
            line=_line(root) if root is not None else 1,
            hint="write e.g. gpt-4o-mini: {prompt_per_1k: 0.00015, completion_per_1k: 0.0006, currency: USD}",
        )
    prices: dict[str, Price] = {}
    for key_node, value_node in root.value:
        if not isinstance(key_node, yaml.ScalarNode) or not str(key_node.value).strip():
            raise DataFileError("a model name must be a non-empty string", path=path, line=_line(key_node))
        model = str(key_node.value)
        prices[model] = _price(model, value_node, path)
    return PriceTable(prices=prices, source=path.name)
