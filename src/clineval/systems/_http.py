"""Shared aiohttp plumbing for live systems: one session per system, HTTP failures mapped to call errors.

A system makes one attempt per call; this module only classifies what went wrong so the runner can decide
whether to retry (429, 5xx, 408, connection errors) or record a terminal failure (other 4xx, bad body).
Secrets (resolved header values, API keys) are redacted from every message built here, and redacted before
a message is cut to length: cutting first left a key that straddled the cut unmatched (37 of 38 characters
reached the store). Any run of 6+ characters of a secret is masked, so a fragment of a key cut at any
boundary shows at most 5 of its characters.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import aiohttp

from clineval.core.errors import RetryableCallError, SystemCallError
from clineval.core.helpers.lines import json_too_deep, loads
from clineval.core.helpers.redaction import FRAGMENT, redact, redact_clip

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_MAX_MESSAGE = 300  # characters of a server's error message kept
_MAX_SNIPPET = 120  # characters of a body that is not JSON kept
_JSON = json.JSONEncoder(ensure_ascii=False)  # what json.dumps(..., ensure_ascii=False) builds on each call


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date (RFC 9110 §10.2.3)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def retry_after_from(headers: Mapping[str, str]) -> float | None:
    """OpenAI-style ``retry-after-ms`` wins over the standard ``Retry-After``."""
    millis = parse_retry_after(headers.get("retry-after-ms"))
    return millis / 1000.0 if millis is not None else parse_retry_after(headers.get("Retry-After"))


def env_refs(template: str) -> list[str]:
    return _ENV_REF.findall(template)


def resolve_env(template: str, *, what: str) -> str:
    """Expand ``${VAR}`` at call time so secrets never live in specs; an unset variable is terminal."""

    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        value = os.environ.get(name)
        if value is None:
            raise SystemCallError("missing_env", f"environment variable {name} ({what}) is not set")
        return value

    return _ENV_REF.sub(lookup, template)


def resolve_headers(templates: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Headers with ``${VAR}`` expanded, and the secrets to redact (every value and every variable value)."""
    headers = {name: resolve_env(value, what=f"header {name}") for name, value in templates.items()}
    secrets = [*headers.values(), *(os.environ[v] for t in templates.values() for v in env_refs(t))]
    return headers, secrets


def _error_detail(body: bytes, secrets: Iterable[str] = ()) -> str:
    """The server's own error message if the body is OpenAI-style JSON, else the start of the body;
    redacted, then cut."""
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        return redact_clip(text, _MAX_MESSAGE, secrets)
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict) and "message" in err:
            err = err["message"]
        if err is not None:
            return redact_clip(str(err), _MAX_MESSAGE, secrets)
    return redact_clip(text, _MAX_MESSAGE, secrets)


def status_error(
    status: int, body: bytes, headers: Mapping[str, str], secrets: Iterable[str]
) -> SystemCallError:
    """429, 408 and 5xx may pass (retryable, with the server's Retry-After); other statuses are terminal."""
    secrets = list(secrets)
    message = redact(f"HTTP {status}: {_error_detail(body, secrets)}", secrets)
    kind = f"http_{status}"
    if status in (408, 429) or status >= 500:
        return RetryableCallError(kind, message, status=status, retry_after=retry_after_from(headers))
    return SystemCallError(kind, message, status=status)


class JsonHttpClient:
    """One aiohttp session per system; the connector's limit equals the run's concurrency."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    async def start(self, concurrency: int) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=None), raise_for_status=False
            )

    async def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()

    async def post_json(
        self, url: str, payload: Any, headers: Mapping[str, str], *, secrets: Iterable[str] = ()
    ) -> Any:
        """POST ``payload`` as JSON once (``bytes``: JSON already encoded, sent as they are); the decoded
        JSON body, or a (Retryable)SystemCallError."""
        if self._session is None:
            await self.start(10)
        session = self._session
        if session is None:
            raise RuntimeError("JsonHttpClient was closed while starting")
        data = payload if isinstance(payload, bytes) else _JSON.encode(payload).encode("utf-8")
        send_headers = {"Content-Type": "application/json", **headers}
        secrets = list(secrets)
        try:
            async with session.post(url, data=data, headers=send_headers) as resp:
                body = await resp.read()
                status, resp_headers = resp.status, resp.headers
        except aiohttp.InvalidURL as exc:
            raise SystemCallError("invalid_url", redact(f"invalid URL {exc}", secrets)) from None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            message = redact(f"{type(exc).__name__}: {exc}", secrets)
            raise RetryableCallError("connection", message) from None
        except aiohttp.ClientError as exc:
            raise SystemCallError("http_error", redact(f"{type(exc).__name__}: {exc}", secrets)) from None
        if status >= 400:
            raise status_error(status, body, resp_headers, secrets)
        try:
            text = body.decode(json.detect_encoding(body), "surrogatepass")  # as json.loads(bytes) does
            if json_too_deep(text):
                raise ValueError("nested too deep")
            return loads(text)  # json.loads's values and errors, through msgspec (~3x faster) when it can
        except (ValueError, UnicodeDecodeError):  # often a body cut short: the runner retries it
            head = body[: 4 * (_MAX_SNIPPET + 2 * max(map(len, secrets), default=0) + FRAGMENT)]
            snippet = redact_clip(head.decode("utf-8", errors="replace"), _MAX_SNIPPET, secrets)
            raise SystemCallError(
                "malformed_response", f"response body is not JSON: {snippet!r}", status=status
            ) from None
