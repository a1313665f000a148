"""What process metrics read from one transcript turn: its stated differential and keyword counts.

A turn's *structured differential* is an ordered ``{diagnosis: [evidence, ...]}`` mapping:

1. the turn's own ``structured_data`` extra field when the system adapter recorded one (LDDx keeps the
   dict its parser read from each response; ``None`` there means "the system parsed nothing" and is
   respected, so results can reproduce the system's own numbers);
2. otherwise the first JSON object in the text that is either ``{diagnosis: [evidence...]}`` (every
   value a list) or ``{"DIFFERENTIAL_DIAGNOSIS": [{"Diagnosis": name, "Reasoning": ...}, ...]}``
   (any key containing "diagnosis" names the item; ``evidence``/``reasoning`` give its evidence);
3. failing that, ``"...diagnosis...": "name"`` pairs of malformed JSON (no evidence), or, under a
   "differential diagnosis" heading, numbered lines ``1. Name - rest`` (the rest is one evidence item).

Evidence counts: a list counts its items, a non-empty string counts 1, anything else 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from clineval.core.output import TranscriptTurn

Differential = dict[str, list[Any]]

_JSON = json.JSONDecoder()
_BULLET = re.compile(r"^\s*(?:\d+\s*[.)\-:]\s*|[-–•]\s*)")
_MARKUP = re.compile(r"[*_`#]+")
_SPACES = re.compile(r"\s+")
_NAMED = re.compile(r'"[^"\n]*diagnos[^"\n]*"\s*:\s*"([^"\n]+)"', re.IGNORECASE)
_HEADING = re.compile(r"differential[ _]diagnos", re.IGNORECASE)
_NUMBERED = re.compile(
    r"^\s*\d+[.)]\s*\**(?P<name>[^*\n\[:]+?)\**\s*(?:-|–|:)\s*(?P<rest>\S.*)$", re.MULTILINE
)


def normalize_diagnosis(name: str) -> str:
    """Identity of a diagnosis name: numbering, bullets, markdown and case removed, spaces collapsed."""
    cleaned = _MARKUP.sub("", _BULLET.sub("", name.strip()))
    cleaned = cleaned.strip(" \t\"'.:;-").lower()
    return _SPACES.sub(" ", cleaned)


def evidence_count(value: object) -> int:
    if isinstance(value, list):
        return len(value)
    if isinstance(value, str):
        return 1 if value.strip() else 0
    return 0


def _as_list(value: object) -> list[Any]:
    if isinstance(value, list):
        return value
    return [value] if isinstance(value, str) and value.strip() else []


def _from_items(items: list[Any]) -> Differential:
    found: Differential = {}
    for item in items:
        if not isinstance(item, Mapping):
            continue
        name = next((v for k, v in item.items() if "diagnos" in str(k).lower() and isinstance(v, str)), None)
        if not name:
            continue
        evidence = next((v for k, v in item.items() if str(k).lower() in ("evidence", "reasoning")), None)
        found[name] = _as_list(evidence)
    return found


def _as_differential(obj: Mapping[str, Any]) -> Differential | None:
    for key, value in obj.items():
        listed = isinstance(value, list) and value and all(isinstance(i, Mapping) for i in value)
        if "diagnos" in str(key).lower() and listed:
            return _from_items(value) or None
    if obj and all(isinstance(v, list) for v in obj.values()):
        return {str(k): list(v) for k, v in obj.items()}
    return None


def _fallback(text: str) -> Differential | None:
    """Malformed JSON (``"Diagnosis": "name"`` pairs) or a numbered list under a differential heading."""
    found: Differential = {m[1]: [] for m in _NAMED.finditer(text)}
    if not found and _HEADING.search(text):
        found = {m["name"].strip(): [m["rest"]] for m in _NUMBERED.finditer(text)}
    return found or None


def differential_from_text(text: str) -> Differential | None:
    """The first JSON object of ``text`` that reads as a differential, else ``_fallback`` (docstring)."""
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = _JSON.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            found = _as_differential(obj)
            if found is not None:
                return found
    return _fallback(text)


def turn_differential(turn: TranscriptTurn) -> Differential | None:
    """The turn's structured differential: its ``structured_data`` extra if present, else parsed text."""
    extra = turn.model_extra or {}
    if "structured_data" in extra:
        data = extra["structured_data"]
        return {str(k): _as_list(v) for k, v in data.items()} if isinstance(data, Mapping) and data else None
    return differential_from_text(turn.text)


def count_present(text: str, keywords: Iterable[str]) -> int:
    """How many of ``keywords`` occur in ``text`` (case-insensitive substring; each counted once)."""
    lowered = text.lower()
    return sum(1 for word in keywords if word in lowered)
