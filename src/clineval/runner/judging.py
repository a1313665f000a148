"""The equivalence-judge step: an LLM decides the name pairs a scorer's deterministic tiers left open.

For a finished output, every scorer that implements ``judge_requests`` (``clineval.core.judging``) names
the pairs it could not resolve; each distinct pair becomes one call of the judge system (prompt
``equivalence_judge_v1``: a Case whose ``data`` holds the two names, and the case's vignette for context),
made through ``call_system`` so it is cached, timed out and retried like any call. The reply must be a JSON
object whose ``equivalent`` is a JSON boolean; anything else (a failed call, prose, ``"yes"``, ``"true"``
as a string, two conflicting objects) gives ``equivalent=None`` with the reason in ``error``, which a
scorer never counts as equivalent. The decisions go to scoring in ``extras["judgments"]`` and are also kept
in ``output.raw["equivalence_judge"]``. The judge never changes the output under test or a deterministic
score.

A request naming its own ``prompt`` (tier 4) is answered by the judge system built for that prompt
(``JudgeStep.prompts``, built by the suite from the scorers' ``judge_prompts``): the judge case's
``input.data`` is the request's ``data``, and the reply's ``reply_field`` value (any JSON value, all
objects of the reply agreeing) becomes ``JudgeDecision.value``, and its ``injection`` (a JSON boolean, the
judge's own report of an output that tries to instruct it) ``JudgeDecision.injection``. Each of its
``samples`` is one call; sample ``i > 0`` is cached under the judge's key plus ``#sample<i>`` so the
samples stay distinct in the cache (sample 0 keeps the plain key), and the prompt is the same for every
sample (their difference comes from the judge's temperature).
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from clineval.core import Case, CaseInput, ComponentSpec, Scorer, ScoringContext, System, SystemOutput
from clineval.core.judging import JUDGMENTS_KEY, JudgeAware, JudgeDecision, JudgeRequest, unique_requests
from clineval.core.specs import sha256_text
from clineval.runner.cache import ResponseCache
from clineval.runner.calls import call_system
from clineval.runner.policy import CallPolicy

JUDGE_KEY = "equivalence_judge"
MAX_NAME_CHARS = 300
_MAX_REASON = 500


def _objects_with(text: str | None, key: str) -> tuple[list[dict[str, Any]], str | None]:
    """The JSON objects of a reply that hold ``key``, or an error when there is none."""
    if not text or not text.strip():
        return [], "empty reply"
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict) and key in value:
            found.append(value)
        position = text.find("{", end)
    if not found:
        return [], f"no JSON object with {key!r} in the reply: {text.strip()[:200]!r}"
    return found, None


def parse_reply(text: str | None, key: str) -> tuple[Any, str, str | None]:
    """``(value, reason, error)``: the JSON value of ``key`` in the reply's JSON object(s); None with an
    error when no object holds it or two objects disagree (the caller checks the value's type)."""
    found, error = _objects_with(text, key)
    if error is not None:
        return None, "", error
    reason = str(found[0].get("reason") or "")[:_MAX_REASON]
    values = [canonical_value(obj[key]) for obj in found]
    if len(set(values)) > 1:
        return None, reason, f"the reply holds conflicting {key!r} values"
    return found[0][key], reason, None


def injection_flag(text: str | None, key: str) -> bool | None:
    """The judge's own ``"injection"`` flag in the reply's object(s) holding ``key``: True when any says
    true, False when they say false, None when none holds a JSON boolean there (strict, as for verdicts)."""
    found, _ = _objects_with(text, key)
    flags = [obj["injection"] for obj in found if isinstance(obj.get("injection"), bool)]
    return True if True in flags else False if flags else None


def canonical_value(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def parse_judgment(text: str | None) -> tuple[bool | None, str, str | None]:
    """``(equivalent, reason, error)`` from a judge reply; ``equivalent`` is None unless the reply holds a
    JSON object whose ``equivalent`` is a JSON boolean (and no other object says otherwise)."""
    found, error = _objects_with(text, "equivalent")
    if error is not None:
        return None, "", error
    verdicts = [obj["equivalent"] for obj in found]
    reason = str(found[0].get("reason") or "")[:_MAX_REASON]
    if not all(isinstance(v, bool) for v in verdicts):
        bad = next(v for v in verdicts if not isinstance(v, bool))
        return None, reason, f"'equivalent' is {bad!r}, not a JSON boolean"
    if len(set(verdicts)) > 1:
        return None, reason, "the reply holds conflicting 'equivalent' values"
    return bool(verdicts[0]), reason, None


def judge_requests(ctx: ScoringContext, scorers: Sequence[Scorer]) -> list[JudgeRequest]:
    """The distinct pairs every judge-aware scorer asks about for this case (a scorer's failure to list
    them costs it its judged scores on this case, never the run)."""
    requests: list[JudgeRequest] = []
    for scorer in scorers:
        if isinstance(scorer, JudgeAware):
            try:
                requests.extend(scorer.judge_requests(ctx))
            except Exception:  # the scorer's own call reports its bug as scorer_error
                continue
    return unique_requests(requests)


class _Sample:
    """The judge system for sample ``index`` of a request: the same calls, its own cache key."""

    live = True

    def __init__(self, inner: System, index: int) -> None:
        self.inner, self.index = inner, index
        self.circuit_owner = inner  # the samples share the judge's circuit breaker
        self.spec: ComponentSpec = inner.spec

    async def start(self, concurrency: int) -> None:  # the inner system is started by the step
        return None

    async def close(self) -> None:
        return None

    def cache_key(self, case: Case) -> str | None:
        key = self.inner.cache_key(case)
        return key if key is None or self.index == 0 else sha256_text(f"{key}#sample{self.index}")

    async def call(self, case: Case) -> SystemOutput:
        return await self.inner.call(case)


def _usage_entry(reply: SystemOutput) -> dict[str, Any]:
    """One judge reply's token counts (None where its endpoint reported none) and whether it was cached."""
    usage = reply.usage
    return {
        "cached": reply.cached,
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "completion_tokens": usage.completion_tokens if usage else None,
        "total_tokens": usage.total_tokens if usage else None,
    }


@dataclass
class JudgeStats:
    pairs: int = 0  # decisions asked for (a request with N samples counts N)
    calls: int = 0  # live attempts (cache hits cost none)
    errors: int = 0


@dataclass
class JudgeStep:
    """The judge system (an ``openai`` system with prompt ``equivalence_judge_v1``), shared by workers;
    ``prompts`` the same judge with each prompt a scorer asks for (name -> system)."""

    system: System
    prompts: dict[str, System] = field(default_factory=dict)
    same_model_override: bool = False  # judged with the system's own model (allowed explicitly)
    stats: JudgeStats = field(default_factory=JudgeStats)
    _slots: asyncio.Semaphore | None = field(default=None, init=False, repr=False)

    @property
    def model(self) -> str:
        return str(self.system.spec.args.get("model") or self.system.spec.type)

    def _systems(self) -> list[System]:
        return [self.system, *(s for s in self.prompts.values() if s is not self.system)]

    async def start(self, concurrency: int) -> None:
        self.stats = JudgeStats()
        self._slots = asyncio.Semaphore(concurrency)
        for system in self._systems():
            await system.start(concurrency)

    async def close(self) -> None:
        for system in self._systems():
            await system.close()

    def system_for(self, request: JudgeRequest) -> System | None:
        if request.prompt is None:
            return self.system
        if request.prompt in self.prompts:
            return self.prompts[request.prompt]
        return self.system if self.system.spec.args.get("prompt") == request.prompt else None

    def judge_case(self, case: Case, request: JudgeRequest, index: int, sample: int = 0) -> Case:
        if request.prompt is not None:
            return Case(id=f"{case.id}#judge{index}.{sample}", input=CaseInput(data=dict(request.data)))
        inp = case.input
        return Case(
            id=f"{case.id}#judge{index}",
            input=CaseInput(
                vignette=inp.vignette or inp.question,
                data={"candidate": request.a, "reference": request.b},
            ),
        )

    async def _decide(
        self,
        case: Case,
        request: JudgeRequest,
        index: int,
        sample: int,
        policy: CallPolicy,
        cache: ResponseCache | None,
        retry_failed: bool,
    ) -> tuple[JudgeDecision, SystemOutput | None]:
        system = self.system_for(request)
        own = request.prompt is not None
        tags: dict[str, Any] = {"sample": sample, "prompt": request.prompt} if own else {}
        if system is None:
            error = f"the judge has no prompt {request.prompt!r} (a scorer must list it in judge_prompts)"
            return JudgeDecision(None, "", self.model, error, **tags), None
        if own:
            tags["prompt_hash"] = system.spec.content_hash
        if max(len(request.a), len(request.b)) > MAX_NAME_CHARS:
            error = f"a name is longer than {MAX_NAME_CHARS} characters: not sent to the judge"
            return JudgeDecision(None, "", self.model, error, **tags), None
        caller = system if sample == 0 else _Sample(system, sample)
        field = request.reply_field
        # a reply the parser cannot read is not cached: the next run asks again instead of replaying it
        readable = (
            (lambda out: parse_reply(out.text, field)[2] is None)
            if own
            else (lambda out: parse_judgment(out.text)[2] is None)
        )
        slots = self._slots or asyncio.Semaphore(1)
        async with slots:
            reply = await call_system(
                caller,
                self.judge_case(case, request, index, sample),
                policy,
                cache,
                retry_failed=retry_failed,
                usable=readable,
            )
        self.stats.calls += 0 if reply.cached else reply.attempts
        served = (reply.raw or {}).get("model")
        model = served if isinstance(served, str) and served else self.model
        if reply.error is not None:
            error = f"{reply.error.kind}: {reply.error.message}"
            return JudgeDecision(None, "", model, error[:_MAX_REASON], reply.cached, **tags), reply
        if own:
            value, reason, problem = parse_reply(reply.text, request.reply_field)
            tags["injection"] = injection_flag(reply.text, request.reply_field)
            return JudgeDecision(None, reason, model, problem, reply.cached, value, **tags), reply
        equivalent, reason, problem = parse_judgment(reply.text)
        return JudgeDecision(equivalent, reason, model, problem, reply.cached), reply

    async def run(
        self,
        task_id: str,
        case: Case,
        output: SystemOutput,
        scorers: Sequence[Scorer],
        policy: CallPolicy,
        cache: ResponseCache | None,
        *,
        retry_failed: bool = False,
    ) -> tuple[SystemOutput, dict[str, Any]]:
        """``output`` with the decisions under raw["equivalence_judge"], and the scoring extras."""
        requests = judge_requests(ScoringContext(case=case, output=output, task_id=task_id), scorers)
        asked = [(i, r, s) for i, r in enumerate(requests) for s in range(r.samples)]
        answers = await asyncio.gather(
            *(self._decide(case, r, i, s, policy, cache, retry_failed) for i, r, s in asked)
        )
        decisions = {r.sample_key(s): d for (_, r, s), (d, _) in zip(asked, answers, strict=True)}
        self.stats.pairs += len(asked)
        self.stats.errors += sum(1 for d in decisions.values() if d.error is not None)
        extras: dict[str, Any] = {JUDGMENTS_KEY: decisions}
        if not requests:
            return output, extras
        record = [
            {
                **({"a": r.a, "b": r.b} if r.prompt is None else {"key": r.key}),
                **decisions[r.sample_key(s)].as_dict(),
            }
            for _, r, s in asked
        ]
        # The judge's time is the evaluation's, not the system's: kept beside the decisions, never in the
        # system's stage latencies (tier-1 latency budgets judge the system alone).
        replies = [r for _, r in answers if r is not None]
        latencies = [r.latency_s for r in replies if r.latency_s is not None and math.isfinite(r.latency_s)]
        judge_seconds = math.fsum(latencies) if latencies else None
        raw = {
            **(output.raw or {}),
            JUDGE_KEY: record,
            f"{JUDGE_KEY}_seconds": judge_seconds,
            f"{JUDGE_KEY}_usage": [_usage_entry(r) for r in replies],  # summed by clineval.analysis.usage
        }
        return output.model_copy(update={"raw": raw}), extras
