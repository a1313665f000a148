"""Sending an alert to every configured channel. A failed delivery is data, never an exception."""

from __future__ import annotations

import asyncio
import logging
import os
import smtplib
import ssl
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from email.utils import parseaddr
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import aiohttp

from clineval.alerts.config import AlertConfig, SmtpConfig, mask_url
from clineval.alerts.model import Alert
from clineval.alerts.render import email_message, flatten, slack_payload

log = logging.getLogger("clineval.alerts")

BODY_MAX = 200  # characters of a failed webhook response kept in the outcome
DETAIL_MAX = 500


@dataclass(frozen=True)
class ChannelOutcome:
    """How one channel went: ``channel`` is ``webhook`` or ``smtp``; ``detail`` holds no secret."""

    channel: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class AlertOutcome:
    """Every channel's outcome; ``ok`` when all of them delivered."""

    channels: list[ChannelOutcome] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.channels)

    @property
    def failures(self) -> list[ChannelOutcome]:
        return [c for c in self.channels if not c.ok]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, for a pipeline to store."""
        return {"ok": self.ok, "channels": [asdict(c) for c in self.channels]}


def _scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return flatten(text)[:DETAIL_MAX]


def _error(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):  # asyncio's and socket's timeouts are this class too
        return "timed out"
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _url_secrets(url: str) -> list[str]:
    """The full URL and every part of it that could carry a token (user info, path, query, fragment)."""
    parts = urlsplit(url)
    found = {url, parts.netloc.rpartition("@")[0], parts.path, parts.query, parts.fragment}
    found |= {unquote(v) for v in found} | {quote(v, safe="/") for v in found}
    return sorted((v for v in found if len(v) > 1), key=len, reverse=True)


async def _webhook(alert: Alert, url: str, timeout_s: float) -> ChannelOutcome:
    where = mask_url(url)
    try:
        payload = slack_payload(alert)
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.post(url, json=payload, allow_redirects=False) as resp,
        ):
            body = (await resp.content.read(4 * BODY_MAX)).decode("utf-8", errors="replace")
            status = resp.status
    except Exception as exc:  # a delivery failure is data
        return ChannelOutcome(
            "webhook", False, _scrub(f"POST {where} failed: {_error(exc)}", _url_secrets(url))
        )
    if 200 <= status < 300:
        return ChannelOutcome("webhook", True, f"POST {where}: HTTP {status}")
    body = _scrub(body, _url_secrets(url))[:BODY_MAX]
    return ChannelOutcome("webhook", False, f"POST {where}: HTTP {status}" + (f": {body}" if body else ""))


def _send_smtp(alert: Alert, smtp: SmtpConfig) -> ChannelOutcome:
    where = f"{smtp.host}:{smtp.port}"
    password = ""
    if smtp.password_env is not None:
        password = os.environ.get(smtp.password_env, "")
        if not password:
            return ChannelOutcome(
                "smtp", False, f"environment variable {smtp.password_env} (the SMTP password) is not set"
            )
    try:
        msg = email_message(alert, smtp)
        recipients = [parseaddr(r)[1] for r in smtp.recipients]
        context = ssl.create_default_context()
        if smtp.ssl:
            client: smtplib.SMTP = smtplib.SMTP_SSL(
                smtp.host, smtp.port, timeout=smtp.timeout_s, context=context
            )
        else:
            client = smtplib.SMTP(smtp.host, smtp.port, timeout=smtp.timeout_s)
        with client:
            if smtp.starttls:
                client.starttls(context=context)
            if smtp.username is not None:
                client.login(smtp.username, password)
            refused = client.send_message(msg, to_addrs=recipients)
    except Exception as exc:  # a delivery failure is data
        return ChannelOutcome("smtp", False, _scrub(f"SMTP {where} failed: {_error(exc)}", [password]))
    sent = len(recipients) - len(refused)
    detail = f"SMTP {where}: sent to {sent} recipient(s)"
    if refused:
        return ChannelOutcome("smtp", False, _scrub(f"{detail}, refused {sorted(refused)}", [password]))
    return ChannelOutcome("smtp", True, detail)


async def send_alert_async(alert: Alert, config: AlertConfig) -> AlertOutcome:
    """Send to the webhook and the SMTP server (concurrently); never raises for a delivery failure."""
    jobs: list[Awaitable[ChannelOutcome]] = []
    if config.webhook_url is not None:
        jobs.append(_webhook(alert, config.webhook_url, config.webhook_timeout_s))
    if config.smtp is not None:
        jobs.append(asyncio.to_thread(_send_smtp, alert, config.smtp))
    outcome = AlertOutcome(list(await asyncio.gather(*jobs)))
    for c in outcome.channels:
        (log.info if c.ok else log.warning)("alert %s via %s: %s", alert.kind, c.channel, c.detail)
    return outcome


def send_alert(alert: Alert, config: AlertConfig) -> AlertOutcome:
    """``send_alert_async`` for synchronous callers (in a worker thread when a loop is already running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(send_alert_async(alert, config))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="clineval-alert") as pool:
        return pool.submit(asyncio.run, send_alert_async(alert, config)).result()
