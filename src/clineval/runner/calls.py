"""call_system: one case through one system with the cache, a per-attempt timeout and retries.

It never raises (except CancelledError): every outcome is a SystemOutput, a failure being recorded data.
Retried: timeouts and every ``RetryableCallError`` (connection errors, 408, 429, 5xx), and a reply that is
not what the system should send (``malformed_response``, see ``RETRIED_ANSWERS``).
Successes are cached so a re-run reproduces the same scores with zero calls; a failure is never cached
(``circuit_open`` included: no call was even made), so a re-run calls the failed cases again with no flag.
Every attempt of a live system passes its circuit breaker (``clineval.runner.breaker``): during an outage
the calls wait there, which costs no retry.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from clineval.core.case import Case
from clineval.core.errors import RetryableCallError, SystemCallError
from clineval.core.helpers.redaction import exception_message
from clineval.core.output import SystemOutput
from clineval.core.protocols import System
from clineval.runner.breaker import CircuitDead, breaker_for
from clineval.runner.cache import ResponseCache
from clineval.runner.policy import CallPolicy

log = logging.getLogger(__name__)

# Failures a system reports as final that another attempt often cures: the endpoint answered, but the reply
# was cut short or garbled (a truncated body under load, a proxy's page with status 200). They are retried
# like a 5xx (2% of such replies cost ~2.3% of the cases for good when they were not), but they are no
# outage: the circuit breaker counts them as answers, so an endpoint that always garbles its replies still
# ends each case as ``malformed_response`` after its retries, never as ``circuit_open``.
RETRIED_ANSWERS = frozenset({"malformed_response"})


def _finish(output: SystemOutput, attempts: int, elapsed: float, live: bool) -> SystemOutput:
    """Fill ``attempts`` and ``latency_s`` of the last attempt, unless the system reported its own latency
    or only replays recorded outputs (a replay's microseconds are not the system's latency)."""
    update: dict[str, object] = {} if output.attempts == attempts else {"attempts": attempts}
    if output.latency_s is None and live:
        update["latency_s"] = elapsed
    if output.error is not None and output.error.attempts != attempts:
        update["error"] = output.error.model_copy(update={"attempts": attempts})
    return output.model_copy(update=update) if update else output  # a replay's output: no copy


async def _try_once(
    system: System, case: Case, policy: CallPolicy, attempt: int
) -> SystemOutput | RetryableCallError:
    """One attempt: the final output (a success or a terminal failure), or the retryable error."""
    started = time.perf_counter()
    try:
        if getattr(system, "never_suspends", False):
            # its ``call`` never awaits, so a timeout could never fire; arming one costs a timer per case
            output = await system.call(case)
        else:
            async with asyncio.timeout(policy.timeout_s):
                output = await system.call(case)
    except TimeoutError:
        return RetryableCallError("timeout", f"no response within {policy.timeout_s:g} s")
    except RetryableCallError as exc:
        return exc
    except SystemCallError as exc:
        if exc.kind in RETRIED_ANSWERS:
            return RetryableCallError(exc.kind, exc.message, status=exc.status)
        return SystemOutput.failure(
            exc.kind, exc.message, attempts=attempt, latency_s=time.perf_counter() - started
        )
    except Exception as exc:  # a bug in an adapter must not crash the run
        log.debug("system %s raised on case %s", system.spec.type, case.id, exc_info=True)
        return SystemOutput.failure("exception", exception_message(exc), attempts=attempt)  # secrets masked
    return _finish(output, attempt, time.perf_counter() - started, system.live)


async def _attempts(system: System, case: Case, policy: CallPolicy) -> SystemOutput:
    # Waiting on an open circuit breaker costs no retry: only real attempts count against max_retries.
    breaker = breaker_for(system, policy)
    attempt = 0
    while True:
        probe = False
        if breaker is not None:
            try:
                probe = await breaker.admit()
            except CircuitDead as dead:
                return SystemOutput.failure("circuit_open", dead.message, attempts=attempt)
        attempt += 1
        try:
            result = await _try_once(system, case, policy, attempt)
        except asyncio.CancelledError:
            if probe and breaker is not None:
                breaker.release_probe()
            raise
        if not isinstance(result, RetryableCallError):
            if breaker is not None:
                breaker.record(False, "", probe=probe)  # any answer, even a 4xx: the endpoint is up
            return result
        error = result
        if breaker is not None:
            outage = error.kind not in RETRIED_ANSWERS
            breaker.record(outage, error.kind, probe=probe, retry_after=error.retry_after)
        if attempt > policy.max_retries:
            message = f"{error.message} (gave up after {attempt} attempts)"
            return SystemOutput.failure(error.kind, message, attempts=attempt)
        await asyncio.sleep(policy.backoff_s(attempt - 1, error.retry_after))


async def call_system(
    system: System,
    case: Case,
    policy: CallPolicy,
    cache: ResponseCache | None,
    *,
    retry_failed: bool = False,
    usable: Callable[[SystemOutput], bool] | None = None,
) -> SystemOutput:
    """The output of ``system`` for ``case``: from the cache (``cached=True``, no call) or by calling it.

    Only answers are cached: a failure is never written, and a cached failure is a miss. ``usable``, when
    given, says which answers count as such (a judge reply its parser cannot read is not one), so a reply
    the caller cannot use is re-asked on the next run instead of replayed. ``retry_failed`` is kept for
    callers written before failures stopped being cached."""
    del retry_failed  # see the docstring

    def answer(output: SystemOutput) -> bool:
        return not output.failed and (usable is None or usable(output))

    key: str | None = None
    try:
        if cache is not None:
            key = system.cache_key(case)
        if key is not None and cache is not None:
            hit = cache.get(key)
            if hit is not None and answer(hit):
                return hit.model_copy(update={"cached": True})
    except Exception as exc:  # an unreadable cache entry costs a call, not the run
        log.warning("response cache lookup failed for case %s: %s", case.id, exc)
    output = await _attempts(system, case, policy)
    if key is not None and cache is not None and answer(output):
        try:
            cache.put(key, output)
        except Exception as exc:
            log.warning("response cache write failed for case %s: %s", case.id, exc)
    return output
