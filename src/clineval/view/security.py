"""The viewer's guards: an access token, a loopback-only Host check, CSRF on POSTs, read-only mode, query
parameter rules and security headers.

One pure ASGI middleware checks every request before a route sees it and stamps every response it sends,
so a route added later (the adjudication forms) cannot forget a check or a header. Why each one:

- *token*: on a host other than loopback anyone on the network could read patient-like case text.
  ``Authorization: Bearer T``, or ``?token=T`` once (then an HttpOnly cookie), compared in constant time.
- *Host check* (no token): a page on another site can resolve its own name to 127.0.0.1 (DNS
  rebinding) and read the viewer; such requests carry that site's name in ``Host`` and are refused. Only
  ``localhost``, an address of 127.0.0.0/8 and ``::1`` (``[::1]`` with a port) pass, each with an optional
  port; an empty or missing Host, ``testserver`` (Starlette's test client), ``localhost.evil.com`` or
  ``127.0.0.1.evil.com`` are refused (403).
- *CSRF*: a double-submit token: a random cookie, and a hidden form field (or ``X-CSRF-Token``
  header) holding its HMAC under a per-app secret; a POST whose field does not match is refused, and so
  is one whose ``Origin`` is not exactly this host (``null`` included).
- *read-only*: every POST is refused with a page that says why.
- *query parameters*: the rules of ``clineval.view.params``; a value that breaks one is a 400 naming it.
- *headers* (every response, refusals, errors, redirects and static files included): a Content Security
  Policy allowing only this origin's scripts and styles (the pages carry no inline script, style
  attribute or handler), no framing, no ``<base>``, forms only to this origin; ``nosniff``;
  ``Referrer-Policy: same-origin`` (our own POSTs keep their ``Origin``); ``X-Frame-Options: DENY``;
  and ``Cache-Control: no-store`` on pages (case text stays out of the disk cache).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup, escape
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

from clineval.view.params import query_problem

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "clineval_view_token"
CSRF_COOKIE = "clineval_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_FORM_BYTES = 1_000_000
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
CONTROL_IN_PATH = re.compile(r"[\x00-\x1f\x7f]")
_PORT = re.compile(r":[0-9]{1,5}")
_LOOPBACK_V4 = ipaddress.IPv4Network("127.0.0.0/8")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or name, no port) is this machine only: ``localhost``, an address of
    127.0.0.0/8, or ``::1`` (bracketed or not). Used for ``--host`` (no token needed) and the Host check."""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if ":" not in host:
            return False  # brackets hold an IPv6 address only
    if host.lower() == "localhost":
        return True
    if "%" in host:  # an IPv6 zone id: not a plain loopback address
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv4Address):
        return address in _LOOPBACK_V4
    return address == ipaddress.IPv6Address("::1")


def loopback_host_header(value: str | None) -> bool:
    """Whether a ``Host`` header names this machine: a loopback name (``is_loopback``) and an optional port
    (1-5 digits, at most 65535). Empty or missing: refused."""
    if not value:
        return False
    if value.startswith("["):
        name, _, rest = value.partition("]")
        name += "]"
    elif value.count(":") == 1:
        name, rest = value.split(":")[0], ":" + value.split(":")[1]
    else:
        name, rest = value, ""  # a bare name, or a bare IPv6 address (no port can follow it)
    if rest and not (_PORT.fullmatch(rest) and int(rest[1:]) <= 65535):
        return False
    return bool(name) and is_loopback(name)


def _secret(request: Request) -> bytes:
    return bytes(request.app.state.csrf_secret)


def _sign(secret: bytes, nonce: str) -> str:
    return hmac.new(secret, nonce.encode(), hashlib.sha256).hexdigest()


def csrf_token(request: Request) -> str:
    """The form token for this browser (its cookie nonce, signed). The middleware sets the cookie."""
    nonce = request.cookies.get(CSRF_COOKIE) or request.scope.get("state", {}).get("csrf_nonce", "")
    return _sign(_secret(request), nonce)


def csrf_field(request: Request) -> Markup:
    """The hidden input every POST form carries (``{{ csrf_field(request) }}`` in a template)."""
    return Markup('<input type="hidden" name="{}" value="{}">').format(
        CSRF_FIELD, escape(csrf_token(request))
    )


def csrf_ok(request: Request, submitted: str | None) -> bool:
    nonce = request.cookies.get(CSRF_COOKIE)
    if not nonce or not submitted:
        return False
    return hmac.compare_digest(_sign(_secret(request), nonce), submitted)


def check_csrf(request: Request, form: FormData | None = None) -> None:
    """Raise 403 unless the POST carries this browser's CSRF token (form field or header)."""
    submitted = request.headers.get(CSRF_HEADER)
    if submitted is None and form is not None:
        value = form.get(CSRF_FIELD)
        submitted = value if isinstance(value, str) else None
    if not csrf_ok(request, submitted):
        raise HTTPException(403, "missing or invalid CSRF token: reload the page and submit again")


def _page(status: int, title: str, detail: str) -> HTMLResponse:
    """A plain page (no stylesheet: it may answer a request that could not fetch one either)."""
    body = Markup(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{t}</title></head><body>'
        '<main><h1 id="error-title">{t}</h1><p id="error-detail" role="alert">{d}</p>'
        '<p><a href="/">Back to the runs</a></p></main></body></html>'
    ).format(t=title, d=detail)
    return HTMLResponse(str(body), status_code=status)


def with_security_headers(send: Send, *, cacheable: bool) -> Send:
    """``send`` that adds ``SECURITY_HEADERS`` (replacing any of the same name) to the response start, and
    ``Cache-Control: no-store`` unless ``cacheable`` or the response set its own."""
    names = {name for name, _ in SECURITY_HEADERS}

    async def stamped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
            headers.extend(SECURITY_HEADERS)
            if not cacheable and not any(k.lower() == b"cache-control" for k, _ in headers):
                headers.append((b"cache-control", b"no-store"))
            message["headers"] = headers
        await send(message)

    return stamped


class GuardMiddleware:
    """Token, Host, read-only, query and CSRF checks for every HTTP request, security headers on every
    response (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, token: str | None, read_only: bool) -> None:
        self.app = app
        self.token = token
        self.read_only = read_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = with_security_headers(send, cacheable=str(scope.get("path", "")).startswith("/static/"))
        request = Request(scope, receive)
        refused = self._refusal(request)
        if refused is not None:
            await refused(scope, receive, send)
            return
        if self.token is not None and request.query_params.get("token") is not None:
            # The token was in the URL once: keep it in a cookie and drop it from the address bar.
            url = request.url.remove_query_params("token")
            response = RedirectResponse(str(url), status_code=303)
            response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="strict")
            await response(scope, receive, send)
            return
        nonce = request.cookies.get(CSRF_COOKIE)
        if scope["method"] in UNSAFE_METHODS:
            replayed = await self._checked_body(request, receive, send)
            if replayed is None:
                return
            receive = replayed
        new_nonce = None if nonce else secrets.token_urlsafe(32)
        if new_nonce:
            scope.setdefault("state", {})["csrf_nonce"] = new_nonce

        started = False

        async def send_with_cookie(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if new_nonce:
                    cookie = f"{CSRF_COOKIE}={new_nonce}; Path=/; HttpOnly; SameSite=Strict"
                    message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
            await send(message)

        try:
            await self.app(scope, receive, send_with_cookie)
        except Exception:
            # Starlette renders a 500 outside this middleware, without the headers: answer here first (the
            # error is raised on, so the server still logs it).
            if not started:
                await _page(500, "Internal error", "the viewer failed on this request")(scope, receive, send)
            raise

    def _refusal(self, request: Request) -> HTMLResponse | None:
        if self.token is None:
            if not loopback_host_header(request.headers.get("host")):
                return _page(403, "Refused", "this viewer answers only on 127.0.0.1 / localhost")
        elif not self._authorised(request):
            return _page(401, "Token required", "open the viewer with ?token=... or an Authorization header")
        if self.read_only and request.method in UNSAFE_METHODS:
            return _page(
                403, "Read-only viewer", "this viewer was started with --read-only: nothing can be saved"
            )
        if CONTROL_IN_PATH.search(str(request.scope.get("path", ""))):
            return _page(400, "Bad request", "the path holds a control character")
        why = query_problem(request.query_params.multi_items())
        if why is not None:
            return _page(400, "Bad request", why)
        return None

    def _authorised(self, request: Request) -> bool:
        token = str(self.token)
        header = request.headers.get("authorization", "")
        offered = [
            header[7:] if header.lower().startswith("bearer ") else "",
            request.cookies.get(TOKEN_COOKIE, ""),
            request.query_params.get("token", ""),
        ]
        return any(o and hmac.compare_digest(o.encode(), token.encode()) for o in offered)

    async def _checked_body(self, request: Request, receive: Receive, send: Send) -> Receive | None:
        """Read the body once, check Origin and the CSRF token, and hand the app a replay of it."""
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != request.headers.get("host"):
            await _page(403, "Refused", "cross-origin POST")(request.scope, receive, send)
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > MAX_FORM_BYTES:
                await _page(413, "Too large", "the form is too large")(request.scope, receive, send)
                return None
            if not message.get("more_body"):
                break
        body = b"".join(chunks)

        def replay() -> Receive:
            sent = False

            async def inner() -> Message:
                nonlocal sent
                if sent:
                    return {"type": "http.disconnect"}
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}

            return inner

        submitted = request.headers.get(CSRF_HEADER)
        if submitted is None and request.headers.get("content-type", "").startswith(
            ("application/x-www-form-urlencoded", "multipart/form-data")
        ):
            form = await Request(request.scope, replay()).form()
            value = form.get(CSRF_FIELD)
            submitted = value if isinstance(value, str) else None
            await form.close()
        if not csrf_ok(request, submitted):
            page = _page(403, "Refused", "missing or invalid CSRF token: reload the page and submit again")
            await page(request.scope, receive, send)
            return None
        return replay()


def new_secret() -> bytes:
    return secrets.token_bytes(32)
