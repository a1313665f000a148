"""What a query string may hold, declared once and checked by the guard middleware on every request.

A parameter is read the same way by every page (``page`` is always a page number, ``task`` always a task
id), so one table names each one's rule; a name not in it is free text. A value that breaks its rule is a
400 page naming the parameter and why, before any route runs: a number too large for an SQL ``OFFSET``,
a pattern too long for SQLite's ``LIKE`` (50,000 bytes) or a NUL that PostgreSQL refuses never reaches the
database.

- *text* (the default): at most 1,000 characters, no control character (C0, DEL, C1);
- *id* (``task``, ``case``): at most 1,000 characters, any character, NUL included: ids are data, and a
  SQLite store keeps the ids its dataset had (see ``clineval.view.urls``);
- *run id* (``run``, ``a``, ``b``): text of at most 64 characters (the store's column);
- *int*: decimal digits (an optional ``-``), within the rule's range;
- ``label`` is ``scorer:label`` and ``stratum`` ``key=value``; the scorer name and the key are JSON path
  elements, so a double quote, a backslash, ``{``, ``}`` and ``,`` are refused there (a value may hold
  anything).

An empty value means "not given" to every page, so it passes every rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

TEXT_MAX = 1_000
RUN_ID_MAX = 64
MAX_VALUES = 200  # query parameters in one request
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
INTEGER = re.compile(r"-?[0-9]{1,30}")


@dataclass(frozen=True)
class Rule:
    kind: str = "text"  # text | id | int
    max_len: int = TEXT_MAX
    lo: int = 0
    hi: int = 0
    check: Callable[[str], str | None] | None = None  # a further check: why the value is refused, or None

    def problem(self, value: str) -> str | None:
        """Why ``value`` breaks this rule, or None."""
        if len(value) > self.max_len:
            return f"longer than {self.max_len:,} characters ({len(value):,})"
        if self.kind == "int":
            if not INTEGER.fullmatch(value) or not self.lo <= int(value) <= self.hi:
                return f"must be a whole number from {self.lo} to {self.hi}, got {_shown(value)}"
            return None
        if self.kind == "text" and (bad := CONTROL.search(value)):
            return f"holds a control character (U+{ord(bad.group()):04X})"
        return self.check(value) if self.check else None


def _shown(value: str, limit: int = 40) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "...")


# A scorer name or metadata key becomes one element of a JSON path (PostgreSQL: a text[] literal, SQLite:
# '$."key"'), where these characters are syntax: refused rather than mis-parsed by the database.
PATH_SYNTAX = re.compile(r'["\\{},]')


def _path_key(what: str, key: str) -> str | None:
    if not key.strip():
        return f"the {what} is empty"
    if bad := PATH_SYNTAX.search(key):
        return f"the {what} {_shown(key)} holds {bad.group()!r}, which no {what} holds"
    return None


def _scorer_label(value: str) -> str | None:
    if ":" not in value:
        return f"must be scorer:label (e.g. mcq:incorrect), got {_shown(value)}"
    return _path_key("scorer name", value.partition(":")[0])


def _key_value(value: str) -> str | None:
    if "=" not in value:
        return f"must be key=value (e.g. meta_info=step1), got {_shown(value)}"
    return _path_key("metadata key", value.partition("=")[0])


def _run_ids(value: str) -> str | None:
    long = [r for r in value.split(",") if len(r.strip()) > RUN_ID_MAX]
    return f"a run id is at most {RUN_ID_MAX} characters, got {len(long[0])}" if long else None


RUN_ID = Rule(max_len=RUN_ID_MAX)
ID = Rule("id")
RULES: dict[str, Rule] = {
    "run": RUN_ID,
    "a": RUN_ID,
    "b": RUN_ID,
    "runs": Rule(max_len=100 * (RUN_ID_MAX + 1), check=_run_ids),
    "task": ID,
    "case": ID,
    "page": Rule("int", lo=1, hi=1_000_000),
    "after": Rule("int", lo=0, hi=2**63 - 1),
    "seed": Rule("int", lo=0, hi=2**32 - 1),
    "n": Rule("int", lo=1, hi=1_000),
    "label": Rule(check=_scorer_label),
    "stratum": Rule(check=_key_value),
}
DEFAULT = Rule()


def query_problem(items: Iterable[tuple[str, str]]) -> str | None:
    """Why a query string (its decoded name/value pairs) is refused ("parameter 'page': must be ..."), or
    None."""
    for count, (name, value) in enumerate(items, start=1):
        if count > MAX_VALUES:
            return f"more than {MAX_VALUES} query parameters"
        if len(name) > 100 or CONTROL.search(name):
            return f"parameter name {_shown(name)} is not a plain name"
        if value == "":
            continue
        why = RULES.get(name, DEFAULT).problem(value)
        if why is not None:
            return f"parameter {name!r}: {why}"
    return None


def int_param(value: str | None, default: int) -> int:
    """A validated integer parameter (``query_problem`` passed), or ``default`` when absent or empty."""
    return int(value) if value else default
