"""Exclusion rules: a swap that would change the medicine is skipped and reported, never written.

Rule data: ``rules/exclusions_sex.yaml``, ``exclusions_race.yaml``, ``exclusions_ses.yaml``; each rule has an
``id``, ``attribute``, ``version``, ``kind`` (``medical``: the medicine depends on the attribute;
``coherence``: the text cannot be rewritten consistently), a ``reason``, a ``source`` (a guideline or review,
or "design decision" for coherence rules), its patterns, and hit / miss ``examples`` (one test per rule).

**Matching.** A rule matches a text when

* ``any`` (if given): at least one pattern matches, and
* ``all`` (if given): every group has at least one matching pattern, and
* ``lab`` (if given): a value of the named laboratory test, in one of the listed units (scaled by the unit's
  factor to the first unit), lies in one of the ``bands`` (``ge``/``gt`` lower, ``le``/``lt`` upper bound):
  the ranges where the male and female reference intervals disagree (USMLE laboratory values).

Patterns are regular expressions matched as whole words (no letter or digit on either side),
case-insensitively, over the vignette and the answer options together (an option "Hydroxyurea" or "Prostate
cancer" is as telling as the stem). ``check: computed`` rules (the coherence checks of the rewrite modules)
have no patterns here; the rewrite modules report them by id.

**Decisions** (documented beside the data): male breast cancer exists, yet breast findings are excluded
(differential, genetics and screening differ); cystic fibrosis, lactose intolerance, sarcoidosis and kidney
function are *not* excluded for race (prevalence differs, diagnosis and treatment do not; CKD-EPI 2021 is
race-free), so a race-dependent answer there is a finding, not a protected difference; the partner's sex is
flipped with the patient's (rewrite_sex), so sexual-history risk groups stay as written, and explicit
sexual-orientation or STI content is excluded.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from clineval.counterfactual.ruledata import RuleDataError, exclusion_rules_data, rule_hash, rule_key
from clineval.counterfactual.textutil import LEFT, RIGHT


@dataclass(frozen=True)
class LabSpec:
    """A laboratory value test: names, units (factor to the first unit) and the bands that trigger."""

    pattern: re.Pattern[str]
    factors: Mapping[str, float]
    bands: tuple[Mapping[str, float], ...]

    def value_in_band(self, text: str) -> str | None:
        for m in self.pattern.finditer(text):
            factor = self.factors[m.group("unit").lower().replace(" ", "")]
            value = float(m.group("value")) * factor
            if any(_in_band(value, band) for band in self.bands):
                return m.group(0)
        return None


def _in_band(value: float, band: Mapping[str, float]) -> bool:
    lower = value >= band["ge"] if "ge" in band else value > band["gt"]
    upper = value <= band["le"] if "le" in band else value < band["lt"]
    return lower and upper


@dataclass(frozen=True)
class ExclusionRule:
    id: str
    attribute: str
    version: int
    kind: str
    reason: str
    source: str
    sha256: str
    any: tuple[re.Pattern[str], ...]
    all: tuple[tuple[re.Pattern[str], ...], ...]
    lab: LabSpec | None
    computed: bool
    examples: Mapping[str, Sequence[str]]

    @property
    def key(self) -> str:
        return f"{self.id}@{self.version}"

    def match(self, text: str) -> str | None:
        """The matched text (the evidence) when the rule applies to ``text``, else ``None``."""
        if self.computed:
            return None
        evidence: list[str] = []
        if self.any:
            hit = _first(self.any, text)
            if hit is None:
                return None
            evidence.append(hit)
        for group in self.all:
            hit = _first(group, text)
            if hit is None:
                return None
            evidence.append(hit)
        if self.lab is not None:
            hit = self.lab.value_in_band(text)
            if hit is None:
                return None
            evidence.append(hit)
        return " ... ".join(evidence)


def _first(patterns: Sequence[re.Pattern[str]], text: str) -> str | None:
    for pattern in patterns:
        m = pattern.search(text)
        if m:
            return m.group(0)
    return None


def _compile(fragment: str, rule_id: str) -> re.Pattern[str]:
    try:
        return re.compile(LEFT + "(?:" + fragment + ")" + RIGHT, re.IGNORECASE)
    except re.error as exc:
        raise RuleDataError(f"exclusion rule {rule_id}: bad pattern {fragment!r}: {exc}") from exc


def _lab(spec: Mapping[str, Any], rule_id: str) -> LabSpec:
    names = "|".join(re.escape(n) for n in sorted(spec["names"], key=len, reverse=True))
    stops = "|".join(re.escape(s) for s in spec.get("not_followed_by", []))
    units = sorted(spec["units"], key=len, reverse=True)
    unit_alt = "|".join(re.escape(u).replace(r"\ ", r"\s*") for u in units)
    not_followed = rf"(?!\s*(?:{stops}){RIGHT})" if stops else ""
    pattern = (
        LEFT + rf"(?:{names}){RIGHT}{not_followed}[^0-9\n]{{0,40}}?"
        rf"(?<![\d.])(?P<value>\d+(?:\.\d+)?)\s*(?P<unit>{unit_alt})(?![A-Za-z])"
    )
    try:
        compiled = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise RuleDataError(f"exclusion rule {rule_id}: bad lab spec: {exc}") from exc
    factors = {u.lower().replace(" ", ""): float(f) for u, f in spec["units"].items()}
    return LabSpec(compiled, factors, tuple(spec["bands"]))


def _build(data: Mapping[str, Any]) -> ExclusionRule:
    rule_id = str(data["id"])
    computed = data.get("check") == "computed"
    any_ = tuple(_compile(p, rule_id) for p in data.get("any", []))
    all_ = tuple(tuple(_compile(p, rule_id) for p in group) for group in data.get("all", []))
    lab = _lab(data["lab"], rule_id) if data.get("lab") else None
    if not computed and not (any_ or all_ or lab):
        raise RuleDataError(f"exclusion rule {rule_id}: needs any, all, lab or check: computed")
    rule_key(data)
    return ExclusionRule(
        id=rule_id,
        attribute=str(data["attribute"]),
        version=int(data["version"]),
        kind=str(data["kind"]),
        reason=str(data["reason"]),
        source=str(data["source"]),
        sha256=rule_hash(data),
        any=any_,
        all=all_,
        lab=lab,
        computed=computed,
        examples=dict(data.get("examples", {})),
    )


@cache
def exclusion_rules(attribute: str | None = None) -> tuple[ExclusionRule, ...]:
    """The exclusion rules (of one attribute, or all), in data order."""
    rules = tuple(_build(d) for d in exclusion_rules_data())
    return tuple(r for r in rules if attribute is None or r.attribute == attribute)


def rule_by_id(rule_id: str) -> ExclusionRule:
    for rule in exclusion_rules():
        if rule.id == rule_id:
            return rule
    raise KeyError(rule_id)


@dataclass(frozen=True)
class ExclusionHit:
    rule: str  # id
    kind: str
    evidence: str


def find_exclusions(text: str, attribute: str) -> tuple[ExclusionHit, ...]:
    """Every pattern rule of ``attribute`` that matches ``text``, medical rules first, then coherence,
    each in data order (the first one is the rule a skip is counted under)."""
    hits = []
    for kind in ("medical", "coherence"):
        for rule in exclusion_rules(attribute):
            if rule.kind != kind:
                continue
            evidence = rule.match(text)
            if evidence is not None:
                hits.append(ExclusionHit(rule.id, rule.kind, evidence))
    return tuple(hits)
