"""``guideline_adherence`` (tier 3): does a CDS recommendation do what the applicable guideline rules expect?

The rules (``cds/rules/data/guideline_rules.yaml``, see ``clineval.cds.rules.engine`` and
``docs/cds/tier3_guidelines.md``) are evaluated on the case's patient (``case.input.data["patient"]``) against
the recommendation's ``recommended_actions`` (and ``when_to_escalate`` for escalation rules). Without a
structured output, the lines of ``output.text`` stand for the recommended actions.

Options: ``ruleset`` (``v2``, the default: ``cds/rules/data/guideline_rules.yaml``; ``design_table``: the
four-tier design's own 12-row table, ``guideline_rules_design_table.yaml``, answering "did the
recommendation include the expected action?"), ``rules`` (a YAML rule file instead), ``threshold``
(matching), ``jurisdiction`` (where guidelines differ, e.g. ``nice`` | ``idsa_ats`` for pneumonia
antibiotics; default: the rule file's ``jurisdictions.default``; the design table has none).

With ``ruleset: design_table`` the scorer is named ``guideline_adherence_design_table`` and its headline
metric ``design_table_adherence`` (per row ``adherence_dt_<row>``), so one task can report against both
rulesets (list ``guideline_adherence`` twice, once with the option) and a design-table figure is never
compared with a v2 one under the same name.

Per case: ``value`` = 1 if every applicable rule is adherent (every required action found, no forbidden
action recommended) **and** the recommendation is specific (it names no more actions the rules tie to
conditions the patient does not have than ``max(2, actions for the patient's own conditions)``:
``clineval.cds.rules.specificity``; a shotgun of every rule action is not adherent), 0 otherwise, NaN
if no rule applies
(rules that cannot be evaluated for missing data are "not applicable", never a pass). A failed system call
scores 0 on a case with applicable rules (no recommendation followed the guideline). ``breakdown``:
``rules`` (every RuleResult with ``applicable`` not False: id, applicable, adherent, found expected actions
with the matching text, missing ones, reason), ``applicable_rules``, ``not_evaluable_rules``,
``adherent_rules``, ``specificity`` (``specific``, ``on_target``, ``off_target``, ``off_target_allowed``),
``rules_version`` and ``rules_sha256``. Labels: ``adherent``, ``non_adherent``,
``failed``, ``not_applicable``, ``no_patient``.

Metrics: ``guideline_adherence`` (``design_table_adherence``) = (1/n) Σ value_i over cases with an
applicable rule, with ``guideline_adherence_ci`` (95% Wilson score interval); ``adherence_<rule_id>`` =
#{cases where the rule is applicable and adherent} / #{cases where it is applicable} (NaN if it never
applies), and ``n_applicable_<rule_id>``. Per condition: stratify by the case metadata ``condition``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from clineval.cds.rules.engine import RuleSet, evaluate_rules, load_rules
from clineval.cds.rules.model import packaged_rules
from clineval.cds.rules.specificity import specificity
from clineval.core import Metric, MetricValue, Score, ScoringContext, SystemOutput
from clineval.core.errors import SuiteError
from clineval.core.helpers.columns import ScoreColumn
from clineval.metrics.basic import Accuracy


class GuidelineOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ruleset: Literal["v2", "design_table"] = "v2"  # a packaged ruleset (PACKAGED_RULESETS)
    rules: str | None = None  # a YAML rule file instead of a packaged ruleset
    threshold: float = Field(default=1.0, gt=0.0, le=1.0)
    jurisdiction: str | None = None  # one of the rule file's jurisdictions (packaged v2: nice | idsa_ats)

    @model_validator(mode="after")
    def _one_source(self) -> GuidelineOptions:
        if self.rules is not None and self.ruleset != "v2":
            raise ValueError("give either 'rules' (a file) or 'ruleset', not both")
        return self


def recommendation_sections(output: SystemOutput) -> dict[str, list[str]]:
    """``recommended_actions`` and ``when_to_escalate`` texts of a recommendation (text lines as fallback)."""
    s = output.structured
    actions = [a.action for a in (s.recommended_actions or [])] if s else []
    escalate: list[str] = []
    if s and s.when_to_escalate:
        escalate = [s.when_to_escalate] if isinstance(s.when_to_escalate, str) else list(s.when_to_escalate)
    if not actions and (s is None or s.recommended_actions is None) and output.text:
        actions = [line.strip(" -*\t") for line in output.text.splitlines() if line.strip()]
    return {"recommended_actions": actions, "when_to_escalate": escalate}


class RuleAdherenceRates:
    """``adherence_<rule_id>`` = #{applicable and adherent} / #{applicable} and ``n_applicable_<rule_id>``."""

    breakdown_keys: tuple[str, ...] = ("rules",)

    def __init__(self, rule_ids: Sequence[str], name: str = "rule_adherence") -> None:
        self.rule_ids = list(rule_ids)
        self.name = name

    def compute(self, scores: Sequence[Score]) -> dict[str, MetricValue]:
        return self.compute_column(ScoreColumn.from_scores(scores))

    def compute_column(self, column: ScoreColumn) -> dict[str, MetricValue]:
        counts = {rid: [0, 0] for rid in self.rule_ids}
        for breakdown in column.iter_breakdowns():
            for row in breakdown.get("rules", []):
                rid = row.get("rule_id")
                if rid in counts and row.get("applicable") is True:
                    counts[rid][1] += 1
                    counts[rid][0] += int(row.get("adherent") is True)
        out: dict[str, MetricValue] = {}
        for rid, (k, n) in counts.items():
            out[f"adherence_{rid}"] = k / n if n else math.nan
            out[f"n_applicable_{rid}"] = n
        return out


class GuidelineAdherenceScorer:
    tier = 3

    def __init__(self, options: GuidelineOptions | None = None, ruleset: RuleSet | None = None) -> None:
        self.options = options or GuidelineOptions()
        design = self.options.ruleset == "design_table"
        self.name = "guideline_adherence_design_table" if design else "guideline_adherence"
        if ruleset is None:
            ruleset = (
                load_rules(self.options.rules) if self.options.rules else packaged_rules(self.options.ruleset)
            )
        self.ruleset = ruleset
        try:
            self.jurisdiction = self.ruleset.jurisdiction(self.options.jurisdiction)
        except ValueError as err:
            raise SuiteError(f"{self.name}: {err}") from None
        self.metrics: Sequence[Metric] = (
            Accuracy(name="design_table_adherence" if design else "guideline_adherence"),
            RuleAdherenceRates([r.id for r in self.ruleset.rules]),
        )

    def __call__(self, ctx: ScoringContext) -> Score:
        base: dict[str, Any] = {
            "rules_version": self.ruleset.version,
            "rules_sha256": self.ruleset.sha256,
            "jurisdiction": self.jurisdiction,
        }
        patient = ctx.case.input.data.get("patient")
        if not isinstance(patient, Mapping):
            return Score(
                value=math.nan,
                label="no_patient",
                breakdown=base,
                explanation="the case has no input.data['patient'] record",
            )
        failed = ctx.output.failed
        sections = {} if failed else recommendation_sections(ctx.output)
        results = evaluate_rules(patient, sections, self.ruleset, self.options.threshold, self.jurisdiction)
        rows = [r.as_dict() for r in results if r.applicable is not False]
        applicable = [r.rule_id for r in results if r.applicable is True]
        adherent = [r.rule_id for r in results if r.adherent is True]
        breakdown = {
            **base,
            "rules": rows,
            "applicable_rules": applicable,
            "not_evaluable_rules": [r.rule_id for r in results if r.applicable is None],
            "adherent_rules": adherent,
        }
        if not applicable:
            return Score(
                value=math.nan,
                label="not_applicable",
                breakdown=breakdown,
                explanation="no guideline rule applies to this patient",
            )
        if failed:
            error = ctx.output.error
            return Score(
                value=0.0,
                label="failed",
                breakdown=breakdown,
                explanation=error.message[:500] if error else None,
            )
        missing = [f"{r.rule_id}: {', '.join(r.missing)}" for r in results if r.missing]
        forbidden = [
            f"{r.rule_id}: {', '.join(f['forbidden'] for f in r.forbidden)}" for r in results if r.forbidden
        ]
        spec = specificity(patient, sections, self.ruleset, self.options.threshold)
        breakdown["specificity"] = spec
        ok = not missing and not forbidden and spec["specific"]
        why = [
            *(["missing expected actions: " + "; ".join(missing)] if missing else []),
            *(["forbidden actions recommended: " + "; ".join(forbidden)] if forbidden else []),
            *(
                [
                    f"{len(spec['off_target'])} actions for conditions the patient does not have "
                    f"(at most {spec['off_target_allowed']}): " + ", ".join(spec["off_target"][:8])
                ]
                if not spec["specific"]
                else []
            ),
        ]
        return Score(
            value=1.0 if ok else 0.0,
            label="adherent" if ok else "non_adherent",
            breakdown=breakdown,
            explanation=None if ok else " / ".join(why),
        )


def make_guideline_scorer(options: Mapping[str, Any]) -> GuidelineAdherenceScorer:
    return GuidelineAdherenceScorer(GuidelineOptions.model_validate(dict(options)))
