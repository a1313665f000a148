"""The network half of the pre-flight (``clineval.systems.preflight``): connect, ``/models``, the probe call.

Each check raises :class:`~clineval.systems.preflight.PreflightError` (one line naming the URL, the key
variable or the model) or returns a warning (None when all is well); a key never reaches a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import os
import socket
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from clineval.core.helpers.redaction import redact
from clineval.systems._http import status_error
from clineval.systems.preflight import Endpoint, PreflightError

CONNECT_TIMEOUT_S = 2.0
MODELS_TIMEOUT_S = 2.0
PROBE_PROMPT = "clineval pre-flight check: reply with OK."
SKIP_HINT = "--no-preflight runs anyway"


async def check_all(endpoints: Sequence[Endpoint], probe_timeout: float) -> list[str | BaseException | None]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
        checks = (_check(session, ep, probe_timeout) for ep in endpoints)
        return list(await asyncio.gather(*checks, return_exceptions=True))


async def _check(session: aiohttp.ClientSession, ep: Endpoint, probe_timeout: float) -> str | None:
    await _connect(ep)
    if ep.kind == "http":
        return None
    key = os.environ.get(ep.key_env) or ""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    served = await _models(session, ep, headers, [key])
    failure = await _probe(session, ep, headers, [key], probe_timeout)
    listed = served is None or _listed(ep.model, served)
    if failure is None:
        if listed:
            return None
        return (
            f"pre-flight: model {ep.model!r} is not in {ep.shown}/models ({_served(served)}), "
            "but the probe call answered: going on"
        )
    status, detail = failure
    if status in (401, 403):
        raise _key_error(ep, status, detail, bool(key))
    if not listed and served:
        close = difflib.get_close_matches(ep.model, served, n=1, cutoff=0.4)
        guess = f"did you mean {close[0]!r}? " if close else ""
        raise PreflightError(
            f"pre-flight: model {ep.model!r} is not served by {ep.shown} ({ep.role}; {detail})",
            hint=f"{guess}{_served(served)}",
        )
    raise PreflightError(
        f"pre-flight: the probe call to {ep.shown} (model {ep.model!r}, {ep.role}) failed: {detail}",
        hint=f"the run's calls would fail the same way; {SKIP_HINT}",
    )


def _host_port(ep: Endpoint) -> tuple[str, int]:
    parts = urlsplit(ep.url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


async def _connect(ep: Endpoint) -> None:
    host, port = _host_port(ep)
    where = f"{host}:{port} ({ep.shown}, {ep.role})"
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
    except socket.gaierror:
        raise PreflightError(
            f"pre-flight: cannot resolve the host {host!r} of {ep.shown} ({ep.role})",
            hint="check the host name in the URL",
        ) from None
    except ConnectionRefusedError:
        raise PreflightError(
            f"pre-flight: connection refused by {where}: nothing listens there",
            hint="start the server, or check the port in the URL",
        ) from None
    except TimeoutError:
        raise PreflightError(
            f"pre-flight: no connection to {where} within {CONNECT_TIMEOUT_S:g} s",
            hint="a wrong host, a firewall, or the server is not up",
        ) from None
    except OSError as exc:
        raise PreflightError(f"pre-flight: cannot connect to {where}: {exc.strerror or exc}") from None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def _models(
    session: aiohttp.ClientSession, ep: Endpoint, headers: dict[str, str], secrets: list[str]
) -> list[str] | None:
    """The model ids ``/models`` lists, or None where it lists none (not served, not a list)."""
    try:
        async with session.get(
            f"{ep.url}/models", headers=headers, timeout=aiohttp.ClientTimeout(total=MODELS_TIMEOUT_S)
        ) as resp:
            status, body = resp.status, await resp.read()
    except TimeoutError:
        raise PreflightError(
            f"pre-flight: {ep.shown}/models did not answer within {MODELS_TIMEOUT_S:g} s ({ep.role})",
            hint="the port accepts connections but no HTTP answer comes: a server still starting, or "
            "another service on this port",
        ) from None
    except aiohttp.ClientError as exc:
        reason = redact(f"{type(exc).__name__}: {exc}", secrets)
        raise PreflightError(
            f"pre-flight: no HTTP answer from {ep.shown}/models ({ep.role}): {reason}"
        ) from None
    if status in (401, 403):
        detail = status_error(status, body, {}, secrets).message
        raise _key_error(ep, status, detail, any(secrets))
    try:
        data = json.loads(body) if status == 200 else None
        ids = [str(m["id"]) for m in data["data"] if isinstance(m, dict) and "id" in m] if data else None
    except (ValueError, TypeError, KeyError):
        return None
    return ids or None


async def _probe(
    session: aiohttp.ClientSession,
    ep: Endpoint,
    headers: dict[str, str],
    secrets: list[str],
    timeout: float,
) -> tuple[int, str] | None:
    """None when the endpoint answered a tiny chat completion, else (status, the redacted reason)."""
    body: dict[str, Any] = {
        "model": ep.model,
        "messages": [{"role": "user", "content": PROBE_PROMPT}],
        **dict(ep.sampling),
        "max_tokens": 1,
    }
    retried = False
    while True:
        try:
            async with session.post(
                f"{ep.url}/chat/completions",
                json=body,
                headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as resp:
                status, raw, resp_headers = resp.status, await resp.read(), resp.headers
        except TimeoutError:
            raise PreflightError(
                f"pre-flight: the probe call to {ep.shown} (model {ep.model!r}, {ep.role}) got no answer "
                f"within {timeout:g} s",
                hint=f"a model still loading? raise --timeout, or {SKIP_HINT}",
            ) from None
        except aiohttp.ClientError as exc:
            return 0, redact(f"{type(exc).__name__}: {exc}", secrets)
        if status == 429:  # rate limited: the endpoint, the key and the model are fine
            return None
        if status < 400:
            return None if _is_completion(raw) else (status, f"HTTP {status} but no chat completion")
        if status == 400 and "max_tokens" in body and b"max_tokens" in raw:
            del body["max_tokens"]  # a model that takes max_completion_tokens only (OpenAI reasoning models)
            continue
        if status >= 500 and not retried:  # once: a passing hiccup is no reason to stop the run
            retried = True
            await asyncio.sleep(0.5)
            continue
        return status, status_error(status, raw, resp_headers, secrets).message


def _is_completion(raw: bytes) -> bool:
    try:
        data = json.loads(raw)
    except ValueError:
        return False
    return isinstance(data, dict) and isinstance(data.get("choices"), list)


def _listed(model: str, served: Sequence[str]) -> bool:
    return model in served or f"{model}:latest" in served  # Ollama serves "llama3" as "llama3:latest"


def _served(served: Sequence[str] | None) -> str:
    names = list(served or [])
    more = f" and {len(names) - 8} more" if len(names) > 8 else ""
    return f"served: {', '.join(names[:8])}{more}" if names else "it lists no model"


def _key_error(ep: Endpoint, status: int, detail: str, key_set: bool) -> PreflightError:
    if key_set:
        return PreflightError(
            f"pre-flight: {ep.shown} refused the key in {ep.key_env} ({ep.role}; {detail})",
            hint=f"check {ep.key_env}: the key of this endpoint",
        )
    return PreflightError(
        f"pre-flight: {ep.shown} needs an API key and {ep.key_env} is not set ({ep.role}; HTTP {status})",
        hint=f"export {ep.key_env}=<your key> (read at call time, never stored)",
    )
