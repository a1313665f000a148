"""Counterfactual variants of a dataset: ``make_variants(records, attributes, vignette_field)``.

Works on MedQA-shaped records (``question``, ``options`` {letter: text}, ``answer_idx``), MedMCQA-shaped
records (``question``, ``opa``..``opd``, ``cop``, ``id``) and any JSONL record with a vignette field
(``FORMATS`` names the first two). Each input record yields, when at least one attribute was swapped:

* ``<base>:reference``: the record unchanged (the vignette as written);
* ``<base>:<variant>`` per swapped attribute and variant (``17:male``, ``17:female``, ``17:white``,
  ``17:black``, ``17:high_income``, ``17:low_income``): the record with the vignette (and, for sex, the
  options) rewritten.

``<base>`` is the record's ``id`` when it has one, else its 0-based position (clineval's case-id rule, so
MIRAGE's "0017" is base "17"). Every output record keeps the input's fields and adds the scalar fields
``id``, ``group`` (= base), ``variant``, ``attribute`` (``None`` for the reference), ``changed`` (the text
differs from the reference), ``cf_rule`` (``sex@1``) and ``cf_rule_sha256``, and ``cf_warnings`` (a list).
clineval's generic loader keeps scalar fields as case metadata, so ``group`` and ``variant`` are the
counterfactual task's keys as they stand.

Records whose attributes were all skipped or not applicable yield nothing (``keep_unvaried=True`` keeps
their reference). The ``GenerationReport`` counts, per attribute, swapped / skipped (by the first matching
rule, and every matching rule) / not applicable (by reason), with examples.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clineval.counterfactual.rewrite import ATTRIBUTES, AttributeResult, default_variants, rewrite_attribute

FORMATS: dict[str, dict[str, Any]] = {
    "medqa": {"vignette_field": "question", "option_fields": ("options",)},
    "medmcqa": {"vignette_field": "question", "option_fields": ("opa", "opb", "opc", "opd")},
}
REFERENCE = "reference"
EXAMPLES_PER_KEY = 3


@dataclass
class AttributeCounts:
    """Counts of one attribute over a dataset."""

    swapped: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # by the first (counting) rule
    skipped_any: Counter[str] = field(default_factory=Counter)  # by every matching rule
    not_applicable: Counter[str] = field(default_factory=Counter)  # by reason
    stated: Counter[str] = field(default_factory=Counter)  # stated value among swapped
    warnings: int = 0
    unchanged_variants: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def n_skipped(self) -> int:
        return sum(self.skipped.values())

    @property
    def n_not_applicable(self) -> int:
        return sum(self.not_applicable.values())


@dataclass
class GenerationReport:
    """What ``make_variants`` did: per attribute counts, the rules' provenance, and the totals."""

    n_records: int = 0
    n_groups: int = 0
    n_variants: int = 0
    attributes: dict[str, AttributeCounts] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)  # rule@version -> sha256

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_records": self.n_records,
            "n_groups": self.n_groups,
            "n_variants": self.n_variants,
            "rules": dict(self.rules),
            "attributes": {
                name: {
                    "swapped": c.swapped,
                    "skipped": c.n_skipped,
                    "not_applicable": c.n_not_applicable,
                    "skipped_by_rule": dict(c.skipped.most_common()),
                    "matched_by_rule": dict(c.skipped_any.most_common()),
                    "not_applicable_by_reason": dict(c.not_applicable.most_common()),
                    "stated": dict(c.stated.most_common()),
                    "with_warnings": c.warnings,
                    "unchanged_variants": dict(c.unchanged_variants),
                }
                for name, c in self.attributes.items()
            },
        }


def base_id(record: Mapping[str, Any], index: int, id_field: str = "id") -> str:
    """The record's id when present and non-empty, else its 0-based position."""
    value = record.get(id_field)
    return str(index) if value is None or value == "" else str(value)


def _option_texts(record: Mapping[str, Any], option_fields: Sequence[str]) -> tuple[list[str], list[Any]]:
    """Flat option texts, and the (field, key) slots they came from."""
    texts: list[str] = []
    slots: list[Any] = []
    for name in option_fields:
        value = record.get(name)
        if isinstance(value, Mapping):
            for key, text in value.items():
                texts.append(str(text))
                slots.append((name, key))
        elif isinstance(value, str):
            texts.append(value)
            slots.append((name, None))
    return texts, slots


def _variant_record(
    record: Mapping[str, Any],
    base: str,
    variant: str,
    result: AttributeResult | None,
    vignette_field: str,
    slots: list[Any],
) -> dict[str, Any]:
    out = copy.deepcopy(dict(record))
    out.update(id=f"{base}:{variant}", group=base, variant=variant)
    if result is None:
        out.update(attribute=None, changed=False, cf_rule=None, cf_rule_sha256=None, cf_warnings=[])
        return out
    out[vignette_field] = result.texts[variant]
    for (name, key), text in zip(slots, result.options.get(variant, ()), strict=False):
        if key is None:
            out[name] = text
        else:
            out[name][key] = text
    out.update(
        attribute=result.attribute,
        changed=result.changed[variant],
        cf_rule=result.rule,
        cf_rule_sha256=result.rule_sha256,
        cf_warnings=list(result.warnings),
    )
    return out


def _example(counts: AttributeCounts, key: str, base: str, result: AttributeResult, vignette: str) -> None:
    bucket = counts.examples.setdefault(key, [])
    if len(bucket) >= EXAMPLES_PER_KEY:
        return
    bucket.append(
        {
            "group": base,
            "stated": result.stated,
            "reason": result.reason,
            "skipped_by": list(result.skipped_by),
            "evidence": list(result.evidence),
            "replacements": {v: list(r) for v, r in result.replacements.items()},
            "vignette": vignette,
            "texts": dict(result.texts),
        }
    )


def make_variants(
    records: Iterable[Mapping[str, Any]],
    attributes: Sequence[str],
    vignette_field: str = "question",
    *,
    option_fields: Sequence[str] = (),
    id_field: str = "id",
    variants: Mapping[str, Sequence[str]] | None = None,
    keep_unvaried: bool = False,
) -> tuple[list[dict[str, Any]], GenerationReport]:
    """Variants of every record for every attribute (see the module docstring) and the report."""
    unknown = [a for a in attributes if a not in ATTRIBUTES]
    if unknown or not attributes:
        raise ValueError(f"attributes must be a non-empty subset of {ATTRIBUTES}, got {list(attributes)}")
    chosen = {a: tuple((variants or {}).get(a) or default_variants(a)) for a in attributes}
    report = GenerationReport(attributes={a: AttributeCounts() for a in attributes})
    out: list[dict[str, Any]] = []
    for index, record in enumerate(records):
        vignette = record.get(vignette_field)
        if not isinstance(vignette, str):
            raise ValueError(f"record {index}: field {vignette_field!r} is missing or not text")
        base = base_id(record, index, id_field)
        options, slots = _option_texts(record, option_fields)
        report.n_records += 1
        produced: list[dict[str, Any]] = []
        for attribute in attributes:
            result = rewrite_attribute(vignette, attribute, chosen[attribute], options)
            report.rules[result.rule] = result.rule_sha256
            counts = report.attributes[attribute]
            if result.status == "not_applicable":
                counts.not_applicable[result.reason or ""] += 1
                _example(counts, f"not_applicable: {result.reason}", base, result, vignette)
                continue
            if result.status == "skipped":
                counts.skipped[result.skipped_by[0]] += 1
                counts.skipped_any.update(set(result.skipped_by))
                _example(counts, f"skipped: {result.skipped_by[0]}", base, result, vignette)
                continue
            counts.swapped += 1
            counts.stated[result.stated or "unstated"] += 1
            counts.warnings += bool(result.warnings)
            _example(counts, "swapped", base, result, vignette)
            for variant in chosen[attribute]:
                counts.unchanged_variants[variant] += not result.changed[variant]
                produced.append(_variant_record(record, base, variant, result, vignette_field, slots))
        if produced or keep_unvaried:
            out.append(_variant_record(record, base, REFERENCE, None, vignette_field, slots))
            out.extend(produced)
            report.n_groups += 1
    report.n_variants = len(out)
    _add_exclusion_provenance(report, attributes)
    return out, report


def _add_exclusion_provenance(report: GenerationReport, attributes: Sequence[str]) -> None:
    from clineval.counterfactual.exclusions import exclusion_rules

    for attribute in attributes:
        for rule in exclusion_rules(attribute):
            report.rules[f"exclusion:{rule.key}"] = rule.sha256


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Records of a JSON Lines file (blank lines skipped); a bad line raises ``ValueError`` naming it."""
    records = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from exc
    return records


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Write records as JSON Lines (UTF-8, one object per line); returns how many."""
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count
