"""``type: ddxplus_differential``: the DDXPlus dataset's own differential replayed as a system output.

A baseline, not a model: DDXPlus ships, for every synthetic patient, the differential its generator computed
(``[[pathology, probability], ...]``). The ``ddxplus`` loader keeps it in
``case.reference.data["ddxplus_differential"]``; this system returns it as
``StructuredOutput(differential=[...])``, ranked by probability (stable: ties keep the file's order), each
item's ``confidence`` its probability. Reading from the case's reference is deliberate here (the output *is*
dataset content) and only acceptable for this replay baseline; it says how well the dataset's own
differential ranks the true pathology (top-1 about 73% on the 1000-patient sample, recall 100%).
A case without that field gets a recorded ``missing_prediction`` failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from clineval.core.case import Case
from clineval.core.output import DifferentialItem, StructuredOutput, SystemOutput
from clineval.core.specs import ComponentSpec
from clineval.systems._replay import ReplaySystem

FIELD = "ddxplus_differential"


class DdxplusDifferentialOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    top_k: int | None = None  # keep only the k most probable entries (None: the complete differential)


def differential_output(pairs: Any, top_k: int | None = None) -> SystemOutput:
    """``[[name, probability], ...]`` -> SystemOutput with the ranked structured differential."""
    if not isinstance(pairs, list) or not pairs:
        return SystemOutput.failure("missing_prediction", f"case has no reference.data[{FIELD!r}]")
    ranked = sorted(((str(p[0]), float(p[1])) for p in pairs), key=lambda item: -item[1])
    items = [DifferentialItem(diagnosis=name, confidence=prob) for name, prob in ranked[:top_k]]
    return SystemOutput(structured=StructuredOutput(differential=items))


class DdxplusDifferentialSystem(ReplaySystem):
    """Replays each case's DDXPlus differential; never live, never cached."""

    def __init__(self, options: DdxplusDifferentialOptions) -> None:
        if options.top_k is not None and options.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {options.top_k}")
        self.options = options
        self.spec = ComponentSpec(type="ddxplus_differential", args=options.model_dump(mode="json"))

    async def call(self, case: Case) -> SystemOutput:
        return differential_output(case.reference.data.get(FIELD), self.options.top_k)


def ddxplus_differential_system(options: Mapping[str, Any], base_dir: Path) -> DdxplusDifferentialSystem:
    return DdxplusDifferentialSystem(DdxplusDifferentialOptions.model_validate(options))
