"""Guideline rules as data: the YAML schema (pydantic), parsing with file:line errors, the packaged rules.

See ``clineval.scoring.rule_engine`` for how rules are evaluated.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from clineval.core.errors import DataFileError
from clineval.core.safe_yaml import safe_load

Op = Literal[">", ">=", "<", "<=", "==", "present", "absent"]
KINDS = ("lab", "vital", "score", "ef", "finding", "measurement")
NEGATION = re.compile(
    r"\b(avoid|avoiding|do not|don't|not|no|hold|withhold|omit|stop|discontinue|contraindicated|never)\b",
    re.IGNORECASE,
)
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
    op: Op
    value: float | None = None
    unit: str | None = None
    synonyms: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_kind(self) -> ContextItem:
        kinds = [k for k in KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"a context item names exactly one of {', '.join(KINDS)}; got {kinds}")
        if self.op in ("present", "absent") and kinds[0] != "finding":
            raise ValueError(f"op {self.op!r} is for findings only")
        if self.op not in ("present", "absent") and self.value is None:
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
        unit = f" {self.unit}" if self.unit else ""
        return f"{self.name} {self.op} {self.value:g}{unit}"


class AnyOfContext(_Model):
    any_of: list[ContextItem] = Field(min_length=1)

    def describe(self) -> str:
        return " or ".join(item.describe() for item in self.any_of)


class ActionSpec(_Model):
    action: str
    synonyms: list[str] = Field(default_factory=list)

    @property
    def terms(self) -> list[str]:
        return [self.action, *self.synonyms]


class ActionGroup(_Model):
    any_of: list[ActionSpec] = Field(min_length=1)

    @property
    def label(self) -> str:
        return " or ".join(a.action for a in self.any_of)


class Rule(_Model):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    title: str
    condition: list[str]
    condition_exclude: list[str] = Field(default_factory=list)
    context: list[ContextItem | AnyOfContext] = Field(default_factory=list)
    expected_actions: list[ActionSpec | ActionGroup] = Field(min_length=1)
    escalation: bool = False
    escalation_reason: str | None = None
    source: str
    class_: str = Field(alias="class")
    level: str

    def action_labels(self) -> list[str]:
        """One name per expected action: the action, or the alternatives of a group joined by " or "."""
        return [a.action if isinstance(a, ActionSpec) else a.label for a in self.expected_actions]


class RuleSet(_Model):
    version: str
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
        for rule in self.rules:
            for group in rule.context:
                for item in group.any_of if isinstance(group, AnyOfContext) else [group]:
                    if item.lab is None:
                        continue
                    lab = self.labs.get(item.lab)
                    if lab is None:
                        raise ValueError(f"rule {rule.id}: lab {item.lab!r} is not in the labs table")
                    if item.unit is not None and item.unit != lab.unit:
                        raise ValueError(f"rule {rule.id}: {item.lab} threshold must be in {lab.unit}")
        return self

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
    try:
        return RuleSet.model_validate({**raw, "sha256": digest, "source": source})
    except ValidationError as err:
        raise DataFileError(f"invalid guideline rules: {err}", path=source) from None


@lru_cache(maxsize=8)
def load_rules(path: str | None = None) -> RuleSet:
    """The packaged rules (``path`` None) or those of a YAML file."""
    if path is None:
        ref = resources.files("clineval.scoring").joinpath("data", "guideline_rules.yaml")
        return parse_rules(ref.read_bytes(), "clineval/scoring/data/guideline_rules.yaml")
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise DataFileError(f"cannot read guideline rules: {err.strerror}", path=path) from None
    return parse_rules(data, path)
