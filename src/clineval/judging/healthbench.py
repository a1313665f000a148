"""HealthBench loader (Arora et al. 2025, OpenAI; the JSONL of openai/simple-evals, MIT).

One JSON object per line: ``prompt_id``, ``prompt`` (the conversation: a list of ``{role, content}``,
ending with the user turn the system must answer), ``rubrics`` (``{criterion, points, tags}``; points may
be negative), ``example_tags`` (``theme:...``, ``physician_agreed_category:...``), ``ideal_completions_data``
(ignored) and ``canary``. Case id = ``prompt_id``. ``input.data["conversation"]`` holds the conversation
with ``input.data["send_conversation"] = True``: chat systems send it as messages with their roles, as
openai/simple-evals does (``clineval.systems.prompts``); ``input.question`` holds the same as text
(``role: content`` turns), for text templates, the audit and the judge;
``reference.data`` = ``{rubric: [...], example_tags: [...]}`` (read by the ``rubric`` scorer); metadata:
``theme``, ``physician_agreed_category`` (from the example tags) and ``n_turns``, to stratify by.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clineval.core import Case, CaseInput, LoadedDataset, Reference
from clineval.core.errors import DataFileError
from clineval.datasets._io import require, resolve
from clineval.datasets.cases import PathOptions, jsonl_dataset

ROLES = ("system", "developer", "user", "assistant")
TAG_METADATA = ("theme", "physician_agreed_category")


def _conversation(value: list[Any], path: Path, line: int) -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for i, turn in enumerate(value):
        role = turn.get("role") if isinstance(turn, dict) else None
        content = turn.get("content") if isinstance(turn, dict) else None
        if role not in ROLES or not isinstance(content, str):
            raise DataFileError(
                f"prompt turn {i} should be {{role: {'|'.join(ROLES)}, content: text}}", path=path, line=line
            )
        turns.append({"role": role, "content": content})
    if not turns:
        raise DataFileError("field 'prompt' is an empty conversation", path=path, line=line)
    return turns


def _rubric(value: list[Any], path: Path, line: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for i, item in enumerate(value):
        criterion = item.get("criterion") if isinstance(item, dict) else None
        points = item.get("points") if isinstance(item, dict) else None
        tags = item.get("tags", []) if isinstance(item, dict) else None
        if not isinstance(criterion, str) or not criterion.strip():
            raise DataFileError(f"rubric item {i} has no criterion text", path=path, line=line)
        if isinstance(points, bool) or not isinstance(points, int | float):
            raise DataFileError(f"rubric item {i}: 'points' should be a number", path=path, line=line)
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise DataFileError(f"rubric item {i}: 'tags' should be a list of strings", path=path, line=line)
        items.append({"criterion": criterion, "points": points, "tags": list(tags)})
    if not any(i["points"] > 0 for i in items):
        raise DataFileError("field 'rubrics' has no item with positive points", path=path, line=line)
    return items


def load_healthbench(options: Mapping[str, Any], base_dir: Path) -> LoadedDataset:
    path = resolve(PathOptions.model_validate(options).path, base_dir)

    def make_case(row: dict[str, Any], number: int) -> Case:
        case_id = require(row, "prompt_id", path, number)
        conversation = _conversation(require(row, "prompt", path, number, list), path, number)
        rubric = _rubric(require(row, "rubrics", path, number, list), path, number)
        tags = row.get("example_tags") or []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise DataFileError("field 'example_tags' should be a list of strings", path=path, line=number)
        metadata: dict[str, Any] = {"n_turns": len(conversation)}
        for tag in tags:
            key, _, value = tag.partition(":")
            if key in TAG_METADATA and value:
                metadata.setdefault(key, value)
        text = "\n\n".join(f"{t['role']}: {t['content']}" for t in conversation)
        return Case(
            id=case_id,
            input=CaseInput(question=text, data={"conversation": conversation, "send_conversation": True}),
            reference=Reference(data={"rubric": rubric, "example_tags": list(tags)}),
            metadata=metadata,
        )

    return jsonl_dataset(path, make_case)
