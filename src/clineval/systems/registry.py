"""``SYSTEMS``: the registry of system-under-test factories a suite can name (``system: {type: ...}``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clineval.core.protocols import System
from clineval.core.registry import Registry
from clineval.systems.ddxplus_differential import ddxplus_differential_system
from clineval.systems.http_json import http_system
from clineval.systems.lddx import lddx_system
from clineval.systems.openai_chat import openai_system
from clineval.systems.predictions import predictions_system
from clineval.systems.python_callable import callable_system
from clineval.systems.recorded import recorded_system
from clineval.systems.trec_run import trec_run_system

SystemFactory = Callable[[Mapping[str, Any], Path], System]
"""``(options, base_dir) -> System``: validates ``options`` (pydantic, extra="forbid"); paths are relative
to ``base_dir``, the suite file's folder."""

SYSTEMS: Registry[SystemFactory] = Registry("system")
SYSTEMS.add("predictions", predictions_system)
SYSTEMS.add("callable", callable_system)
SYSTEMS.add("http", http_system)
SYSTEMS.add("openai", openai_system)
SYSTEMS.add("lddx", lddx_system)
SYSTEMS.add("ddxplus_differential", ddxplus_differential_system)
SYSTEMS.add("trec_run", trec_run_system)
SYSTEMS.add("recorded", recorded_system)


def build_system(type_: str, options: Mapping[str, Any], base_dir: Path) -> System:
    """Look up ``type_`` (did-you-mean on a typo) and build it."""
    return SYSTEMS.get(type_)(options, base_dir)
