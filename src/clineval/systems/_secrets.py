"""A user's exception as a failure message: its type and text, with the environment's secrets masked.

A ``callable`` system is the user's own code: its exception text is what tells them what to fix (the
console and report.md show its first line beside the failure kind), and it may quote a key the code read
from the environment (``AuthenticationError: invalid key sk-...``). Every value of an environment variable
whose name says it holds a secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ...) is masked
the way the HTTP systems mask their keys (``systems._http.redact``: the whole value and any run of 6+ of
its characters), before the message is cut to length.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

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
    from clineval.systems._http import redact_clip  # on a failure only: it imports aiohttp

    text = str(exc).strip()
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return redact_clip(message, MAX_MESSAGE, env_secrets(environ))
