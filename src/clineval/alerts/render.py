"""Rendering an alert: the shared metric lines, the Slack-compatible JSON payload and the e-mail."""

from __future__ import annotations

import math
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from typing import Any
from urllib.parse import quote

from clineval.alerts.config import SmtpConfig
from clineval.alerts.model import Alert, AlertRow

MAX_ROWS = 20  # metric lines listed in a Slack message; the rest are counted
MAX_EMAIL_ROWS = 1000
SLACK_HEADER_MAX = 150  # Block Kit limits
SLACK_TEXT_MAX = 3000


def flatten(text: str) -> str:
    """One line: every run of whitespace (newlines included) becomes one space."""
    return " ".join(text.split())


def escape_mrkdwn(text: str) -> str:
    """Slack's escaping of control characters: ``&`` ``<`` ``>`` become entities."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _num(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.3f}"


def _p(value: float | None) -> str:
    if value is None or math.isnan(value):
        return "n/a"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def row_line(row: AlertRow) -> str:
    """``[task] metric (stratum): 0.933 -> 0.800 (Δ -0.133, p n/a)``."""
    delta = "n/a" if row.delta is None or math.isnan(row.delta) else f"{row.delta:+.3f}"
    task = f"[{row.task}] " if row.task else ""
    return flatten(
        f"{task}{row.label}: {_num(row.baseline)} -> {_num(row.candidate)} (Δ {delta}, p {_p(row.p)})"
    )


def _row_lines(alert: Alert, max_rows: int) -> list[str]:
    lines = [row_line(r) for r in alert.rows[:max_rows]]
    if len(alert.rows) > max_rows:
        lines.append(f"… and {len(alert.rows) - max_rows} more")
    return lines


def _facts(alert: Alert) -> list[tuple[str, str]]:
    facts = [("run", alert.run_id), ("tenant", alert.tenant)]
    if alert.baseline_name:
        version = "" if alert.baseline_version is None else f" v{alert.baseline_version}"
        facts.append(("baseline", f"{alert.baseline_name}{version}"))
    return [(k, flatten(v)) for k, v in facts if v]


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` characters, never ending inside an ``&...;`` entity."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    amp = head.rfind("&")
    if amp != -1 and ";" not in head[amp:]:
        head = head[:amp]
    return head + "…"


def _link(url: str) -> str:
    """A URL safe inside Slack's ``<url|label>``: ``<``, ``>``, ``|`` and spaces percent-encoded."""
    return escape_mrkdwn(quote(url, safe=":/?#[]@!$&'()*+,;=%~"))


def slack_payload(alert: Alert, *, max_rows: int = MAX_ROWS) -> dict[str, Any]:
    """``{"text": fallback, "blocks": [header, section, context]}`` for a Slack-compatible webhook."""
    title = flatten(alert.title)
    lines = [escape_mrkdwn(line) for line in _row_lines(alert, max_rows)]
    summary = escape_mrkdwn(alert.summary.strip())
    report = f"<{_link(alert.report_url)}|report>" if alert.report_url else ""
    text = "\n".join([escape_mrkdwn(title), *lines, *([f"report: {report}"] if report else [])])
    body = "\n".join([*([f"*{summary}*"] if summary else []), *(f"• {line}" for line in lines)])
    context = " · ".join(
        [*(f"{k} {escape_mrkdwn(v)}" for k, v in _facts(alert)), *([report] if report else [])]
    )
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": _cut(title, SLACK_HEADER_MAX)}}
    ]
    if body:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(body, SLACK_TEXT_MAX)}})
    if context:
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": _cut(context, 2000)}]})
    return {"text": _cut(text, SLACK_TEXT_MAX), "blocks": blocks}


def email_body(alert: Alert, *, max_rows: int = MAX_EMAIL_ROWS) -> str:
    """The plain-text e-mail body: title, summary, metric lines, run facts, report link."""
    parts = [flatten(alert.title), ""]
    if alert.summary.strip():
        parts += [alert.summary.strip(), ""]
    if alert.rows:
        parts += ["Failed metrics:", *(f"  {line}" for line in _row_lines(alert, max_rows)), ""]
    parts += [f"{k}: {v}" for k, v in _facts(alert)]
    if alert.report_url:
        parts.append(f"report: {flatten(alert.report_url)}")
    return "\n".join(parts).rstrip() + "\n"


def email_message(alert: Alert, smtp: SmtpConfig) -> EmailMessage:
    """The alert as a plain-text e-mail; the subject is ``"{prefix} {title}"`` on one line."""
    msg = EmailMessage()
    msg["Subject"] = flatten(f"{smtp.subject_prefix} {alert.title}")
    msg["From"] = smtp.sender
    msg["To"] = ", ".join(smtp.recipients)
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = make_msgid(domain=parseaddr(smtp.sender)[1].rpartition("@")[2] or None)
    msg["X-Clineval-Alert"] = alert.kind
    msg.set_content(email_body(alert), cte="quoted-printable")
    return msg
