"""Alerts for a failed release gate, a nightly regression or a failed pipeline: a Slack-compatible webhook
and/or an e-mail over SMTP.

Usage::

    config = load_alert_config(pipeline_yaml["alerts"])          # UserInputError on bad input
    if not gate_result.passed:
        outcome = send_alert(alert_from_gate(gate_result), config)  # never raises for delivery failures
        store(outcome.to_dict())                                  # {"ok": ..., "channels": [...]}

Each regressed metric is one line, the same in every format::

    [task] metric (stratum): 0.933 -> 0.800 (Δ -0.133, p n/a)

(3 decimals; ``n/a`` for a missing or NaN value or p; ``<0.001`` for a tiny p; no ``[task]`` when empty.)

Webhook: ``POST`` of ``{"text": ..., "blocks": [...]}`` as ``application/json``. ``text`` (the
notification fallback) is the title, then up to ``MAX_ROWS`` metric lines (``… and N more``), then
``report: <url|report>``. ``blocks``: a ``header`` (plain-text title, ≤150 chars), a ``section`` (mrkdwn:
``*summary*`` and one ``• line`` per metric, ≤3000 chars) and a ``context`` (run, tenant, baseline, report
link). ``&``, ``<`` and ``>`` in mrkdwn text are escaped as ``&amp;``, ``&lt;``, ``&gt;`` (Slack's rule), so
data cannot inject mentions or links.
A non-2xx answer, a redirect, a timeout or a connection error is a failed outcome.

E-mail: plain text (UTF-8, quoted-printable); ``Subject: {subject_prefix} {title}`` flattened to one line;
``From`` = ``sender``, ``To`` = ``recipients``, ``X-Clineval-Alert: {kind}``; body = title, summary,
``Failed metrics:`` with every metric line, then ``run:``, ``tenant:``, ``baseline:``, ``report:``.

Secrets: the SMTP password comes from the environment variable named by ``password_env`` at send time; a
webhook URL is shown only as ``scheme://host/…``. Neither appears in outcomes, logs or errors.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.alerts.config import AlertConfig, SmtpConfig, load_alert_config, mask_url
    from clineval.alerts.deliver import AlertOutcome, ChannelOutcome, send_alert, send_alert_async
    from clineval.alerts.model import KINDS, Alert, AlertKind, AlertRow, alert_from_gate
    from clineval.alerts.render import (
        MAX_ROWS,
        email_body,
        email_message,
        escape_mrkdwn,
        row_line,
        slack_payload,
    )

__all__ = [
    "KINDS",
    "MAX_ROWS",
    "Alert",
    "AlertConfig",
    "AlertKind",
    "AlertOutcome",
    "AlertRow",
    "ChannelOutcome",
    "SmtpConfig",
    "alert_from_gate",
    "email_body",
    "email_message",
    "escape_mrkdwn",
    "load_alert_config",
    "mask_url",
    "row_line",
    "send_alert",
    "send_alert_async",
    "slack_payload",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.alerts.config": ("AlertConfig", "SmtpConfig", "load_alert_config", "mask_url"),
        "clineval.alerts.deliver": ("AlertOutcome", "ChannelOutcome", "send_alert", "send_alert_async"),
        "clineval.alerts.model": ("Alert", "AlertKind", "AlertRow", "KINDS", "alert_from_gate"),
        "clineval.alerts.render": (
            "MAX_ROWS",
            "email_body",
            "email_message",
            "escape_mrkdwn",
            "row_line",
            "slack_payload",
        ),
    },
)
