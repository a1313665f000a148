"""CallPolicy: how long one call may take, how failed calls are retried, and when an outage pauses them
(the runner's job; the circuit breaker itself is ``clineval.runner.breaker``)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class CallPolicy:
    """Per-attempt timeout and retry schedule.

    ``max_retries=3`` means at most 4 attempts. Retry ``n`` (0-based) waits
    ``min(backoff_max_s, backoff_base_s * 2**n)`` unless the server sent Retry-After, which is honoured up
    to ``retry_after_cap_s`` (so a server asking for an hour cannot stall a run).

    The circuit breaker (one per live system): it opens when at least ``breaker_failure_rate`` of the last
    ``breaker_window`` outcomes (and at least ``breaker_min_calls`` of them) are retryable failures, pauses
    every call ``breaker_base_s`` doubling up to ``breaker_max_s`` between probes, and gives up after one
    outage of ``max_outage_s`` (60 s at most for an endpoint that never answered; then the remaining calls
    fail as ``circuit_open``). ``breaker_window=0`` turns it off. With the defaults a 30 s outage fails no
    case (probes at about 1, 3, 7, 15 and 31 s).
    """

    timeout_s: float = 60.0
    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    retry_after_cap_s: float = 60.0
    breaker_window: int = 20
    breaker_min_calls: int = 5
    breaker_failure_rate: float = 0.5
    breaker_base_s: float = 1.0
    breaker_max_s: float = 30.0
    max_outage_s: float = 300.0

    def __post_init__(self) -> None:
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            raise ValueError(f"timeout_s must be a positive number of seconds, got {self.timeout_s}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.breaker_window < 0 or self.breaker_min_calls < 1:
            raise ValueError("breaker_window must be >= 0 and breaker_min_calls >= 1")
        if not 0 < self.breaker_failure_rate <= 1:
            raise ValueError(f"breaker_failure_rate must be in (0, 1], got {self.breaker_failure_rate}")
        names = ("backoff_base_s", "backoff_max_s", "retry_after_cap_s", "breaker_base_s", "breaker_max_s")
        for name in (*names, "max_outage_s"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be >= 0 seconds, got {value}")

    def backoff_s(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0 = the first retry)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.retry_after_cap_s)
        return min(self.backoff_max_s, self.backoff_base_s * 2.0**retry)
