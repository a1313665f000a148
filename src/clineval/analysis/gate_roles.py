"""Each gate metric's direction (higher or lower is better) and role (gate or track), as data.

:data:`METRIC_RULES` is the table, reviewed rule by rule. A rule names a metric exactly (``accuracy``) or a
*family* by a template whose placeholders stand for a part that varies: ``{k}`` a whole number
(``top{k}_accuracy``: top1_accuracy, top5_accuracy...), ``{name}`` any non-empty text
(``latency_p95_{name}``: one per pipeline stage; ``adherence_{name}``: one per guideline rule). A template
matches the whole short key (``recall`` for ``ddx.recall``), never a prefix of it: ``latency_p95_{name}``
does not match ``latency_pass_rate`` (the old pattern ``latency_p*`` did, and tracked the tier-1 latency
pass rate as lower-is-better). Exact names are looked up first, then families in table order.

Every metric a built-in scorer emits matches a rule of its own (``tests/test_gate_roles.py`` enumerates
them). A metric no rule names (a user's own scorer) falls to :data:`FALLBACK`: higher is better, gates.

A metric's default role (:func:`default_role`):

- a count (``n``, ``n_{name}``, class totals, ``red_flag_cases``) or an interval (``{name}_ci``): never in
  the gate;
- lower is better (failed/unparsed/error rates, latency percentiles, judge variance...): tracked, except
  the counterfactual metrics (``counterfactual_flip_rate``, ``counterfactual_abs_delta``), which gate;
- tier 1 and 2 scorers: gate; tier 3: ``guideline_adherence`` gates, per-rule rates are tracked;
  tier 4 (LLM judge, rubric): tracked (the judge's noise is not a release criterion by default);
- whatever the tier, a metric the table tracks is tracked: a number a degenerate system can raise
  (``clineval audit``, docs/runs/audit.md) never gates; each such rule names the robust metric that gates
  instead (tier 1: the contraindication presence check and escalation recall; tier 2: evidence type
  coverage);
- untiered scorers (``mcq``, ``ddx``, ``cds_report``...): the table's role, which is ``gate`` for every
  higher-is-better metric except the few listed as tracked with the reason.

A gate (``--metrics``/``--track``) or a baseline (``gate_metrics``/``track_metrics`` in its snapshot) can
override the default: :class:`RoleChoice`. A named metric must exist in both snapshots, else
:func:`check_names` raises one line listing what exists.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any, Literal

from clineval.core.errors import UserInputError

Direction = Literal["higher", "lower"]
Role = Literal["gate", "track", "never"]

ADHERENCE = "guideline_adherence"
# tier -> the (higher-is-better) metrics of that tier's scorers that gate ("*": all); a tier not listed (4)
# is tracked. Tier 3: guideline adherence, and of the golden-set labels the metric no constant answer can
# raise (problem_jaccard, severity_kappa: scoring.golden_problems, scoring.golden_severity)
TIER_GATES: dict[int, tuple[str, ...]] = {
    1: ("*",),
    2: ("*",),
    3: (ADHERENCE, "problem_jaccard", "severity_kappa"),
}
_PLACEHOLDERS = {"{k}": r"[0-9]+", "{name}": r".+"}


@dataclass(frozen=True)
class MetricRule:
    """Direction and default role (for untiered scorers) of the metric named ``name`` (a template with
    ``{k}``/``{name}`` names a family: module docstring)."""

    name: str
    direction: Direction
    role: Role
    why: str
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = re.split(r"(\{k\}|\{name\})", self.name)
        regex = "".join(_PLACEHOLDERS.get(part, re.escape(part)) for part in parts)
        object.__setattr__(self, "pattern", re.compile(regex))

    @property
    def is_family(self) -> bool:
        return any(p in self.name for p in _PLACEHOLDERS)

    def matches(self, short: str) -> bool:
        return self.pattern.fullmatch(short) is not None


def _rules(direction: Direction, role: Role, why: str, *names: str) -> tuple[MetricRule, ...]:
    return tuple(MetricRule(n, direction, role, why) for n in names)


_COUNT = "a count"
_PASS = "a tier-1 check's pass rate: every one must be >= baseline (four-tier design, tier 1)"
_QUALITY = "a quality metric of the system"
_JUDGED = "matched by an LLM judge: tracked like tier 4"
_PROCESS = (
    "a description of a multi-agent discussion, not a quality of the answer (docs/ddx/process_metrics.md)"
)
_GAMEABLE = "a report listing every option maximises it"

METRIC_RULES: tuple[MetricRule, ...] = (
    # never in the gate: intervals and counts
    MetricRule("{name}_ci", "higher", "never", "an interval, shown beside its metric"),
    *_rules("higher", "never", _COUNT, "n", "n_{name}", "red_flag_cases"),
    *_rules("higher", "never", "a count (DDx class totals)", "tp_total", "fp_total", "fn_total"),
    *_rules("higher", "never", "a count (DDx class totals)", "caa_total", "ae_total", "tm_sm_total"),
    # lower is better: tracked
    *_rules("lower", "track", "a latency percentile (seconds); the latency pass rate gates",
            "latency_p50_{name}", "latency_p95_{name}"),
    *_rules("lower", "track", "system failures: an operations signal, not quality",
            "failed_rate", "{name}_failed_rate"),
    *_rules("lower", "track", "already counted as wrong by the accuracy that gates",
            "unparsed_rate", "{name}_unparsed_rate"),
    *_rules("lower", "track", "judge or grader errors: an operations signal", "{name}_error_rate"),
    *_rules("lower", "track", "empty answers: already scored 0 by the score that gates", "{name}_empty_rate"),
    MetricRule("ambiguous_rate", "lower", "track", "already counted as not correct by type_aware_accuracy"),
    *_rules("lower", "track", "judge instability", "judge_flip_rate", "judge_mean_variance"),
    # lower is better and gates: an answer that changes with the patient's demographics alone (issue 27)
    *_rules("lower", "gate", "counterfactual fairness: the largest flip rate / |accuracy change| over the "
            "task's variant pairs (docs/runs/counterfactual.md)",
            "counterfactual_flip_rate", "counterfactual_abs_delta"),
    MetricRule("judge_injection_flagged_rate", "lower", "track", "a security signal, reviewed by hand"),
    MetricRule("reasoning_fallacy_penalty", "lower", "track", "a component of reasoning_quality"),
    # higher is better, tracked
    *_rules("higher", "track", _GAMEABLE, "in_differential_rate", "mentioned_rate"),
    *_rules("higher", "track", "a class-balanced view of the decisions accuracy gates",
            "macro_f1", "{name}_macro_f1"),
    *_rules("higher", "track", "a pooled view of the per-case recall that gates",
            "recall_micro", "recall_micro_judged"),
    MetricRule("{name}_judged", "higher", "track", _JUDGED),
    MetricRule("recall_broader", "higher", "track",
               "partial credit for a name more general than the ground truth (never a hit): beside recall"),
    MetricRule("broader_share", "lower", "track", "share of names more general than the ground truth"),
    MetricRule("caa_unsupported_share", "lower", "track",
               "alternatives without support in a can't-miss round (counted FP)"),
    MetricRule("truncated_rate", "lower", "track",
               "DDx lists longer than max_differential (the items past it are not scored)"),
    *_rules("higher", "track", "a weighting of metrics that gate on their own",
            "combined_score", "combined_score[{name}]"),
    *_rules("higher", "track", _PROCESS,
            "tempo_mean", "tempo_independent", "tempo_debate", "debate_quality", "weighted_top1_same_rate"),
    # higher is better, gate (tiered scorers: the tier decides, see default_role)
    *_rules("higher", "gate", "the answer is right (MCQ, CDS report)",
            "accuracy", "mcq_accuracy", "type_aware_accuracy", "top{k}_accuracy"),
    *_rules("higher", "gate", "a per-case DDx score (LDDx v6 metrics guide)",
            "recall", "precision", "clinical_reasoning_quality", "diagnostic_safety",
            "system_safety_coverage", "mrr"),
    *_rules("higher", "gate", _PASS,
            "schema_pass_rate", "citation_grounding_pass_rate", "scope_pass_rate", "latency_pass_rate"),
    MetricRule("contraindications_pass_rate", "higher", "track",
               "the runtime guard's presence check: any non-empty contraindications_checked passes (a "
               "generic list of categories reaches 1.0); contraindications_specific_rate gates"),
    MetricRule("contraindications_specific_rate", "higher", "gate",
               "tier 1: every medication checked against a fact of this patient (names the drug and a "
               "lab or vital value, an allergy or a current medication of the record)"),
    *_rules("higher", "track",
            "recall on red-flag cases only: escalating every case reaches 1.0 (over-escalation is not "
            "counted); escalation_balanced_accuracy gates",
            "escalation_pass_rate", "guardrail_recall"),
    MetricRule("escalation_balanced_accuracy", "higher", "gate",
               "tier 1 safety over every case: (escalation recall + specificity) / 2, so a constant "
               "answer (always or never escalate) gets 0.5 (alarm fatigue)"),
    MetricRule("escalation_specificity", "higher", "track",
               "cases without a red flag left unescalated: never escalating reaches 1.0; the balanced "
               "accuracy gates"),
    *_rules("higher", "gate", "a retrieval measure (trec_eval, higher is better)",
            "nDCG@{k}", "P@{k}", "R@{k}", "R@{k}[{name}]", "Rprec", "RR", "AP"),
    MetricRule("guideline_citation_rate", "higher", "gate",
               "tier 2: guidelines cited, each relevant to the action that cites it"),
    MetricRule(ADHERENCE, "higher", "gate", "tier 3: recommendations adherent to the guideline rules"),
    MetricRule("design_table_adherence", "higher", "gate",
               "tier 3, the design's own rule table: tracked unless named (guideline_adherence gates)"),
    MetricRule("adherence_{name}", "higher", "gate", "one guideline rule's adherence (tier 3: tracked)"),
    MetricRule("problem_jaccard", "higher", "gate",
               "expected problems identified (set overlap: listing every problem does not raise it)"),
    *_rules("higher", "track", "inflated by listing every problem (recall) or one (precision): Jaccard gates",
            "problem_recall", "problem_precision"),
    MetricRule("severity_kappa", "higher", "gate", "agreement beyond chance with the expected severity"),
    *_rules("higher", "track", "a constant answer reaches the majority share: severity_kappa gates",
            "severity_accuracy", "severity_within_one"),
    MetricRule("evidence_type_coverage", "higher", "track",
               "a completeness check of source types: 74 of the 102 golden cases expect all five, so "
               "copying the patient record into cited rows reaches 1.0; guideline_citation_rate (a cited "
               "guideline relevant to its action) gates in tier 2"),
    *_rules("higher", "gate", _QUALITY, "clinical_accuracy", "reasoning_quality"),
    *_rules("higher", "gate", "a component of reasoning_quality",
            "reasoning_overlap_f1", "reasoning_structure", "reasoning_evidence_use",
            "reasoning_factual_consistency"),
    *_rules("higher", "gate", "an LLM judge's grade (tier 4: tracked)", "judge_{name}"),
    *_rules("higher", "gate", "a rubric score (tier 4: tracked)",
            "rubric_score", "rubric_score_unclipped", "rubric_score_answered", "rubric_score[{name}]"),
)  # fmt: skip

FALLBACK = MetricRule("{name}", "higher", "gate", "no rule names it (a user's own metric): " + _QUALITY)
_EXACT: dict[str, MetricRule] = {}
for _rule in METRIC_RULES:
    if not _rule.is_family:
        _EXACT.setdefault(_rule.name, _rule)
_FAMILIES = tuple(r for r in METRIC_RULES if r.is_family)


def short_key(key: str) -> str:
    """``ddx.recall`` -> ``recall`` (aggregation prefixes a key with its scorer when two scorers share it)."""
    return key.rsplit(".", 1)[-1]


@lru_cache(maxsize=4096)
def rule_for(key: str) -> MetricRule:
    """The rule naming the short key exactly, else the first family whose template matches it whole,
    else :data:`FALLBACK`."""
    short = short_key(key)
    found = _EXACT.get(short)
    if found is not None:
        return found
    return next((rule for rule in _FAMILIES if rule.matches(short)), FALLBACK)


def direction_of(key: str) -> Direction:
    return rule_for(key).direction


def is_latency_percentile(key: str) -> bool:
    return rule_for(key).name in ("latency_p50_{name}", "latency_p95_{name}")


def is_gate_metric(key: str, value: object) -> bool:
    """A float that is not a count or an interval: a row of the gate (gating or tracked)."""
    return isinstance(value, float) and rule_for(key).role != "never"


def default_role(key: str, tier: int | None) -> Role:
    """The role of a metric when no one named it (module docstring)."""
    rule = rule_for(key)
    if rule.role == "never" or rule.direction == "lower":  # lower is better: the table's role (track or gate)
        return rule.role
    if tier is None or rule.role == "track":
        return rule.role
    gates = TIER_GATES.get(tier, ())
    return "gate" if any(fnmatchcase(short_key(key), g) for g in gates) else "track"


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
