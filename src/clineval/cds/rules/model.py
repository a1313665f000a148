"""Guideline rules as data: the YAML schema (pydantic), parsing with file:line errors, the packaged rules.

See ``clineval.cds.rules.engine`` for how rules are evaluated.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clineval.cds.clinical_thresholds import resolve_threshold
from clineval.core.errors import DataFileError
from clineval.core.helpers.safe_yaml import safe_load

Op = Literal[">", ">=", "<", "<=", "==", "present", "absent", "flagged"]
KINDS = ("lab", "vital", "score", "ef", "finding", "measurement", "allergy", "age", "event")
TEXT_KINDS = ("finding", "allergy")  # matched as text (present | absent); the others are numbers
NEGATION = re.compile(
    r"\b(avoid|avoiding|do not|don't|not|no|hold|withhold|omit|stop|discontinue|contraindicated|never)\b",
    re.IGNORECASE,
)
# Patient facts: a clause with one of these is not a fact about the patient ("family history of cancer").
PATIENT_NEGATION = re.compile(
    r"\b(no|not|denies|denied|negative|ruled out|excluded|resolved|family history|fh)\b",
    re.IGNORECASE,
)
# What follows these in a clause is not given / not present ("insulin without glucose" names no glucose).
CUT = re.compile(r"\b(without|instead of|rather than|in place of)\b.*$", re.IGNORECASE)
_CLAUSE = re.compile(r"[;.]\s+|[;.]$|\s+but\s+", re.IGNORECASE)
CONFUSION = ("confusion", "acute confusion", "altered mental status", "delirium", "disorientation")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class LabDef(_Model):
    aliases: list[str]
    unit: str
    conversions: dict[str, float] = Field(default_factory=dict)


class ContextItem(_Model):
    lab: str | None = None
    vital: str | None = None
    score: str | None = None
    ef: str | None = None
    finding: str | None = None
    measurement: str | None = None
    allergy: str | None = None  # patient.allergies (text)
    age: str | None = None  # patient.age (years); write ``age: years``
    event: str | None = None  # patient.events [{name, days_ago}]: op/value compare days_ago
    op: Op
    value: float | None = None
    unit: str | None = None
    synonyms: list[str] = Field(default_factory=list)
    threshold: str | None = None  # a clinical_thresholds name (shared with tier 1): fills op, value, unit
    # A lab judged by the laboratory's own flag (no numeric limit): holds when the latest row's flag is one
    # of these; op "flagged" (filled in when ``flags`` is given).
    flags: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _resolve_threshold(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("flags") and "op" not in data:
            data = {**data, "op": "flagged"}
        return resolve_threshold(data)

    @model_validator(mode="after")
    def _one_kind(self) -> ContextItem:
        kinds = [k for k in KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a context item names exactly one of {', '.join(KINDS)}; got {kinds}")
        if self.op in ("present", "absent") and kinds[0] not in TEXT_KINDS:
            raise ValueError(f"op {self.op!r} is for findings and allergies only")
        if kinds[0] in TEXT_KINDS and self.op not in ("present", "absent"):
            raise ValueError(f"a {kinds[0]} item takes op present or absent")
        if (self.op == "flagged") != bool(self.flags) or (self.flags and kinds[0] != "lab"):
            raise ValueError("flags (op flagged) are for lab items, instead of a numeric limit")
        if self.op == "flagged" and self.value is not None:
            raise ValueError("a flagged lab item has no numeric limit (value or threshold)")
        if self.op not in ("present", "absent", "flagged") and self.value is None:
            raise ValueError(f"op {self.op!r} needs a value")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in KINDS if getattr(self, k) is not None)

    @property
    def name(self) -> str:
        return str(getattr(self, self.kind))

    def describe(self) -> str:
        if self.op in ("present", "absent"):
            return f"{self.name} {self.op}"
        if self.op == "flagged":
            return f"{self.name} flagged {'/'.join(self.flags)}"
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.name} {self.op} {self.value:g}{unit}"


class AnyOfContext(_Model):
    any_of: list[ContextItem] = Field(min_length=1)
    # Members are alternative assays of one analyte (troponin T / I): a lab member with no result is left
    # out when another member has one (an assay not done is not missing data), unknown when none has.
    skip_unmeasured: bool = False

    def describe(self) -> str:
        return " or ".join(item.describe() for item in self.any_of)


Context = list[ContextItem | AnyOfContext]


class Quote(_Model):
    """The recommendation a rule encodes, as written in the guideline (``paraphrased`` when not verbatim)."""

    guideline: str
    year: int
    section: str
    class_: str = Field(alias="class")
    level: str
    text: str
    paraphrased: bool = False


class ActionSpec(_Model):
    """An action named by ``action`` or a synonym. A clause that also names a ``not_if_naming`` term counts
    only through a term that names it too ("metoprolol (beta-blocker)" is not an evidence-based
    beta-blocker; "metoprolol succinate" is)."""

    action: str
    synonyms: list[str] = Field(default_factory=list)
    not_if_naming: list[str] = Field(default_factory=list)

    @property
    def terms(self) -> list[str]:
        return [self.action, *self.synonyms]

    @property
    def label(self) -> str:
        return self.action


class Regimen(_Model):
    """An alternative made of several actions, all required (each may be on any line)."""

    regimen: str
    all_of: list[ActionSpec] = Field(min_length=1)

    @property
    def label(self) -> str:
        return self.regimen


class _Expected(_Model):
    when: Context = Field(default_factory=list)  # required only when these hold (all)
    unless: Context = Field(default_factory=list)  # not required when one of these is known to hold
    jurisdictions: list[str] = Field(default_factory=list)  # [] = every jurisdiction


class ExpectedAction(ActionSpec, _Expected):
    """A required action (``when``: only for patients where those context items hold)."""


class ActionGroup(_Expected):
    """Alternatives: satisfied by any one action or regimen."""

    any_of: list[ActionSpec | Regimen] = Field(min_length=1)
    name: str | None = None

    @property
    def label(self) -> str:
        return self.name or " or ".join(a.label for a in self.any_of)


class ForbiddenAction(ActionSpec):
    """An action that makes a recommendation non-adherent when ``when`` holds for the patient, unless the
    recommendation also names one of ``unless_with`` (a required companion: insulin without glucose)."""

    when: Context = Field(default_factory=list)
    unless_with: list[str] = Field(default_factory=list)
    jurisdictions: list[str] = Field(default_factory=list)
    reason: str


class Rule(_Model):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    title: str
    condition: list[str]
    condition_exclude: list[str] = Field(default_factory=list)
    exclude_if: Context = Field(default_factory=list)  # any item holding -> the rule does not apply
    context: Context = Field(default_factory=list)
    expected_actions: list[ExpectedAction | ActionGroup] = Field(min_length=1)
    forbidden_actions: list[ForbiddenAction] = Field(default_factory=list)
    escalation: bool = False
    escalation_reason: str | None = None
    recommendation: list[Quote] = Field(default_factory=list)
    cannot_judge: str | None = None
    source: str
    class_: str = Field(alias="class")
    level: str

    def action_labels(self, jurisdiction: str | None = None) -> list[str]:
        """One name per expected action (alternatives joined by " or "), for ``jurisdiction`` if given."""
        return [
            a.label
            for a in self.expected_actions
            if jurisdiction is None or not a.jurisdictions or jurisdiction in a.jurisdictions
        ]

    def contexts(self) -> list[ContextItem]:
        """Every context item of the rule (applicability, exclusions, conditional and forbidden actions)."""
        groups: list[ContextItem | AnyOfContext] = [*self.context, *self.exclude_if]
        for item in [*self.expected_actions, *self.forbidden_actions]:
            groups.extend(item.when)
        for expected in self.expected_actions:
            groups.extend(expected.unless)
        return [i for g in groups for i in (g.any_of if isinstance(g, AnyOfContext) else [g])]


class Jurisdictions(_Model):
    default: str
    options: dict[str, str] = Field(min_length=1)  # name -> what it selects


class RuleSet(_Model):
    version: str
    jurisdictions: Jurisdictions | None = None
    labs: dict[str, LabDef] = Field(default_factory=dict)
    rules: list[Rule] = Field(min_length=1)
    sha256: str = ""
    source: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> RuleSet:
        ids = [r.id for r in self.rules]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate rule ids: {dupes}")
        known = set(self.jurisdictions.options) if self.jurisdictions else set()
        if self.jurisdictions and self.jurisdictions.default not in known:
            raise ValueError(f"default jurisdiction {self.jurisdictions.default!r} is not an option")
        for rule in self.rules:
            for tagged in [*rule.expected_actions, *rule.forbidden_actions]:
                unknown = sorted(set(tagged.jurisdictions) - known)
                if unknown:
                    raise ValueError(f"rule {rule.id}: unknown jurisdictions {unknown}")
            for item in rule.contexts():
                if item.lab is not None:
                    lab = self.labs.get(item.lab)
                    if lab is None:
                        raise ValueError(f"rule {rule.id}: lab {item.lab!r} is not in the labs table")
                    if item.unit is not None and item.unit != lab.unit:
                        raise ValueError(f"rule {rule.id}: {item.lab} threshold must be in {lab.unit}")
        return self

    def jurisdiction(self, name: str | None) -> str | None:
        """``name`` checked against the options (None: the default; None too when there are none)."""
        if self.jurisdictions is None:
            if name is not None:
                raise ValueError(f"the rules {self.source} define no jurisdictions; got {name!r}")
            return None
        if name is None:
            return self.jurisdictions.default
        if name not in self.jurisdictions.options:
            options = ", ".join(sorted(self.jurisdictions.options))
            raise ValueError(f"unknown jurisdiction {name!r} (options: {options})")
        return name

    def rule(self, rule_id: str) -> Rule:
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise KeyError(rule_id)


def parse_rules(data: bytes, source: str) -> RuleSet:
    """A RuleSet from YAML bytes; ``sha256`` is the hash of those bytes. Bad data raises DataFileError."""
    raw = safe_load(data, path=source)  # no aliases, standard tags, bounded depth, no duplicate key
    if not isinstance(raw, dict):
        raise DataFileError("guideline rules must be a mapping {version, labs, rules}", path=source)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    terms = raw.pop("terms", None) or {}
    if not isinstance(terms, dict) or not all(isinstance(v, list) for v in terms.values()):
        raise DataFileError("guideline rules: 'terms' must map names to lists of terms", path=source)
    try:
        raw = _expand_terms(raw, terms)
        return RuleSet.model_validate({**raw, "sha256": digest, "source": source})
    except KeyError as err:
        raise DataFileError(f"invalid guideline rules: unknown term list {err}", path=source) from None
    except ValidationError as err:
        raise DataFileError(f"invalid guideline rules: {err}", path=source) from None


def _expand_terms(node: Any, terms: dict[str, list[Any]]) -> Any:
    """Replace each list item ``"@name"`` by the items of ``terms[name]`` (shared drug lists)."""
    if isinstance(node, dict):
        return {k: _expand_terms(v, terms) for k, v in node.items()}
    if isinstance(node, list):
        out: list[Any] = []
        for item in node:
            if isinstance(item, str) and item.startswith("@"):
                out.extend(terms[item[1:]])
            else:
                out.append(_expand_terms(item, terms))
        return out
    return node


# The packaged rulesets (``guideline_adherence: {ruleset: ...}``): the default v2 rules, and the four-tier
# design's own rule table (docs/cds/tier3_guidelines.md, "The design table ruleset").
PACKAGED_RULESETS = {"v2": "guideline_rules.yaml", "design_table": "guideline_rules_design_table.yaml"}


@lru_cache(maxsize=8)
def packaged_rules(name: str = "v2") -> RuleSet:
    """A packaged ruleset by name (``PACKAGED_RULESETS``); an unknown name raises ValueError."""
    if name not in PACKAGED_RULESETS:
        raise ValueError(f"unknown ruleset {name!r} (options: {', '.join(sorted(PACKAGED_RULESETS))})")
    file = PACKAGED_RULESETS[name]
    ref = resources.files("clineval.cds.rules").joinpath("data", file)
    return parse_rules(ref.read_bytes(), f"clineval/cds/rules/data/{file}")


@lru_cache(maxsize=8)
def load_rules(path: str | None = None) -> RuleSet:
    """The packaged v2 rules (``path`` None) or those of a YAML file."""
    if path is None:
        return packaged_rules("v2")
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise DataFileError(f"cannot read guideline rules: {err.strerror}", path=path) from None
    return parse_rules(data, path)
