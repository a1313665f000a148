"""An endpoint URL as it may be shown in a log line, an error or a report: never a credential."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit


def endpoint_url(url: Any) -> str:
    """``url`` without user:password, query string or fragment (where a key could sit); "" when ``url`` is
    not a URL string. ``https://u:p@api.example.com/v1?key=K`` -> ``https://api.example.com/v1``."""
    if not isinstance(url, str) or not url:
        return ""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return ""
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))
