"""Pre-flight: every live endpoint of a run is checked once, before the run is stored or a case is called.

Without it a wrong key, URL, port or model name surfaced only after the circuit breaker had cycled for a
minute (issue 23: 62 s and exit 3, the key never named). Now each is one line naming the URL, the variable
or the model, and exit 2 within seconds (``clineval run`` / ``eval``; ``--no-preflight`` skips it).

``openai`` endpoints (the system, its MCQ selection call, the judge), in this order, stopping at the first
failure:

1. **key** (no network): a hosted API (``HOSTED_HOSTS``: api.openai.com) needs its key variable
   (``api_key_env``, ``OPENAI_API_KEY`` by default) set. A local server needs none, unless it refuses
   calls without one: steps 3 and 4 then name the variable.
2. **connect**: the host resolves and its port accepts a TCP connection within ``CONNECT_TIMEOUT_S`` (2 s).
3. **models**: ``GET {base_url}/models`` answers within ``MODELS_TIMEOUT_S`` (2 s); 401/403 name the key
   variable; the list is kept for step 4 (404 or no list: skipped, not every server serves it).
4. **probe**: one chat completion (``max_tokens: 1``, the system's temperature and seed) answers within
   the run's ``--timeout`` (at most ``PROBE_TIMEOUT_MAX_S``: a model may still be loading). A 429 passes
   (the endpoint, key and model are fine); a 5xx is tried once more; any other error status fails with the
   server's message, and with did-you-mean from the models list when the model is not in it. A model the
   list lacks but the probe answers (llama.cpp serves any name) is a warning, not an error.

``http`` endpoints: the ``${VAR}`` of their headers are set, and the host resolves and accepts a
connection. No probe call: its POST carries a case of the task's own shape and may have effects (a CDS
pipeline that writes), so the run's first case is its check.

The probe is neither cached nor counted as a case; a key never reaches a message (redacted like every
call's) and URLs are shown without credentials (``clineval.core.helpers.urls``). This module says which
endpoints and checks the variables; ``clineval.systems.preflight_checks`` (aiohttp, imported only when a run
has a live endpoint) does steps 2 to 4.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from clineval.core.errors import UserInputError
from clineval.core.helpers.urls import endpoint_url

log = logging.getLogger(__name__)
HOSTED_HOSTS = frozenset({"api.openai.com"})  # hosts that refuse every call without a key
PROBE_TIMEOUT_MAX_S = 30.0


class PreflightError(UserInputError):
    """An endpoint the run would call is not ready (one line: its URL, key variable or model)."""


@dataclass(frozen=True)
class Endpoint:
    kind: Literal["openai", "http"]
    url: str  # openai: the base URL (…/v1); http: the URL the cases are POSTed to
    model: str = ""
    key_env: str = ""  # openai: the variable holding the key
    header_vars: tuple[str, ...] = ()  # http: the ${VAR} its headers use
    sampling: tuple[tuple[str, Any], ...] = ()  # openai: temperature, seed (sent with the probe)
    role: str = "system"

    @property
    def shown(self) -> str:
        return endpoint_url(self.url)


def endpoint_of(system: object, role: str = "system") -> Endpoint | None:
    """The endpoint ``system`` calls, or None when it calls none (replays, a Python callable)."""
    from clineval.systems._http import env_refs
    from clineval.systems.http_json import HttpJsonSystem
    from clineval.systems.openai_chat import OpenAIChatSystem

    if isinstance(system, OpenAIChatSystem):
        o = system.options
        sampling = (("temperature", o.temperature), *((("seed", o.seed),) if o.seed is not None else ()))
        return Endpoint(
            "openai", o.base_url.rstrip("/"), o.model, o.api_key_env, sampling=sampling, role=role
        )
    if isinstance(system, HttpJsonSystem):
        names = tuple(dict.fromkeys(v for t in system.options.headers.values() for v in env_refs(t)))
        return Endpoint("http", system.options.url, header_vars=names, role=role)
    return None


def suite_endpoints(tasks: Iterable[Any]) -> list[Endpoint]:
    """Each endpoint a suite's tasks call, once: their systems, MCQ selection calls and judges (each of a
    judge's prompts). ``tasks``: built tasks (``spec.id``, ``system``, ``selection``, ``judge``)."""
    found: dict[tuple[object, ...], Endpoint] = {}
    for task in tasks:
        named: list[tuple[str, object]] = [(f"task {task.spec.id}", task.system)]
        if task.selection is not None:
            named.append((f"task {task.spec.id} mcq_selection", task.selection.system))
        if task.judge is not None:
            judges = (task.judge.system, *task.judge.prompts.values())
            named.extend((f"task {task.spec.id} judge", s) for s in judges)
        for role, system in named:
            ep = endpoint_of(system, role)
            if ep is not None:
                found.setdefault((ep.kind, ep.url, ep.model, ep.key_env, ep.header_vars), ep)
    return list(found.values())


def preflight(endpoints: Sequence[Endpoint], *, timeout_s: float) -> list[str]:
    """Check ``endpoints`` (concurrently); raise :class:`PreflightError` for the first in order that fails,
    else return (and log) the warnings. ``timeout_s``: the run's per-call timeout (the probe's)."""
    for ep in endpoints:
        _check_variables(ep)  # no network: a missing key is named even when nothing is reachable
    if not endpoints:
        return []
    from clineval.systems.preflight_checks import check_all  # aiohttp: only when there is an endpoint

    outcomes = asyncio.run(check_all(endpoints, min(timeout_s, PROBE_TIMEOUT_MAX_S)))
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    warnings = [w for w in outcomes if isinstance(w, str)]
    for warning in warnings:
        log.warning("%s", warning)
    return warnings


def preflight_suite(tasks: Iterable[Any], timeout_s: float | None) -> list[str]:
    """:func:`preflight` of every endpoint a suite's built tasks call (:func:`suite_endpoints`), with the
    run's per-call timeout; ``timeout_s`` None: no pre-flight (the run asked for none)."""
    return [] if timeout_s is None else preflight(suite_endpoints(tasks), timeout_s=timeout_s)


def _check_variables(ep: Endpoint) -> None:
    if ep.kind == "openai":
        host = (urlsplit(ep.url).hostname or "").lower()
        if host in HOSTED_HOSTS and not os.environ.get(ep.key_env):
            raise PreflightError(
                f"pre-flight: {ep.key_env} is not set; {ep.shown} needs an API key ({ep.role})",
                hint=f"export {ep.key_env}=<your key> (read at call time, never stored), "
                "or call a local server (--base-url)",
            )
        return
    for name in ep.header_vars:
        if not os.environ.get(name):
            raise PreflightError(
                f"pre-flight: {name} is not set; the headers of {ep.shown} use ${{{name}}} ({ep.role})",
                hint=f"export {name}=...",
            )
