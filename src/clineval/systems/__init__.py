"""Adapters for the system under test: replayed predictions, a Python callable, HTTP JSON, OpenAI chat.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.systems.http_json import HttpJsonSystem, http_system
    from clineval.systems.openai_chat import OpenAIChatSystem, openai_system, parse_chat_completion
    from clineval.systems.predictions import PredictionsSystem, predictions_system, read_predictions
    from clineval.systems.preflight import PreflightError, preflight_suite
    from clineval.systems.prompts import PromptTemplate, available_prompts, load_prompt
    from clineval.systems.python_callable import CallableSystem, callable_system
    from clineval.systems.registry import SYSTEMS, SystemFactory, build_system

__all__ = [
    "SYSTEMS",
    "CallableSystem",
    "HttpJsonSystem",
    "OpenAIChatSystem",
    "PredictionsSystem",
    "PreflightError",
    "PromptTemplate",
    "SystemFactory",
    "available_prompts",
    "build_system",
    "callable_system",
    "http_system",
    "load_prompt",
    "openai_system",
    "parse_chat_completion",
    "predictions_system",
    "preflight_suite",
    "read_predictions",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.systems.http_json": ("HttpJsonSystem", "http_system"),
        "clineval.systems.openai_chat": ("OpenAIChatSystem", "openai_system", "parse_chat_completion"),
        "clineval.systems.predictions": ("PredictionsSystem", "predictions_system", "read_predictions"),
        "clineval.systems.preflight": ("PreflightError", "preflight_suite"),
        "clineval.systems.prompts": ("PromptTemplate", "available_prompts", "load_prompt"),
        "clineval.systems.python_callable": ("CallableSystem", "callable_system"),
        "clineval.systems.registry": ("SYSTEMS", "SystemFactory", "build_system"),
    },
)
