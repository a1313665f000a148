"""Secrets kept out of every message clineval stores or prints: API keys, and a user's environment.

- ``redact(text, secrets)``: each secret, and each run of ``FRAGMENT``+ of its characters (a key cut by a
  server's error message), becomes ``***``; an auth scheme word (``Bearer``) is no secret.
- ``exception_message(exc)``: a user's exception as a failure message (a ``callable`` system, or any
  adapter's bug caught by the runner): ``Type: text`` with every value of a secret-named environment
  variable (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ...) masked, cut to ``MAX_MESSAGE``.

Pure text functions (no I/O), so the runner, the systems and the reports share one implementation.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

FRAGMENT = 6  # the shortest run of a secret's characters that is masked
_SCHEMES = frozenset({"bearer", "basic", "token", "bot", "digest", "apikey", "api-key"})  # not secret
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|PRIVATE", re.IGNORECASE)
MIN_SECRET = 8  # shorter values (``1``, ``true``, a region name) are not worth masking, and mask too much
MAX_MESSAGE = 1000  # characters kept of an exception's text


def env_secrets(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of the environment's secret-named variables (``SECRET_NAME``), longest first."""
    env = os.environ if environ is None else environ
    found = {v.strip() for k, v in env.items() if SECRET_NAME.search(k) and len(v.strip()) >= MIN_SECRET}
    return sorted(found, key=len, reverse=True)


def exception_message(exc: BaseException, environ: Mapping[str, str] | None = None) -> str:
    """``Type: text`` of ``exc``, secrets masked, cut to ``MAX_MESSAGE`` characters (``Type`` alone when
    the exception has no text)."""
    text = str(exc).strip()
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return redact_clip(message, MAX_MESSAGE, env_secrets(environ))


def _fragments(secrets: Iterable[str]) -> set[str]:
    """Every FRAGMENT-character run of every secret (``Bearer KEY``: of KEY; the scheme is no secret)."""
    grams: set[str] = set()
    for secret in secrets:
        for part in secret.split():
            if part.lower() not in _SCHEMES:
                grams.update(part[i : i + FRAGMENT] for i in range(len(part) - FRAGMENT + 1))
    return grams


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret, and each run of FRAGMENT+ characters of one, replaced by ``***``."""
    secrets = [s for s in secrets if s]
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= 4:
            text = text.replace(secret, "***")
    grams = _fragments(secrets)
    if not grams:
        return text
    masked = bytearray(len(text))
    for i in range(len(text) - FRAGMENT + 1):
        if text[i : i + FRAGMENT] in grams:
            masked[i : i + FRAGMENT] = b"\x01" * FRAGMENT
    if not any(masked):
        return text
    out: list[str] = []
    for i, char in enumerate(text):
        if not masked[i]:
            out.append(char)
        elif i == 0 or not masked[i - 1]:
            out.append("***")
    return "".join(out)


def redact_clip(text: str, limit: int, secrets: Iterable[str]) -> str:
    """Redact, then cut to ``limit`` characters. Only a prefix long enough to hold whatever can move into
    the first ``limit`` characters is redacted (a body may be megabytes); a secret straddling that prefix's
    end keeps at most FRAGMENT-1 characters, all a cut anywhere can leave."""
    secrets = list(secrets)
    margin = max((len(s) for s in secrets), default=0) * 2 + FRAGMENT
    return redact(text[: limit + margin], secrets)[:limit]
