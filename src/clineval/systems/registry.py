"""``SYSTEMS``: the registry of system-under-test factories a suite can name (``system: {type: ...}``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clineval.core.protocols import System
from clineval.core.registry import Registry

SystemFactory = Callable[[Mapping[str, Any], Path], System]
"""``(options, base_dir) -> System``: validates ``options`` (pydantic, extra="forbid"); paths are relative
to ``base_dir``, the suite file's folder."""

# Factories are named, not imported: a suite imports only the modules of the components it uses.
SYSTEMS: Registry[SystemFactory] = Registry("system")
SYSTEMS.add_lazy("predictions", "clineval.systems.predictions:predictions_system")
SYSTEMS.add_lazy("callable", "clineval.systems.python_callable:callable_system")
SYSTEMS.add_lazy("http", "clineval.systems.http_json:http_system")
SYSTEMS.add_lazy("openai", "clineval.systems.openai_chat:openai_system")
SYSTEMS.add_lazy("lddx", "clineval.ddx.lddx:lddx_system")
SYSTEMS.add_lazy("ddxplus_differential", "clineval.ddx.ddxplus_differential:ddxplus_differential_system")
SYSTEMS.add_lazy("trec_run", "clineval.cds.retrieval.trec_run:trec_run_system")
SYSTEMS.add_lazy("recorded", "clineval.systems.recorded:recorded_system")


def build_system(type_: str, options: Mapping[str, Any], base_dir: Path) -> System:
    """Look up ``type_`` (did-you-mean on a typo) and build it."""
    return SYSTEMS.get(type_)(options, base_dir)
