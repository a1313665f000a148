"""The "Tokens" lines of the headline: per task, the stored ``provenance["usage"]`` as one line each.

``prompt 12,345 · completion 2,345 · 40 of 40 calls reported usage · cost $0.42 (prices.yaml)``; the
judge's own line starts "judge:". Nothing is computed here beyond formatting (see
``clineval.analysis.usage`` for the totals and the cost); a run stored before usage was recorded has none.

A task whose system made no call has no system line: a predictions file (or another replayed system) was
read, not called, so "0 of 1273 calls reported usage" said nothing true. No call = the run's stored
timings count no live call for the task, and no reply reported usage or came from the cache.
"""

from __future__ import annotations

from typing import Any

from clineval.core import RunResult

_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£"}


def fmt_cost(amount: float, currency: str) -> str:
    text = f"{amount:,.2f}" if amount >= 0.01 or amount == 0 else f"{amount:.2g}"
    symbol = _SYMBOLS.get(currency)
    return f"{symbol}{text}" if symbol else f"{text} {currency}"


def _count(entry: dict[str, Any], key: str) -> int:
    value = entry.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_line(entry: dict[str, Any], prices_file: str | None, *, judge: bool = False) -> str:
    """One task's (or its judge's) stored usage entry as a line."""
    calls, reported = _count(entry, "calls"), _count(entry, "calls_with_usage")
    noun = "judge calls" if judge else "calls"
    parts: list[str] = []
    if reported:
        parts += [
            f"prompt {_count(entry, 'prompt_tokens'):,}",
            f"completion {_count(entry, 'completion_tokens'):,}",
        ]
    parts.append(f"{reported} of {calls} {noun} reported usage")
    cached = _count(entry, "cached")
    if cached:
        parts.append(f"{cached} cached {'reply' if cached == 1 else 'replies'} not counted")
    amount, currency = entry.get("cost"), entry.get("currency")
    if isinstance(amount, int | float) and isinstance(currency, str):
        source = f" ({prices_file})" if prices_file else ""
        partial = f" for the {reported} that reported" if reported < calls else ""
        parts.append(f"cost {fmt_cost(float(amount), currency)}{partial}{source}")
    elif prices_file and reported:
        parts.append(f"no price for {entry.get('model') or 'this model'} in {prices_file}")
    return ("judge: " if judge else "") + " · ".join(parts)


def usage_lines(run: RunResult) -> dict[str, list[str]]:
    """``{task_id: [system line, judge line?]}`` from ``provenance["usage"]`` ({} when not stored)."""
    stored = run.info.provenance.get("usage")
    if not isinstance(stored, dict) or not isinstance(stored.get("tasks"), dict):
        return {}
    prices_file = stored.get("prices_file") if isinstance(stored.get("prices_file"), str) else None
    timings = run.info.provenance.get("timings")
    lines: dict[str, list[str]] = {}
    for task_id, entries in stored["tasks"].items():
        if not isinstance(entries, dict) or not isinstance(entries.get("system"), dict):
            continue
        found = []
        if made_calls(entries["system"], timings.get(task_id) if isinstance(timings, dict) else None):
            found.append(usage_line(entries["system"], prices_file))
        if isinstance(entries.get("judge"), dict):
            found.append(usage_line(entries["judge"], prices_file, judge=True))
        if found:
            lines[str(task_id)] = found
    return lines


def made_calls(entry: dict[str, Any], timing: Any) -> bool:
    """Whether a task's system was called (see the module docstring); True when the run stored no
    timings for it (nothing says it was not)."""
    if _count(entry, "calls_with_usage") or _count(entry, "cached"):
        return True
    return not isinstance(timing, dict) or _count(timing, "calls") > 0
