"""Turning a pydantic ValidationError into one ``suite.yaml:LINE: ...`` line.

A misspelt required key (``datset:``) is reported as the missing key with the near-miss that is there
(``tasks[0]: missing required key 'dataset' — found 'datset' (line 5): did you mean 'dataset'?``), and an
unknown key lists the keys its own mapping allows. Those come from the model that raised the error (found in
the traceback: a component validates its own options model, which the suite builder never sees), walked
down the error's path, so nested options list their own keys, never an empty list.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from clineval.config.yaml_lines import Loc, LocatedYaml
from clineval.core.errors import SuiteError


def render_loc(loc: Sequence[str | int]) -> str:
    """``("tasks", 0, "dataset")`` -> ``tasks[0].dataset``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _raising_model(err: ValidationError) -> type[BaseModel] | None:
    """The model whose validation raised ``err``: the innermost ``model_validate``/``__init__`` frame."""
    found: type[BaseModel] | None = None
    tb = err.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        name = frame.f_code.co_name
        candidate = (
            frame.f_locals.get("cls")
            if name.startswith("model_validate")
            else type(frame.f_locals.get("self"))
            if name == "__init__"
            else None
        )
        if (
            isinstance(candidate, type)
            and issubclass(candidate, BaseModel)
            and candidate.__name__ == err.title
        ):
            found = candidate
        tb = tb.tb_next
    return found


def _members(tp: Any) -> list[Any]:
    """A type's alternatives (``X | None`` -> [X]); a plain type is its own only one."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        return [a for a in typing.get_args(tp) if a is not type(None)]
    return [tp]


def _step(tp: Any, part: str | int) -> Any:
    """The type found at ``part`` inside a value of type ``tp`` (None: unknown)."""
    for member in _members(tp):
        origin, args = typing.get_origin(member), typing.get_args(member)
        if isinstance(member, type) and issubclass(member, BaseModel) and isinstance(part, str):
            for name, info in member.model_fields.items():
                if part in (name, info.alias):
                    return info.annotation
        elif origin is list and isinstance(part, int) and args:
            return args[0]
        elif origin is dict and isinstance(part, str) and len(args) == 2:
            return args[1]
    return None


def allowed_keys(err: ValidationError, loc: Sequence[str | int]) -> list[str]:
    """The keys allowed in the mapping at ``loc`` (relative to the model that raised ``err``), or []."""
    tp: Any = _raising_model(err)
    for part in loc:
        if tp is None:
            return []
        tp = _step(tp, part)
    for member in _members(tp):
        if isinstance(member, type) and issubclass(member, BaseModel):
            return sorted(info.alias or name for name, info in member.model_fields.items())
    return []


def _real_parts(loc: Sequence[str | int], doc: LocatedYaml, prefix: Loc) -> Loc:
    """The error's path without pydantic's tags: validators ("function-after[...]") and union members
    ("str", "dict[str,...]"). A name is a real part when the file has that key there, or when it is
    the last part and the file has a mapping there (a missing key)."""
    parts: list[str | int] = []
    for i, part in enumerate(loc):
        if isinstance(part, str):
            here = doc.value_at((*prefix, *parts))
            is_key = isinstance(here, dict) and (part in here or i == len(loc) - 1)
            if part.startswith("function-") or not is_key:
                continue
        parts.append(part)
    return tuple(parts)


def _missing(doc: LocatedYaml, parent: Loc, key: str, allowed: list[str]) -> SuiteError:
    """A missing required key, with the misspelling of it that the mapping holds, if there is one."""
    where = render_loc(parent)
    problem = f"{where + ': ' if where else ''}missing required key {key!r}"
    present = doc.value_at(parent)
    others = (
        [str(k) for k in present if str(k) not in allowed and k != key] if isinstance(present, dict) else []
    )
    close = difflib.get_close_matches(key, others, n=1, cutoff=0.6)
    if not close:
        return SuiteError(problem, path=doc.path, line=doc.line_of(parent))
    line = doc.line_of((*parent, close[0]), key=True)
    hint = f"found {close[0]!r} (line {line}): did you mean {key!r}?"
    return SuiteError(problem, path=doc.path, line=line, hint=hint)


def suite_error(
    err: ValidationError, doc: LocatedYaml, prefix: Loc = (), known_keys: Iterable[str] = ()
) -> SuiteError:
    """The first validation problem, located in the suite file."""
    first = err.errors()[0]
    rel = _real_parts(first["loc"], doc, prefix)
    loc: Loc = (*prefix, *rel)
    if first["type"] in ("extra_forbidden", "missing"):
        key = str(first["loc"][-1])
        allowed = allowed_keys(err, rel[:-1]) or sorted(known_keys)
        if first["type"] == "missing":
            return _missing(doc, loc[:-1], key, allowed)
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = (
            f"did you mean {close[0]!r}?"
            if close
            else (f"allowed keys: {', '.join(allowed)}" if allowed else None)
        )
        return SuiteError(
            f"unknown key {key!r} in {render_loc(loc[:-1]) or 'the top level'}",
            path=doc.path,
            line=doc.line_of(loc, key=True),
            hint=hint,
        )
    while loc and loc not in doc.lines and len(loc) > len(prefix):
        loc = loc[:-1]
    where = render_loc(loc) or "(top level)"
    return SuiteError(f"{where}: {first['msg']}", path=doc.path, line=doc.line_of(loc))
