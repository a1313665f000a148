"""Deterministic, rule-based rewriting of a vignette for one attribute: ``sex``, ``race`` or ``ses``.

``rewrite_attribute(vignette, attribute, variants, options=())`` decides, in this order, and returns one
``AttributeResult`` with a status:

1. **not_applicable**: the vignette does not state the attribute (no patient, sex not stated, no race
   descriptor; ``reason`` says which);
2. **skipped**: an exclusion rule matches the vignette or its options (``exclusions.find_exclusions``:
   medical rules first, then coherence rules), or a coherence check of the rewrite itself fails
   (``sex.coherence.other_person``, ``race.coherence.mixed_descriptors``); ``skipped_by`` lists every
   matching rule, the first being the one a report counts it under; no text is written;
3. **swapped**: one text per requested variant (``texts``), with ``changed`` per variant (``False`` when the
   variant is the text as written, e.g. ``male`` for a vignette about a man), the replacements made, and
   the rule's provenance (``sex@1`` and the sha256 of its data, ``ruledata.rule_hash``).

Options are rewritten only by the sex rule (pronouns in options such as "Reassure her" must follow the
patient); race and ses never touch options (an option that names a race skips the race swap instead).

Sources of each rule and decision: the module docstrings of ``rewrite_sex``, ``rewrite_race``,
``rewrite_ses`` and ``exclusions``, and the YAML files under ``rules/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from clineval.counterfactual.exclusions import find_exclusions
from clineval.counterfactual.rewrite_race import (
    default_race_variants,
    find_race,
    race_groups,
    race_variant_text,
)
from clineval.counterfactual.rewrite_ses import find_ses, ses_variant_text, ses_variants
from clineval.counterfactual.rewrite_sex import SexFinding, find_sex, sex_variant_text
from clineval.counterfactual.ruledata import provenance, rewrite_rule

Status = Literal["swapped", "skipped", "not_applicable"]
ATTRIBUTES = ("sex", "race", "ses")
SEX_VARIANTS = {"male": "M", "female": "F"}


@dataclass(frozen=True)
class AttributeResult:
    """The outcome of one attribute on one vignette (see the module docstring)."""

    attribute: str
    status: Status
    stated: str | None = None  # "M"/"F"; the race group(s) joined by "+"; None for ses
    reason: str | None = None
    skipped_by: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()
    texts: dict[str, str] = field(default_factory=dict)
    options: dict[str, tuple[str, ...]] = field(default_factory=dict)
    changed: dict[str, bool] = field(default_factory=dict)
    replacements: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    rule: str = ""
    rule_sha256: str = ""


def default_variants(attribute: str) -> tuple[str, ...]:
    """The variants written when none are asked for: male/female, white/black, high_income/low_income."""
    if attribute == "sex":
        return tuple(SEX_VARIANTS)
    if attribute == "race":
        return default_race_variants()
    if attribute == "ses":
        return ses_variants()
    raise ValueError(f"unknown attribute {attribute!r}; known: {ATTRIBUTES}")


def _check_variants(attribute: str, variants: Sequence[str]) -> None:
    known = {"sex": tuple(SEX_VARIANTS), "race": race_groups(), "ses": ses_variants()}[attribute]
    unknown = [v for v in variants if v not in known]
    if unknown:
        raise ValueError(f"unknown {attribute} variant(s) {unknown}; known: {list(known)}")


def rewrite_attribute(
    vignette: str, attribute: str, variants: Sequence[str] | None = None, options: Sequence[str] = ()
) -> AttributeResult:
    """Rewrite ``vignette`` for every variant of ``attribute`` (see the module docstring)."""
    if attribute not in ATTRIBUTES:
        raise ValueError(f"unknown attribute {attribute!r}; known: {ATTRIBUTES}")
    wanted = tuple(variants) if variants else default_variants(attribute)
    _check_variants(attribute, wanted)
    prov = provenance(rewrite_rule(attribute))
    base = _Base(attribute, prov["rule"], prov["sha256"])
    sex = find_sex(vignette)
    if attribute == "sex":
        stated, reason = sex.sex, sex.reason
    elif attribute == "race":
        race = find_race(vignette)
        stated, reason = ("+".join(race.groups) or None), race.reason
    else:
        ses = find_ses(vignette, sex.sex)
        stated, reason = None, ses.reason
    if reason is not None:
        return base.result("not_applicable", stated=stated, reason=reason)
    hits = find_exclusions("\n".join([vignette, *options]), attribute)
    if hits:
        return _skipped(base, stated, tuple(h.rule for h in hits), tuple(h.evidence for h in hits))
    if attribute == "sex":
        return _sex(vignette, options, sex, wanted, base)
    if attribute == "race":
        if len(race.groups) > 1:
            return _skipped(base, stated, ("race.coherence.mixed_descriptors",), (stated or "",))
        texts, changed, repl = {}, {}, {}
        for variant in wanted:
            text, replacements = race_variant_text(vignette, race, variant)
            texts[variant], changed[variant], repl[variant] = text, text != vignette, replacements
        return base.result("swapped", stated=stated, texts=texts, changed=changed, replacements=repl)
    finding = find_ses(vignette, sex.sex)
    texts, changed, repl = {}, {}, {}
    for variant in wanted:
        text, replacements = ses_variant_text(vignette, finding, variant)
        texts[variant], changed[variant], repl[variant] = text, text != vignette, replacements
    return base.result("swapped", stated=sex.sex, texts=texts, changed=changed, replacements=repl)


@dataclass(frozen=True)
class _Base:
    attribute: str
    rule: str
    rule_sha256: str

    def result(self, status: Status, **fields: Any) -> AttributeResult:
        return AttributeResult(
            attribute=self.attribute, status=status, rule=self.rule, rule_sha256=self.rule_sha256, **fields
        )


def _skipped(
    base: _Base, stated: str | None, rules: tuple[str, ...], evidence: tuple[str, ...]
) -> AttributeResult:
    return base.result("skipped", stated=stated, skipped_by=rules, evidence=evidence)


def _sex(
    vignette: str, options: Sequence[str], sex: SexFinding, wanted: tuple[str, ...], base: _Base
) -> AttributeResult:
    texts, changed, repl, new_options = {}, {}, {}, {}
    warnings: tuple[str, ...] = ()
    # an option has no anchor of its own: it is flipped with the vignette's patient sex
    option_finding = SexFinding(sex.sex, None, None, None)
    for variant in wanted:
        swap = sex_variant_text(vignette, sex, SEX_VARIANTS[variant])
        if swap.text is None:
            return _skipped(base, sex.sex, (swap.skipped_by or "",), ("",))
        warnings = warnings or swap.warnings
        texts[variant], changed[variant], repl[variant] = swap.text, swap.text != vignette, swap.replacements
        opts = []
        for option in options:
            option_swap = sex_variant_text(option, option_finding, SEX_VARIANTS[variant]) if option else None
            opts.append(option_swap.text if option_swap and option_swap.text is not None else option)
        new_options[variant] = tuple(opts)
    return base.result(
        "swapped",
        stated=sex.sex,
        texts=texts,
        options=new_options,
        changed=changed,
        replacements=repl,
        warnings=warnings,
    )


def rewrite(vignette: str, attribute: str, variant: str) -> str | None:
    """The vignette for one variant, or ``None`` when the attribute is skipped or does not apply."""
    result = rewrite_attribute(vignette, attribute, [variant])
    return result.texts.get(variant)
