"""A circuit breaker per live system: an outage pauses the calls instead of burning their retries.

States: CLOSED (calls go through; the outcome of each is kept in a sliding window), OPEN (when at least
``breaker_min_calls`` of the last ``breaker_window`` outcomes are known and at least
``breaker_failure_rate`` of them are retryable failures: connection errors, timeouts, 5xx, 408, 429; every
new call and every retry waits), HALF_OPEN (after the pause one call, the **probe**, goes through: the
call that has waited longest, so successive probes are different cases). A probe that succeeds closes the
breaker and releases every waiting call; a probe that fails re-opens it for twice the previous pause
(``breaker_base_s`` doubling up to ``breaker_max_s``). Waiting costs a call no retry: only its real
attempts count against ``max_retries`` (a failed probe is a real attempt, so a case that fails on its own
cannot hold the run: it fails after its retries like any call).

``max_outage_s`` bounds one outage (from opening to closing): once it has passed, the breaker is DEAD for
the rest of the run and every waiting or new call fails at once with kind ``circuit_open``, so a dead
endpoint still ends the run. An endpoint that has not answered once in this run (most often a wrong URL or
a server not started) is given at most ``NEVER_ANSWERED_S`` (60 s) of it. Each change of state is logged as
one warning line naming the system, its model and its endpoint URL (``[openai m at http://host:8000/v1]``:
never a key; user:password and the query string are dropped from the URL).

All of this runs on one event loop: the state is only changed between awaits, so it needs no lock.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections import deque
from typing import Any

from clineval.core.helpers.urls import endpoint_url
from clineval.runner.policy import CallPolicy

log = logging.getLogger(__name__)
NEVER_ANSWERED_S = 60.0  # twice the 30 s outage the defaults are built to ride out


class State(enum.Enum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"
    DEAD = "dead"


class CircuitDead(Exception):
    """Raised by ``admit`` once the outage outlasted ``max_outage_s``; ``message`` says why."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class CircuitBreaker:
    """See the module docstring. ``events`` keeps every change of state (the logged lines), in order."""

    def __init__(self, policy: CallPolicy, name: str, url: str = "") -> None:
        self.policy, self.name, self.url = policy, name, url
        self.state = State.CLOSED
        self.events: list[str] = []
        self._window: deque[tuple[bool, str]] = deque(maxlen=policy.breaker_window)
        self._queue: deque[asyncio.Future[bool]] = deque()
        self._probing = False
        self._opens = 0  # consecutive openings in this outage: the pause doubles with each
        self._outage_started = 0.0
        self._last_kind = ""
        self._answered = False  # has any call had an answer (even an error status) in this run?
        self._timer: asyncio.TimerHandle | None = None

    async def admit(self) -> bool:
        """Wait until a call may go; True when it is the probe (its outcome decides the state)."""
        while True:
            if self.state is State.CLOSED:
                return False
            if self.state is State.DEAD:
                raise CircuitDead(self._dead_message())
            if self.state is State.HALF_OPEN and not self._probing and not self._queue:
                self._probing = True
                return True
            waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            self._queue.append(waiter)
            try:
                if await waiter:
                    return True
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled() and waiter.result():
                    self.release_probe()  # handed the probe while being cancelled: pass it on
                elif waiter in self._queue:
                    self._queue.remove(waiter)
                raise

    def record(self, failed: bool, kind: str, *, probe: bool, retry_after: float | None = None) -> None:
        """The outcome of an attempt admitted by ``admit`` (``failed``: a retryable failure)."""
        if failed:
            self._last_kind = kind
        else:
            self._answered = True
        if probe:
            self._probing = False
            if failed:
                self._open(f"probe failed ({kind})", retry_after)
            else:
                self._close()
            return
        if self.state is not State.CLOSED:
            return  # an attempt started before the breaker opened: the probe decides
        self._window.append((failed, kind))
        failures = [k for f, k in self._window if f]
        n = len(self._window)
        if n >= self.policy.breaker_min_calls and len(failures) >= self.policy.breaker_failure_rate * n:
            kinds = ", ".join(sorted(set(failures)))
            self._open(f"{len(failures)}/{n} recent calls failed ({kinds})", retry_after)

    def release_probe(self) -> None:
        """The probe ended without an outcome (cancelled): the next waiting call probes instead."""
        self._probing = False
        self._hand_probe()

    def _open(self, why: str, retry_after: float | None) -> None:
        now = time.monotonic()
        if self._opens == 0:
            self._outage_started = now
        self._opens += 1
        outage = now - self._outage_started
        pause = min(self.policy.breaker_max_s, self.policy.breaker_base_s * 2.0 ** (self._opens - 1))
        if retry_after is not None:  # the server's own estimate, within the breaker's cap
            pause = max(pause, min(retry_after, self.policy.breaker_max_s))
        pause = min(pause, self._max_outage() - outage)  # the last probe comes at the max outage
        if pause <= 0:
            self._die(outage)
            return
        self.state = State.OPEN
        so_far = f" (outage {outage:.1f} s so far)" if self._opens > 1 else ""
        self._event(f"circuit open: {why}; pausing {round(pause, 2):g} s{so_far}")
        self._timer = asyncio.get_running_loop().call_later(pause, self._half_open)

    def _max_outage(self) -> float:
        cap = self.policy.max_outage_s
        return cap if self._answered else min(cap, NEVER_ANSWERED_S)

    def _half_open(self) -> None:
        self._timer = None
        if self.state is State.OPEN:
            self.state = State.HALF_OPEN
            self._event("circuit half-open: one probe call goes through", level=logging.INFO)
            self._hand_probe()

    def _hand_probe(self) -> None:
        while self.state is State.HALF_OPEN and not self._probing and self._queue:
            waiter = self._queue.popleft()
            if not waiter.done():
                waiter.set_result(True)
                self._probing = True

    def _close(self) -> None:
        outage = time.monotonic() - self._outage_started
        self.state, self._opens = State.CLOSED, 0
        self._window.clear()  # the outage's failures must not re-open it at the next failure
        self._event(f"circuit closed: probe succeeded after an outage of {outage:.1f} s")
        self._release_all()

    def _die(self, outage: float) -> None:
        self.state = State.DEAD
        self._event(
            f"circuit open for good: the endpoint failed for {outage:.1f} s (max outage "
            f"{self._max_outage():g} s); the remaining calls fail as circuit_open"
        )
        self._release_all()

    def _release_all(self) -> None:
        while self._queue:
            waiter = self._queue.popleft()
            if not waiter.done():
                waiter.set_result(False)

    def _dead_message(self) -> str:
        last = f"; last error: {self._last_kind}" if self._last_kind else ""
        where = f" {self.url}" if self.url else ""
        return f"the endpoint{where} was down longer than the max outage of {self._max_outage():g} s{last}"

    def _event(self, line: str, level: int = logging.WARNING) -> None:
        line = f"{line} [{self.name}]"
        self.events.append(line)
        log.log(level, "%s", line)


# id(system) -> (system, the run's loop, its breaker). Keyed by identity (a system need not be hashable);
# the entries of finished runs (closed loops) are dropped at the next new entry.
_BREAKERS: dict[int, tuple[Any, asyncio.AbstractEventLoop, CircuitBreaker]] = {}


def breaker_for(system: Any, policy: CallPolicy) -> CircuitBreaker | None:
    """The breaker shared by every call of ``system`` in this run (this event loop), or None when the
    system only replays recorded outputs or the policy turns breakers off (``breaker_window=0``).

    A system may name ``circuit_owner`` (another system) to share that one's breaker (a judge's samples)."""
    owner = getattr(system, "circuit_owner", system)
    if not getattr(owner, "live", False) or policy.breaker_window == 0:
        return None
    loop = asyncio.get_running_loop()
    found = _BREAKERS.get(id(owner))
    if found is not None and found[0] is owner and found[1] is loop:
        return found[2]
    for key in [k for k, (_, old, _) in _BREAKERS.items() if old.is_closed()]:
        del _BREAKERS[key]
    spec = getattr(owner, "spec", None)
    args = getattr(spec, "args", {}) or {}
    url = endpoint_url(args.get("base_url") or args.get("url"))
    name = f"{getattr(spec, 'type', type(owner).__name__)} {args.get('model') or ''}".strip()
    name += f" at {url}" if url else ""
    breaker = CircuitBreaker(policy, name, url)  # a new run (asyncio.run) starts with a closed breaker
    _BREAKERS[id(owner)] = (owner, loop, breaker)
    return breaker
