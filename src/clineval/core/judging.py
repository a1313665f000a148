"""The scorer side of the optional LLM judge: what a scorer asks, what it is told.

A scorer MAY implement ``judge_requests(ctx) -> list[JudgeRequest]``: the name pairs its deterministic
tiers could not resolve (``a`` = the system's name, ``b`` = the reference's). When the task has an
``equivalence_judge``, the runner asks the judge about each pair and passes the answers to the scorer's
``__call__`` in ``ctx.extras["judgments"]`` (``{request.key: JudgeDecision}``; the mapping is present,
possibly empty, whenever the task has a judge, and absent otherwise). A decision with ``equivalent``
None (a failed call, an unparseable answer) is never to be counted as equivalent. The judge only adds
separate, labelled results: it never changes a deterministic one.

The same channel serves any judge-aware scorer with its own prompt (tier 4: ``judge_dimensions``,
``rubric``): a request with ``prompt`` set is rendered with that packaged prompt template, its ``data``
being the judge case's ``input.data``; the reply must be a JSON object holding ``reply_field``, whose JSON
value becomes ``JudgeDecision.value`` (the scorer checks its type). ``samples=N`` asks N independent
samples; sample ``i`` is answered under ``request.sample_key(i)`` (sample 0 under ``key`` itself) and is
cached under its own key. Such a scorer lists its prompts in ``judge_prompts`` so the suite builds (and
hashes) them before the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from clineval.core.protocols import ScoringContext
from clineval.core.specs import canonical_json

JUDGMENTS_KEY = "judgments"


def pair_key(a: str, b: str) -> str:
    """The key of the pair (a, b): ordered, exact text (JSON, so no separator can be forged)."""
    return canonical_json([a, b])


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """Is ``a`` (the system's diagnosis) the same entity as ``b`` (the reference diagnosis)? (``prompt``
    None: the judge's default prompt), or any question of a prompt of the scorer's own (``prompt`` a
    packaged template name, ``data`` its variables, ``reply_field`` the JSON key of the answer),
    asked ``samples`` times."""

    key: str
    a: str = ""
    b: str = ""
    prompt: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)
    reply_field: str = "equivalent"
    samples: int = 1

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError(f"samples must be >= 1, got {self.samples}")

    @classmethod
    def of(cls, a: str, b: str) -> JudgeRequest:
        return cls(key=pair_key(a, b), a=a, b=b)

    def sample_key(self, index: int) -> str:
        """The key sample ``index`` is answered under (``key`` itself for sample 0)."""
        return self.key if index == 0 else f"{self.key}#sample{index}"


@dataclass(frozen=True, slots=True)
class JudgeDecision:
    """The judge's answer about one pair: ``equivalent`` None when there is no usable answer (``error``
    says why), ``model`` the model that answered, ``cached`` whether it came from the response cache.
    For a request with its own prompt: ``value`` the JSON value of its ``reply_field`` (None with an
    ``error``), ``sample`` the sample index, ``prompt`` / ``prompt_hash`` the template that asked,
    ``injection`` the judge's own ``"injection"`` flag when its reply holds a JSON boolean there (None
    otherwise: the prompt did not ask, or the reply did not say)."""

    equivalent: bool | None
    reason: str
    model: str
    error: str | None = None
    cached: bool = False
    value: Any = None
    sample: int = 0
    prompt: str | None = None
    prompt_hash: str | None = None
    injection: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "equivalent": self.equivalent,
            "reason": self.reason,
            "model": self.model,
            "error": self.error,
            "cached": self.cached,
        }
        if self.prompt is not None:
            found.update(
                value=self.value,
                sample=self.sample,
                prompt=self.prompt,
                prompt_hash=self.prompt_hash,
                injection=self.injection,
            )
        return found


@runtime_checkable
class JudgeAware(Protocol):
    """A scorer that can use the equivalence judge (the runner checks with ``isinstance``)."""

    name: str

    def judge_requests(self, ctx: ScoringContext) -> list[JudgeRequest]: ...


def judgments_of(ctx: ScoringContext) -> Mapping[str, JudgeDecision] | None:
    """The judge's decisions passed to this scoring (None when the task has no judge)."""
    found = ctx.extras.get(JUDGMENTS_KEY)
    if not isinstance(found, Mapping):
        return None
    return {k: v for k, v in found.items() if isinstance(v, JudgeDecision)}


def sample_decisions(
    judgments: Mapping[str, JudgeDecision], request: JudgeRequest
) -> list[JudgeDecision | None]:
    """The decision for each of the request's samples, in sample order (None where there is none)."""
    return [judgments.get(request.sample_key(i)) for i in range(request.samples)]


def unique_requests(requests: Sequence[JudgeRequest]) -> list[JudgeRequest]:
    """``requests`` without repeated keys, in first-seen order."""
    seen: dict[str, JudgeRequest] = {}
    for request in requests:
        seen.setdefault(request.key, request)
    return list(seen.values())
