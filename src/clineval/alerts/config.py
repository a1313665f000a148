"""Where alerts go: a webhook and/or an SMTP server, validated from a suite or pipeline config mapping.

Secrets never sit in the config: the SMTP password is read at send time from the environment variable
named by ``password_env``. A webhook URL may itself carry a token (Slack's do), so it is kept out of the
model's ``repr`` and shown only masked (:func:`mask_url`) in messages, outcomes and errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import parseaddr
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from clineval.core.errors import UserInputError

DOCS_HINT = "see docs/runs/alerts.md"


def mask_url(url: str) -> str:
    """``scheme://host[:port]/…``: the URL without credentials, path, query or fragment."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "?", parts.port
    except ValueError:
        return "<invalid URL>"
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme or '?'}://{host}{f':{port}' if port else ''}/…"


def _check_address(value: str) -> str:
    if any(ch in value for ch in "\r\n\0") or "@" not in parseaddr(value)[1]:
        raise ValueError(f"not an e-mail address: {value!r}")
    return value


class SmtpConfig(BaseModel):
    """An SMTP server and the envelope of alert e-mails."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    host: str = Field(min_length=1)
    port: int = Field(default=25, ge=1, le=65535)
    sender: str
    recipients: list[str] = Field(min_length=1)
    starttls: bool = False
    ssl: bool = False
    username: str | None = None
    password_env: str | None = None  # the NAME of the environment variable holding the password
    timeout_s: float = Field(default=10, gt=0)
    subject_prefix: str = "[clineval]"

    @field_validator("recipients", mode="before")
    @classmethod
    def _one_recipient(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("sender")
    @classmethod
    def _sender(cls, value: str) -> str:
        return _check_address(value)

    @field_validator("recipients")
    @classmethod
    def _recipients(cls, value: list[str]) -> list[str]:
        return [_check_address(v) for v in value]

    @field_validator("host", "subject_prefix", "username", "password_env")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        if value is not None and any(ch in value for ch in "\r\n\0"):
            raise ValueError("must be a single line")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> SmtpConfig:
        if self.starttls and self.ssl:
            raise ValueError("set starttls or ssl, not both")
        if (self.username is None) != (self.password_env is None):
            raise ValueError("username and password_env go together")
        return self


class AlertConfig(BaseModel):
    """The channels an alert is sent to; at least one of ``webhook_url`` and ``smtp``."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    webhook_url: str | None = Field(default=None, repr=False)
    webhook_timeout_s: float = Field(default=10, gt=0)
    smtp: SmtpConfig | None = None

    @field_validator("webhook_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value)
            ok = parts.scheme in ("http", "https") and bool(parts.hostname)
            parts.port  # noqa: B018 - raises ValueError on a bad port
        except ValueError:
            ok = False
        if not ok or any(ch.isspace() for ch in value):
            raise ValueError("webhook_url must be an http:// or https:// URL")
        return value

    @model_validator(mode="after")
    def _some_channel(self) -> AlertConfig:
        if self.webhook_url is None and self.smtp is None:
            raise ValueError("configure webhook_url and/or smtp")
        return self


def _where(section: str, loc: tuple[int | str, ...]) -> str:
    return ".".join([section, *(str(p) for p in loc)]) if loc else section


def load_alert_config(
    mapping: Mapping[str, Any] | None, *, path: str | Path | None = None, section: str = "alerts"
) -> AlertConfig:
    """Validate an ``alerts:`` mapping; bad input raises ``UserInputError`` with one line (no secrets)."""
    if not isinstance(mapping, Mapping):
        got = type(mapping).__name__
        raise UserInputError(f"{section}: expected a mapping, got {got}", path=path, hint=DOCS_HINT)
    try:
        return AlertConfig.model_validate(dict(mapping))
    except ValidationError as err:
        errors = err.errors(include_input=False, include_url=False)
        first = errors[0]
        msg = str(first["msg"]).removeprefix("Value error, ")
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        hint = DOCS_HINT
        if first["type"] == "extra_forbidden" and str(first["loc"][-1]).lower() == "password":
            hint = "never put the password in a config file: name its environment variable in password_env"
        problem = f"{_where(section, tuple(first['loc']))}: {msg}{more}"
        raise UserInputError(problem, path=path, hint=hint) from None
