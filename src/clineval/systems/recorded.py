"""``type: recorded``: replay the output recorded with each case (``case.input.data["recorded_output"]``).

The partner of ``format: production_log``: the stored production recommendation is scored as it was
returned, never re-generated (not live, never cached). The value becomes a SystemOutput with the same
rules as a predictions file (``output_format``: ``structured`` by default, or ``cds_report``).

- A recorded ``error`` (``recorded_error``: a string or ``{"kind", "message"}``) makes the output failed:
  a system error is scored ``failed``, not ``wrong``.
- A case without a recorded output (and without an error) is a ``missing_recorded_output`` failure.
- An output that does not fit the schema (``recommended_actions`` not a list...) is kept as JSON text, so the
  ``schema`` check fails it with the reasons (a malformed recommendation is wrong, not a system failure).
- ``recorded_latency_s`` / ``recorded_stage_latency_s`` become ``latency_s`` / ``stage_latency_s``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from clineval.core.case import Case
from clineval.core.output import ErrorInfo, SystemOutput
from clineval.core.specs import ComponentSpec
from clineval.systems._outputs import OutputFormat, error_from_value, output_from_value
from clineval.systems._replay import ReplaySystem

OUTPUT_KEY = "recorded_output"
ERROR_KEY = "recorded_error"


class RecordedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    output_format: OutputFormat = "structured"


def _error(value: Any) -> ErrorInfo:
    try:
        return error_from_value(value)
    except ValueError:
        return ErrorInfo(kind="recorded_error", message=json.dumps(value, default=str)[:2000])


def recorded_output(data: Mapping[str, Any], output_format: OutputFormat = "structured") -> SystemOutput:
    """The SystemOutput of one case's recorded data (see the module docstring)."""
    error = data.get(ERROR_KEY)
    if OUTPUT_KEY not in data:
        if error is not None:
            return SystemOutput(error=_error(error))
        return SystemOutput.failure(
            "missing_recorded_output",
            "the case has no recorded output (load it with format: production_log)",
        )
    value = data[OUTPUT_KEY]
    try:
        output = output_from_value(value, output_format)
    except ValueError as exc:
        output = SystemOutput(text=json.dumps(value, default=str), raw={"recorded_output_problem": str(exc)})
    update: dict[str, Any] = {}
    if error is not None:
        update["error"] = _error(error)
    latency = data.get("recorded_latency_s")
    if isinstance(latency, int | float) and not isinstance(latency, bool):
        update["latency_s"] = float(latency)
    stages = data.get("recorded_stage_latency_s")
    if isinstance(stages, Mapping):
        update["stage_latency_s"] = {
            str(k): float(v)
            for k, v in stages.items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        }
    return output.model_copy(update=update) if update else output


class RecordedSystem(ReplaySystem):
    """Replays each case's recorded production output; never live, never cached."""

    def __init__(self, options: RecordedOptions) -> None:
        self.options = options
        self.spec = ComponentSpec(type="recorded", args=options.model_dump(mode="json"))

    async def call(self, case: Case) -> SystemOutput:
        return recorded_output(case.input.data, self.options.output_format)


def recorded_system(options: Mapping[str, Any], base_dir: Path) -> RecordedSystem:
    return RecordedSystem(RecordedOptions.model_validate(dict(options)))
