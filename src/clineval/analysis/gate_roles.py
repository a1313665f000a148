"""Each gate metric's direction (higher or lower is better) and role (gate or track), as data.

:data:`METRIC_RULES` is the table: ``fnmatch`` patterns on the metric's short key (``recall`` for
``ddx.recall``), first match wins, ``*`` last. A metric's default role (:func:`default_role`):

- a count (``n``, ``n_*``, ``*_total``, ``red_flag_cases``) or an interval (``*_ci``): never in the gate;
- lower is better (failed/unparsed/error rates, latency percentiles, judge variance...): tracked;
- tier 1 and 2 scorers: gate; tier 3: ``guideline_adherence`` gates, per-rule rates are tracked;
  tier 4 (LLM judge, rubric): tracked (the judge's noise is not a release criterion by default);
- untiered scorers (``mcq``, ``ddx``, ``cds_report``...): the table's role, which is ``gate`` for every
  higher-is-better metric except the few listed as tracked with the reason.

A gate (``--metrics``/``--track``) or a baseline (``gate_metrics``/``track_metrics`` in its snapshot) can
override the default: :class:`RoleChoice`. A named metric must exist in both snapshots, else
:func:`check_names` raises one line listing what exists.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, Literal

from clineval.core.errors import UserInputError

Direction = Literal["higher", "lower"]
Role = Literal["gate", "track", "never"]

ADHERENCE = "guideline_adherence"
# tier -> the (higher-is-better) metrics of that tier's scorers that gate; a tier not listed (4) is tracked
TIER_GATES: dict[int, str] = {1: "*", 2: "*", 3: ADHERENCE}


@dataclass(frozen=True)
class MetricRule:
    """Direction and default role (for untiered scorers) of the metrics whose short key matches."""

    pattern: str
    direction: Direction
    role: Role
    why: str


METRIC_RULES: tuple[MetricRule, ...] = (
    MetricRule("*_ci", "higher", "never", "an interval, shown beside its metric"),
    MetricRule("latency_p*", "lower", "track", "a latency percentile (seconds); the latency budget gates"),
    MetricRule("n", "higher", "never", "a count"),
    MetricRule("n_*", "higher", "never", "a count"),
    MetricRule("*_total", "higher", "never", "a count (DDx class totals)"),
    MetricRule("red_flag_cases", "higher", "never", "a count"),
    MetricRule("*failed_rate", "lower", "track", "system failures: an operations signal, not quality"),
    MetricRule("*unparsed_rate", "lower", "track", "already counted as wrong by the accuracy that gates"),
    MetricRule("*error_rate", "lower", "track", "judge or grader errors: an operations signal"),
    MetricRule("*empty_rate", "lower", "track", "empty answers: already scored 0 by the score that gates"),
    MetricRule("ambiguous_rate", "lower", "track", "already counted as not correct by type_aware_accuracy"),
    MetricRule("in_differential_rate", "higher", "track", "a report listing every option maximises it"),
    MetricRule("mentioned_rate", "higher", "track", "a report listing every option maximises it"),
    MetricRule("judge_flip_rate", "lower", "track", "judge instability"),
    MetricRule("judge_injection_flagged_rate", "lower", "track", "a security signal, reviewed by hand"),
    MetricRule("judge_mean_variance", "lower", "track", "judge instability"),
    MetricRule("reasoning_fallacy_penalty", "lower", "track", "a component of reasoning_quality"),
    MetricRule("*macro_f1", "higher", "track", "a class-balanced view of the decisions accuracy gates"),
    MetricRule("recall_micro*", "higher", "track", "a pooled view of the per-case recall that gates"),
    MetricRule("*_judged", "higher", "track", "matched by an LLM judge: tracked like tier 4"),
    MetricRule("combined_score*", "higher", "track", "a weighting of metrics that gate on their own"),
    MetricRule("tempo_*", "higher", "track", "a description of a multi-agent discussion"),
    MetricRule("debate_quality", "higher", "track", "a description of a multi-agent discussion"),
    MetricRule("weighted_top1_same_rate", "higher", "track", "a description of a multi-agent discussion"),
    MetricRule("*", "higher", "gate", "a quality metric of the system"),
)


def short_key(key: str) -> str:
    """``ddx.recall`` -> ``recall`` (aggregation prefixes a key with its scorer when two scorers share it)."""
    return key.rsplit(".", 1)[-1]


def rule_for(key: str) -> MetricRule:
    """The first rule of :data:`METRIC_RULES` whose pattern matches the short key."""
    short = short_key(key)
    return next(rule for rule in METRIC_RULES if fnmatchcase(short, rule.pattern))


def direction_of(key: str) -> Direction:
    return rule_for(key).direction


def is_gate_metric(key: str, value: object) -> bool:
    """A float that is not a count or an interval: a row of the gate (gating or tracked)."""
    return isinstance(value, float) and rule_for(key).role != "never"


def default_role(key: str, tier: int | None) -> Role:
    """The role of a metric when no one named it (module docstring)."""
    rule = rule_for(key)
    if rule.role == "never" or rule.direction == "lower":
        return "never" if rule.role == "never" else "track"
    if tier is None:
        return rule.role
    gates = TIER_GATES.get(tier)
    return "gate" if gates is not None and fnmatchcase(short_key(key), gates) else "track"


@dataclass(frozen=True)
class RoleChoice:
    """Who gates: ``gate`` (only these, when given) minus ``track`` (demoted). Empty = the defaults."""

    gate: tuple[str, ...] = ()
    track: tuple[str, ...] = ()

    @classmethod
    def of(cls, gate: Iterable[str] | None = None, track: Iterable[str] | None = None) -> RoleChoice:
        choice = cls(_names(gate), _names(track))
        both = sorted(set(choice.gate) & set(choice.track))
        if both:
            raise UserInputError(
                f"metric {both[0]!r} is named both to gate and to track", hint="name it in one of the two"
            )
        return choice

    def __bool__(self) -> bool:
        return bool(self.gate or self.track)

    def over(self, stored: RoleChoice) -> RoleChoice:
        """This (a gate's options) over ``stored`` (the baseline's): our gate list replaces the stored
        one; tracked names add up, except those we name to gate."""
        track = (*self.track, *(t for t in stored.track if t not in self.gate))
        return RoleChoice(self.gate or stored.gate, tuple(dict.fromkeys(track)))

    def describe(self) -> str:
        """``gate accuracy,recall; track unparsed_rate`` (for messages)."""
        parts = [f"gate {','.join(self.gate)}"] if self.gate else []
        return "; ".join(parts + ([f"track {','.join(self.track)}"] if self.track else []))

    def role(self, key: str, tier: int | None) -> Role:
        default = default_role(key, tier)
        if default == "never":
            return "never"
        if _named(key, self.track):
            return "track"
        if self.gate:
            return "gate" if _named(key, self.gate) else "track"
        return default


def _names(values: Iterable[str] | None) -> tuple[str, ...]:
    names = [n.strip() for v in (values or ()) for n in v.split(",")]
    return tuple(dict.fromkeys(n for n in names if n))


def _named(key: str, names: Sequence[str]) -> bool:
    return key in names or short_key(key) in names


def check_names(choice: RoleChoice, snapshots: Mapping[str, Mapping[str, Any]]) -> None:
    """Every named metric must be a gate metric of some task in each snapshot (``label -> snapshot``);
    else one line naming the metrics that exist there."""
    for name in (*choice.gate, *choice.track):
        for label, snap in snapshots.items():
            keys = _scores(snap)
            gate_keys = {k for k, v in keys.items() if is_gate_metric(k, v)}
            if any(_named(key, [name]) for key in gate_keys):
                continue
            known = sorted({short_key(k) for k in gate_keys})
            close = difflib.get_close_matches(name, known, n=1)
            never = any(_named(k, [name]) for k in keys)  # there, but a count or an interval
            raise UserInputError(
                f"metric {name!r} is not a gate metric of the {label}"
                + (" (a count or an interval: never gated)" if never else ""),
                hint=(f"did you mean {close[0]!r}? " if close else "")
                + f"metrics there: {', '.join(known) or 'none'}",
            )


def _scores(snap: Mapping[str, Any]) -> dict[str, Any]:
    """Every task's scores of a snapshot, merged (key -> a value)."""
    merged: dict[str, Any] = {}
    for data in snap.get("tasks", {}).values():
        merged.update(data.get("scores", {}))
    return merged
