"""The viewer's guards: an access token, a loopback-only Host check, CSRF on POSTs, read-only mode.

One pure ASGI middleware checks every request before a route sees it, so a route added later (the
adjudication forms) cannot forget a check. Why each one:

- *token*: on a host other than loopback anyone on the network could read patient-like case text.
  ``Authorization: Bearer T``, or ``?token=T`` once (then an HttpOnly cookie), compared in constant time.
- *Host check* (no token): a page on another site can resolve its own name to 127.0.0.1 (DNS
  rebinding) and read the viewer; such requests carry that site's name in ``Host`` and are refused.
- *CSRF*: a double-submit token: a random cookie, and a hidden form field (or ``X-CSRF-Token``
  header) holding its HMAC under a per-app secret; a POST whose field does not match is refused, and so
  is one whose ``Origin`` names another host.
- *read-only*: every POST is refused with a page that says why.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup, escape
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_COOKIE = "clineval_view_token"
CSRF_COOKIE = "clineval_csrf"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "x-csrf-token"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]", "testserver"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_FORM_BYTES = 1_000_000


def is_loopback(host: str) -> bool:
    """Whether ``--host`` only listens on this machine (no token needed)."""
    return host in LOOPBACK_HOSTS - {"testserver"}


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
    body = Markup(
        "<!doctype html><html><head><meta charset='utf-8'><title>{t}</title></head><body>"
        "<main><h1 id='error-title'>{t}</h1><p id='error-detail'>{d}</p></main></body></html>"
    ).format(t=title, d=detail)
    return HTMLResponse(str(body), status_code=status)


def _host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]")[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


class GuardMiddleware:
    """Token, Host, read-only and CSRF checks for every HTTP request (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, token: str | None, read_only: bool) -> None:
        self.app = app
        self.token = token
        self.read_only = read_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
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

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start" and new_nonce:
                cookie = f"{CSRF_COOKIE}={new_nonce}; Path=/; HttpOnly; SameSite=Strict"
                message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
            await send(message)

        await self.app(scope, receive, send_with_cookie)

    def _refusal(self, request: Request) -> HTMLResponse | None:
        if self.token is None:
            host = _host_name(request.headers.get("host", ""))
            if host not in LOOPBACK_HOSTS:
                return _page(403, "Refused", "this viewer answers only on 127.0.0.1 / localhost")
        elif not self._authorised(request):
            return _page(401, "Token required", "open the viewer with ?token=... or an Authorization header")
        if self.read_only and request.method in UNSAFE_METHODS:
            return _page(
                403, "Read-only viewer", "this viewer was started with --read-only: nothing can be saved"
            )
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
        if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
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
