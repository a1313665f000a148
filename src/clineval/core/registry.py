"""One registry (name -> factory) for every kind of component a suite can name.

A factory may be registered by name (``add_lazy("mcq", "clineval.mcq.scorer:make_mcq_scorer")``): its module
is imported on first ``get``, so a suite that names one scorer does not import all of them (fast start).
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, cast

from clineval.core.errors import SuiteError

T = TypeVar("T")


class Registry(Generic[T]):
    """Maps names to factories. ``get`` of an unknown name raises a SuiteError with a suggestion."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, T] = {}
        self._lazy: dict[str, str] = {}  # name -> "module:attribute", imported on first get

    def register(self, name: str) -> Callable[[T], T]:
        def decorator(factory: T) -> T:
            if name in self._factories or name in self._lazy:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._factories[name] = factory
            return factory

        return decorator

    def add(self, name: str, factory: T) -> None:
        self.register(name)(factory)

    def add_lazy(self, name: str, target: str) -> None:
        """Register ``target`` ("package.module:attribute"), imported when ``name`` is first looked up."""
        if name in self._factories or name in self._lazy:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._lazy[name] = target

    def get(self, name: str, *, path: str | None = None, line: int | None = None) -> T:
        if name in self._factories:
            return self._factories[name]
        if name in self._lazy:
            module, _, attribute = self._lazy[name].partition(":")
            factory = cast(T, getattr(importlib.import_module(module), attribute))
            self._factories[name] = factory
            del self._lazy[name]
            return factory
        raise SuiteError(f"unknown {self.kind} {name!r}", path=path, line=line, hint=self.suggest(name))

    def suggest(self, name: str) -> str:
        close = difflib.get_close_matches(name, self.names(), n=1)
        known = ", ".join(self.names())
        return f"did you mean {close[0]!r}? (known: {known})" if close else f"use one of: {known}"

    def names(self) -> list[str]:
        return sorted({*self._factories, *self._lazy})

    def __contains__(self, name: object) -> bool:
        return name in self._factories or name in self._lazy

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
