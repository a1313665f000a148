"""Replay a predictions file: ``{"id": ..., "output": <text or structured object>}`` per JSONL line.

The whole file is read and validated when the system is built, so a bad line stops the run before any
scoring (with its line number), not half way through. A case without a prediction becomes a recorded
``missing_prediction`` failure: it counts against the system instead of silently shrinking the dataset.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from clineval.core.case import Case
from clineval.core.errors import DataFileError
from clineval.core.lines import file_lines
from clineval.core.output import SystemOutput
from clineval.core.specs import ComponentSpec
from clineval.systems._outputs import OutputFormat, error_from_value, output_from_value, usage_from_value
from clineval.systems._replay import ReplaySystem


class PredictionsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    output_field: str = "output"
    id_field: str = "id"
    numeric_ids: bool = False
    output_format: OutputFormat = "structured"


def normalize_id(value: Any, *, numeric_ids: bool) -> str:
    """Ids compare as strings; with ``numeric_ids`` digit-only ids compare as integers ("0007" == "7")."""
    text = str(value).strip()
    return str(int(text)) if numeric_ids and text.isdigit() else text


def _parse_line(
    raw: Any, *, output_field: str, id_field: str, output_format: OutputFormat = "structured"
) -> tuple[Any, SystemOutput]:
    if not isinstance(raw, dict):
        raise ValueError(f"expected a JSON object, got {type(raw).__name__}")
    if id_field not in raw or raw[id_field] is None:
        raise ValueError(f"missing {id_field!r}")
    has_error = raw.get("error") is not None
    if output_field not in raw and not has_error:
        raise ValueError(f"missing {output_field!r}")
    value = raw.get(output_field)
    output = output_from_value(value, output_format) if output_field in raw else SystemOutput()
    update: dict[str, Any] = {}
    if has_error:
        update["error"] = error_from_value(raw["error"])
    if raw.get("latency_s") is not None:
        latency = raw["latency_s"]
        if isinstance(latency, bool) or not isinstance(latency, int | float):
            raise ValueError(f"latency_s must be a number, got {latency!r}")
        update["latency_s"] = float(latency)
    if raw.get("usage") is not None:
        update["usage"] = usage_from_value(raw["usage"])
    return raw[id_field], output.model_copy(update=update) if update else output


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataFileError(
            "predictions file not found",
            path=path,
            hint="check the path (relative paths are relative to the suite file)",
        ) from None
    except OSError as exc:
        raise DataFileError(f"cannot read predictions file: {exc.strerror}", path=path) from None


def read_predictions(
    path: Path,
    *,
    output_field: str = "output",
    id_field: str = "id",
    numeric_ids: bool = False,
    output_format: OutputFormat = "structured",
) -> dict[str, SystemOutput]:
    """Every prediction of a JSONL file by (normalised) id; a bad line raises DataFileError (line number)."""
    return parse_predictions(
        _read_bytes(path),
        path,
        output_field=output_field,
        id_field=id_field,
        numeric_ids=numeric_ids,
        output_format=output_format,
    )


def parse_predictions(
    data: bytes,
    path: Path,
    *,
    output_field: str = "output",
    id_field: str = "id",
    numeric_ids: bool = False,
    output_format: OutputFormat = "structured",
) -> dict[str, SystemOutput]:
    outputs: dict[str, SystemOutput] = {}
    first_line: dict[str, int] = {}
    for number, line in file_lines(data, path):  # at \n only, BOM dropped (core.lines)
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise DataFileError(
                f"malformed JSON ({exc})", path=path, line=number, hint="each line must be one JSON object"
            ) from None
        try:
            raw_id, output = _parse_line(
                raw, output_field=output_field, id_field=id_field, output_format=output_format
            )
        except ValueError as exc:
            raise DataFileError(
                str(exc),
                path=path,
                line=number,
                hint=f'expected {{"{id_field}": ..., "{output_field}": ...}}',
            ) from None
        key = normalize_id(raw_id, numeric_ids=numeric_ids)
        if key in first_line:
            problem = f"duplicate id {key!r} (first on line {first_line[key]}, again on line {number})"
            raise DataFileError(problem, path=path, line=number, hint="keep one prediction per id")
        first_line[key] = number
        outputs[key] = output
    return outputs


class PredictionsSystem(ReplaySystem):
    """Replays recorded outputs; never live, never cached (the file is the cache)."""

    def __init__(self, options: PredictionsOptions, base_dir: Path) -> None:
        self.options = options
        self.path = Path(options.path) if Path(options.path).is_absolute() else base_dir / options.path
        data = _read_bytes(self.path)
        self._outputs = parse_predictions(
            data,
            self.path,
            output_field=options.output_field,
            id_field=options.id_field,
            numeric_ids=options.numeric_ids,
            output_format=options.output_format,
        )
        self._used: set[str] = set()
        digest = hashlib.sha256(data).hexdigest()
        args = options.model_dump(mode="json")
        self.spec = ComponentSpec(type="predictions", args=args, content_hash=digest)

    def __len__(self) -> int:
        return len(self._outputs)

    async def call(self, case: Case) -> SystemOutput:
        key = normalize_id(case.id, numeric_ids=self.options.numeric_ids)
        output = self._outputs.get(key)
        if output is None:
            message = f"no prediction with id {case.id} in {self.options.path}"
            return SystemOutput.failure("missing_prediction", message)
        self._used.add(key)
        return output

    def check_cases(self, cases: Sequence[Case]) -> None:
        """Refuse a file none of whose ids matches a case: that is a wrong file, id field or id format (e.g.
        ``"0007"`` vs ``"7"``), not a system that failed on every case."""
        keys = {normalize_id(c.id, numeric_ids=self.options.numeric_ids) for c in cases}
        if not cases or keys & self._outputs.keys():
            return
        if not self._outputs:
            raise DataFileError("the predictions file holds no predictions", path=self.path)
        ours, theirs = _shown(next(iter(self._outputs))), _shown(cases[0].id)
        as_numbers = {normalize_id(c.id, numeric_ids=True) for c in cases}
        numeric_helps = not self.options.numeric_ids and any(
            normalize_id(k, numeric_ids=True) in as_numbers for k in self._outputs
        )
        hint = (
            "set numeric_ids: true on the system (digit-only ids then compare as numbers)"
            if numeric_helps
            else f"check the system's id_field (now {self.options.id_field!r}), numeric_ids: true for ids "
            "that differ only by leading zeros, and that the file belongs to this dataset"
        )
        raise DataFileError(
            f"none of the {len(self._outputs)} predictions matches a case id "
            f"(e.g. prediction id {ours}, case id {theirs})",
            path=self.path,
            hint=hint,
        )

    def unused_ids(self) -> list[str]:
        """Predictions that matched no case so far (the runner warns: often a wrong id field or id format)."""
        return sorted(set(self._outputs) - self._used)


def _shown(identifier: str, limit: int = 40) -> str:
    """An id for a message: quoted, cut to ``limit`` characters."""
    text = identifier if len(identifier) <= limit else identifier[: limit - 1] + "…"
    return repr(text)


def predictions_system(options: Mapping[str, Any], base_dir: Path) -> PredictionsSystem:
    return PredictionsSystem(PredictionsOptions.model_validate(options), base_dir)
