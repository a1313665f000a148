"""Alerts: rendering, config validation, delivery to a real local HTTP server and a real local SMTP server."""

from __future__ import annotations

import asyncio
import email
import email.policy
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword

from clineval.alerts import (
    Alert,
    AlertConfig,
    AlertRow,
    SmtpConfig,
    alert_from_gate,
    email_message,
    load_alert_config,
    mask_url,
    send_alert,
    send_alert_async,
    slack_payload,
)
from clineval.analysis.gate import GateResult, GateRow
from clineval.core.errors import UserInputError

SECRET = "XXXXSECRET"
PASSWORD = "s3cret-Pa55-word"
PW_ENV = "CLINEVAL_TEST_SMTP_PASSWORD"
TITLE = "gate failed (strict): run run012345678 vs baseline prod v3 (tenant acme)"
LINE = "[guidelines] guideline_adherence (condition=copd): 0.933 -> 0.800 (Δ -0.133, p n/a)"
SLACK_LINE = "[guidelines] guideline_adherence (condition=copd): 0.933 -&gt; 0.800 (Δ -0.133, p n/a)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --- a local HTTP server that records what it is sent -------------------------------------------------


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: bytes


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    status = 200
    delay_s = 0.0
    requests: list[Recorded]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.requests.append(Recorded(self.path, dict(self.headers.items()), body))
        time.sleep(self.server.delay_s)
        reply = b"ok" if self.server.status < 300 else ("no_service " + self.path + "x" * 500).encode()
        self.send_response(self.server.status)
        if 300 <= self.server.status < 400:
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _hook(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/services/T000/B000/{SECRET}"


# --- a local SMTP server (aiosmtpd) ---------------------------------------------------------------------


@dataclass
class _Mailbox:
    envelopes: list[Envelope] = field(default_factory=list)
    logins: list[bytes] = field(default_factory=list)

    async def handle_DATA(self, server: Any, session: Any, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        return "250 OK"

    def message(self, i: int = 0) -> EmailMessage:
        raw = self.envelopes[i].original_content or b""
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        assert isinstance(msg, EmailMessage)
        return msg


@dataclass
class _Smtp:
    mailbox: _Mailbox
    port: int


def _start_smtp(auth: bool) -> tuple[Controller, _Smtp]:
    mailbox = _Mailbox()

    def authenticator(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        ok = isinstance(data, LoginPassword) and data.login == b"ci" and data.password == PASSWORD.encode()
        if ok:
            mailbox.logins.append(data.login)
        return AuthResult(success=ok, handled=False)

    port = _free_port()
    kwargs: dict[str, Any] = (
        {"authenticator": authenticator, "auth_require_tls": False, "auth_required": True} if auth else {}
    )
    controller = Controller(mailbox, hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    return controller, _Smtp(mailbox, port)


@pytest.fixture
def smtp_server() -> Iterator[_Smtp]:
    controller, smtp = _start_smtp(auth=False)
    yield smtp
    controller.stop()


@pytest.fixture
def smtp_auth_server() -> Iterator[_Smtp]:
    controller, smtp = _start_smtp(auth=True)
    yield smtp
    controller.stop()


def _smtp(port: int, **extra: Any) -> SmtpConfig:
    fields: dict[str, Any] = {"sender": "ci@example.org", "recipients": ["a@example.org"], **extra}
    return SmtpConfig(host="127.0.0.1", port=port, **fields)


# --- alerts ---------------------------------------------------------------------------------------------


def _gate(*, mode: str = "strict", p: float | None = None) -> GateResult:
    rows = [
        GateRow("guidelines", "guideline_adherence", 3, 14 / 15, 0.8, "fail", "condition=copd", p=p),
        GateRow("guidelines", "guideline_adherence", 3, 0.9, 0.95, "pass"),
        GateRow("guidelines", "judge_clarity", 4, 0.7, 0.1, "tracked"),
    ]
    return GateResult("run0123456789abcdef", "prod", 3, "acme", mode, rows)


def _alert(**extra: Any) -> Alert:
    return alert_from_gate(_gate(), **extra)


def test_alert_from_gate_lists_only_the_failed_rows() -> None:
    alert = _alert()
    assert alert.kind == "gate_failed"
    assert alert.title == TITLE
    assert alert.summary == "1 gating metric(s) below the baseline"
    assert (alert.run_id, alert.tenant, alert.baseline_name, alert.baseline_version) == (
        "run0123456789abcdef",
        "acme",
        "prod",
        3,
    )
    assert len(alert.rows) == 1
    row = alert.rows[0]
    assert (row.task, row.metric, row.stratum, row.baseline, row.candidate) == (
        "guidelines",
        "guideline_adherence",
        "condition=copd",
        14 / 15,
        0.8,
    )
    assert row.delta == pytest.approx(0.8 - 14 / 15)
    payload = slack_payload(alert)
    assert payload["text"].splitlines() == [alert.title, SLACK_LINE]  # Slack shows "&gt;" as ">"
    assert "0.950" not in payload["text"] and "judge_clarity" not in payload["text"]


def test_nightly_kind_p_values_and_passed_gate() -> None:
    alert = alert_from_gate(_gate(mode="statistical", p=0.0123), kind="nightly_regression")
    assert alert.title.startswith("nightly regression: run run012345678 vs baseline prod v3")
    assert slack_payload(alert)["text"].splitlines()[1].endswith("(Δ -0.133, p 0.012)")
    tiny = alert_from_gate(_gate(mode="statistical", p=0.00001))
    assert slack_payload(tiny)["text"].splitlines()[1].endswith("(Δ -0.133, p &lt;0.001)")
    passed = GateResult("r", "prod", 1, "acme", "strict", [GateRow("t", "m", 1, 0.5, 0.6, "pass")])
    with pytest.raises(ValueError, match="passed"):
        alert_from_gate(passed)
    with pytest.raises(ValueError, match="report_url"):
        _alert(report_url="javascript:alert(1)")


def test_slack_payload_blocks_and_row_cap() -> None:
    rows = [AlertRow("t", f"m{i}", "", 0.5, 0.4, -0.1, None) for i in range(25)]
    alert = Alert(
        "nightly_regression", "nightly", "25 metrics", rows, run_id="r1", report_url="https://x.org/r"
    )
    payload = slack_payload(alert)
    assert [b["type"] for b in payload["blocks"]] == ["header", "section", "context"]
    assert payload["blocks"][0]["text"] == {"type": "plain_text", "text": "nightly"}
    section = payload["blocks"][1]["text"]["text"]
    assert section.splitlines()[0] == "*25 metrics*"
    assert section.splitlines()[1] == "• [t] m0: 0.500 -&gt; 0.400 (Δ -0.100, p n/a)"
    assert len(section.splitlines()) == 1 + 20 + 1 and section.endswith("… and 5 more")
    assert payload["text"].splitlines()[-2:] == ["… and 5 more", "report: <https://x.org/r|report>"]
    assert payload["blocks"][2]["elements"][0]["text"] == "run r1 · <https://x.org/r|report>"


def test_slack_escaping_of_data() -> None:
    row = AlertRow("t<&>", "guideline_adherence", "condition=<script>&", 0.9, 0.8, -0.1, None)
    payload = slack_payload(Alert("gate_failed", "gate <!channel> & co", "", [row]))
    section = payload["blocks"][1]["text"]["text"]
    for text in (payload["text"], section):
        assert "(condition=&lt;script&gt;&amp;)" in text
        assert "[t&lt;&amp;&gt;]" in text
        assert "<script>" not in text
    assert payload["text"].splitlines()[0] == "gate &lt;!channel&gt; &amp; co"
    assert payload["blocks"][0]["text"]["text"] == "gate <!channel> & co"  # plain_text: shown literally


def test_email_message_headers_and_body() -> None:
    alert = Alert("pipeline_failed", "nightly\r\nBcc: evil@x.org  failed", "the judge timed out", [])
    msg = email_message(alert, _smtp(25, recipients=["a@example.org", "Ops <ops@example.org>"]))
    assert msg["Subject"] == "[clineval] nightly Bcc: evil@x.org failed"
    assert msg["Bcc"] is None
    assert msg["To"] == "a@example.org, Ops <ops@example.org>"
    assert msg["X-Clineval-Alert"] == "pipeline_failed"
    assert msg.get_content().splitlines() == ["nightly Bcc: evil@x.org failed", "", "the judge timed out"]


# --- webhook delivery -----------------------------------------------------------------------------------


def test_webhook_posts_slack_json(http_server: _Server) -> None:
    url = _hook(http_server)
    outcome = send_alert(_alert(), AlertConfig(webhook_url=url))
    assert outcome.ok, outcome
    [got] = http_server.requests
    assert got.path == f"/services/T000/B000/{SECRET}"
    assert got.headers["Content-Type"].startswith("application/json")
    body = json.loads(got.body)
    assert body["text"].splitlines()[1] == SLACK_LINE
    assert [b["type"] for b in body["blocks"]] == ["header", "section", "context"]
    assert f"• {SLACK_LINE}" in body["blocks"][1]["text"]["text"]
    [channel] = outcome.channels
    port = http_server.server_address[1]
    assert channel.channel == "webhook"
    assert channel.detail == f"POST http://127.0.0.1:{port}/…: HTTP 200"
    assert SECRET not in json.dumps(outcome.to_dict())


@pytest.mark.parametrize("status", [500, 404, 302])
def test_webhook_error_status_is_a_failed_outcome(http_server: _Server, status: int) -> None:
    http_server.status = status
    outcome = send_alert(_alert(), AlertConfig(webhook_url=_hook(http_server)))
    [channel] = outcome.channels
    assert not outcome.ok and not channel.ok
    assert f"HTTP {status}" in channel.detail
    assert SECRET not in channel.detail  # the server echoes its path in the body: scrubbed
    if status != 302:
        body = channel.detail.split(f"HTTP {status}: ", 1)[1]
        assert body.startswith("no_service ***x") and len(body) == 200
    assert len(http_server.requests) == 1  # the redirect was not followed


def test_webhook_unreachable_and_timeout(http_server: _Server) -> None:
    url = f"http://127.0.0.1:{_free_port()}/services/T000/B000/{SECRET}"
    [channel] = send_alert(_alert(), AlertConfig(webhook_url=url, webhook_timeout_s=2)).channels
    assert not channel.ok and "failed" in channel.detail and SECRET not in channel.detail
    http_server.delay_s = 1.0
    config = AlertConfig(webhook_url=_hook(http_server), webhook_timeout_s=0.2)
    [channel] = send_alert(_alert(), config).channels
    assert not channel.ok and channel.detail.endswith("failed: timed out")


def test_send_alert_inside_a_running_loop_and_async(http_server: _Server) -> None:
    config = AlertConfig(webhook_url=_hook(http_server))

    async def pipeline() -> tuple[bool, bool]:
        sync = send_alert(_alert(), config)  # a loop is running: sent from a worker thread
        direct = await send_alert_async(_alert(), config)
        return sync.ok, direct.ok

    assert asyncio.run(pipeline()) == (True, True)
    assert len(http_server.requests) == 2


# --- SMTP delivery --------------------------------------------------------------------------------------


def test_smtp_delivers_the_message(smtp_server: _Smtp) -> None:
    smtp = _smtp(
        smtp_server.port, recipients=["a@example.org", "Ops <ops@example.org>"], subject_prefix="[ce]"
    )
    outcome = send_alert(_alert(report_url="https://ci.example.org/r/1"), AlertConfig(smtp=smtp))
    assert outcome.ok, outcome
    assert outcome.channels[0].detail == f"SMTP 127.0.0.1:{smtp_server.port}: sent to 2 recipient(s)"
    [envelope] = smtp_server.mailbox.envelopes
    assert envelope.mail_from == "ci@example.org"
    assert envelope.rcpt_tos == ["a@example.org", "ops@example.org"]
    msg = smtp_server.mailbox.message()
    assert msg["From"] == "ci@example.org"
    assert msg["To"] == "a@example.org, Ops <ops@example.org>"
    # the stdlib may fold a long subject right after "Subject:"; its parser then keeps the leading space
    assert msg["Subject"].strip() == f"[ce] {TITLE}"
    assert msg.get_content().splitlines() == [
        TITLE,
        "",
        "1 gating metric(s) below the baseline",
        "",
        "Failed metrics:",
        f"  {LINE}",
        "",
        "run: run0123456789abcdef",
        "tenant: acme",
        "baseline: prod v3",
        "report: https://ci.example.org/r/1",
    ]


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning")  # loopback only
def test_smtp_login_with_password_from_env(smtp_auth_server: _Smtp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PW_ENV, PASSWORD)
    config = AlertConfig(smtp=_smtp(smtp_auth_server.port, username="ci", password_env=PW_ENV))
    outcome = send_alert(_alert(), config)
    assert outcome.ok, outcome
    assert smtp_auth_server.mailbox.logins == [b"ci"]
    assert len(smtp_auth_server.mailbox.envelopes) == 1
    assert PASSWORD not in json.dumps(outcome.to_dict())

    monkeypatch.setenv(PW_ENV, PASSWORD + "-wrong")
    [channel] = send_alert(_alert(), config).channels
    assert not channel.ok and "535" in channel.detail
    assert PASSWORD not in channel.detail
    assert len(smtp_auth_server.mailbox.envelopes) == 1


def test_smtp_missing_password_env_and_failures(smtp_server: _Smtp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PW_ENV, raising=False)
    config = AlertConfig(smtp=_smtp(smtp_server.port, username="ci", password_env=PW_ENV))
    [channel] = send_alert(_alert(), config).channels
    assert not channel.ok
    assert channel.detail == f"environment variable {PW_ENV} (the SMTP password) is not set"
    # STARTTLS asked of a server that cannot do it: fails closed, nothing sent in the clear
    [channel] = send_alert(_alert(), AlertConfig(smtp=_smtp(smtp_server.port, starttls=True))).channels
    assert not channel.ok and "STARTTLS" in channel.detail
    [channel] = send_alert(_alert(), AlertConfig(smtp=_smtp(_free_port(), timeout_s=2))).channels
    assert not channel.ok and channel.detail.startswith("SMTP 127.0.0.1:")
    assert smtp_server.mailbox.envelopes == []


def test_both_channels_one_failing(smtp_server: _Smtp, http_server: _Server) -> None:
    http_server.status = 500
    config = AlertConfig(webhook_url=_hook(http_server), smtp=_smtp(smtp_server.port))
    outcome = send_alert(_alert(), config)
    assert [(c.channel, c.ok) for c in outcome.channels] == [("webhook", False), ("smtp", True)]
    assert not outcome.ok and [c.channel for c in outcome.failures] == ["webhook"]
    assert len(smtp_server.mailbox.envelopes) == 1


# --- configuration --------------------------------------------------------------------------------------

SMTP_OK = {"host": "mail.example.org", "sender": "ci@example.org", "recipients": ["a@example.org"]}


def test_load_alert_config_valid() -> None:
    url = f"https://hooks.slack.com/services/T000/B000/{SECRET}"
    config = load_alert_config({"webhook_url": url, "smtp": {**SMTP_OK, "recipients": "b@example.org"}})
    assert config.webhook_url == url
    assert config.smtp is not None and config.smtp.recipients == ["b@example.org"]
    assert (config.smtp.port, config.smtp.timeout_s, config.smtp.subject_prefix) == (25, 10, "[clineval]")
    assert SECRET not in repr(config)
    assert mask_url(url) == "https://hooks.slack.com/…"
    assert mask_url("http://user:pw@[::1]:8080/a?b=c") == "http://[::1]:8080/…"


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        ({"webhook_url": f"ftp://hooks/{SECRET}"}, "alerts.webhook_url: webhook_url must be an http"),
        ({"webhook_url": f"htps//hooks/{SECRET}"}, "alerts.webhook_url: webhook_url must be an http"),
        ({}, "alerts: configure webhook_url and/or smtp"),
        ({"smtp": {**SMTP_OK, "port": 0}}, "alerts.smtp.port: Input should be greater than or equal to 1"),
        (
            {"smtp": {**SMTP_OK, "port": 70000}},
            "alerts.smtp.port: Input should be less than or equal to 65535",
        ),
        ({"smtp": {**SMTP_OK, "starttls": True, "ssl": True}}, "alerts.smtp: set starttls or ssl, not both"),
        ({"smtp": {**SMTP_OK, "recipients": []}}, "alerts.smtp.recipients: List should have at least 1 item"),
        ({"smtp": {**SMTP_OK, "recipients": ["nobody"]}}, "not an e-mail address: 'nobody'"),
        ({"smtp": {**SMTP_OK, "username": "ci"}}, "username and password_env go together"),
        ({"smtp": {**SMTP_OK, "sender": "a@b.org\nBcc: x@y.org"}}, "alerts.smtp.sender: not an e-mail"),
        ({"webhook": "https://x.org"}, "alerts.webhook: Extra inputs are not permitted"),
        (
            {"webhook_url": "https://x.org", "webhook_timeout_s": 0},
            "alerts.webhook_timeout_s: Input should be",
        ),
    ],
)
def test_load_alert_config_errors(mapping: dict[str, Any], expected: str) -> None:
    with pytest.raises(UserInputError) as info:
        load_alert_config(mapping, path="pipeline.yaml")
    text = str(info.value)
    assert text.startswith("pipeline.yaml: ") and expected in text
    assert "\n" not in text and SECRET not in text


def test_load_alert_config_password_and_type() -> None:
    with pytest.raises(UserInputError) as info:
        load_alert_config({"smtp": {**SMTP_OK, "password": PASSWORD}})
    assert "alerts.smtp.password: Extra inputs are not permitted" in str(info.value)
    assert "password_env" in str(info.value) and PASSWORD not in str(info.value)
    with pytest.raises(UserInputError, match="alerts: expected a mapping, got list"):
        load_alert_config(["https://x.org"])  # type: ignore[arg-type]
