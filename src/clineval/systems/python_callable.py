"""A Python function as the system under test: ``target: "package.module:function"``.

The function takes the ``Case`` and returns text, a structured-output dict or a ``SystemOutput``; it may be
sync (run in a worker thread so it cannot stall the event loop) or async. Its exceptions become recorded
``exception`` failures, their message the exception's type and text with the environment's secrets masked
(``core.redaction``); it may raise ``RetryableCallError`` itself to ask the runner for a retry.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.core.case import Case
from clineval.core.errors import SuiteError, SystemCallError
from clineval.core.helpers.redaction import exception_message
from clineval.core.output import SystemOutput
from clineval.core.specs import ComponentSpec, canonical_json, sha256_text
from clineval.systems._outputs import OutputFormat, output_from_value


class CallableOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
    cache: bool = False
    output_format: OutputFormat = "structured"


def _import_module(name: str, base_dir: Path) -> Any:
    """Import ``name``; if it is not importable, retry with the suite's folder on ``sys.path``."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        folder = str(base_dir.resolve())
        if exc.name != name.split(".")[0] or folder in sys.path:
            raise
        sys.path.insert(0, folder)
        return importlib.import_module(name)


def load_target(target: str, base_dir: Path) -> Callable[..., Any]:
    """Resolve ``module:attr.path`` to a callable; any failure is one SuiteError line."""
    module_name, _, attr_path = target.partition(":")
    try:
        obj: Any = _import_module(module_name, base_dir)
    except Exception as exc:
        problem = f"cannot import {module_name!r} for callable {target!r}: {type(exc).__name__}: {exc}"
        raise SuiteError(problem, hint="make it importable or put it next to the suite file") from None
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            raise SuiteError(
                f"{target!r}: module {module_name!r} has no attribute {attr_path!r}",
                hint="target is 'package.module:function'",
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise SuiteError(f"{target!r} is a {type(obj).__name__}, not a function")
    fn: Callable[..., Any] = obj
    return fn


def _source_hash(fn: Callable[..., Any]) -> str | None:
    try:
        return hashlib.sha256(inspect.getsource(fn).encode("utf-8")).hexdigest()
    except (OSError, TypeError):
        return None


class CallableSystem:
    """Calls a user function once per case. Not cached unless ``cache: true`` (the function may be random)."""

    live = True

    def __init__(self, options: CallableOptions, base_dir: Path) -> None:
        self.options = options
        self.fn = load_target(options.target, base_dir)
        self._is_async = inspect.iscoroutinefunction(self.fn)
        self.spec = ComponentSpec(
            type="callable", args=options.model_dump(mode="json"), content_hash=_source_hash(self.fn)
        )

    async def start(self, concurrency: int) -> None:
        return None

    async def close(self) -> None:
        return None

    def cache_key(self, case: Case) -> str | None:
        if not self.options.cache:
            return None
        payload = {
            "system": "callable",
            "target": self.options.target,
            "source": self.spec.content_hash,
            "case": case.model_dump(mode="json"),
        }
        return sha256_text(canonical_json(payload))

    async def call(self, case: Case) -> SystemOutput:
        try:
            if self._is_async:
                result = await self.fn(case)
            else:
                result = await asyncio.to_thread(self.fn, case)
                if inspect.isawaitable(result):
                    result = await result
        except SystemCallError:
            raise
        except Exception as exc:
            raise SystemCallError("exception", exception_message(exc)) from exc
        if isinstance(result, SystemOutput):
            return result
        try:
            return output_from_value(result, self.options.output_format)
        except ValueError as exc:
            problem = f"{self.options.target} returned an invalid output: {exc}"
            raise SystemCallError("invalid_output", problem) from None


def callable_system(options: Mapping[str, Any], base_dir: Path) -> CallableSystem:
    return CallableSystem(CallableOptions.model_validate(options), base_dir)
