"""The ``counterfactual`` task option: which cases pair up, and a finished task's results -> the analysis.

In a suite::

    counterfactual:
      group: group            # metadata key naming the base question (default "group")
      variant: variant        # metadata key naming the variant (default "variant")
      reference: reference    # the unmodified vignette's variant name (null: none)
      pairs: [[white, black], [male, female]]
      scorer: mcq             # whose score is right/wrong (default: the task's first scorer)

A case without the ``group`` or ``variant`` metadata key is keyed by its id's ``<base>:<variant>`` form
(``17:black``), so a MedQA file written by ``clineval counterfactual make`` works with the ``medqa`` loader,
which keeps no such metadata. What ``check_cases`` refuses (one line each, the suite's line): a case keyed
by neither, two cases for one (group, variant), a pair or reference naming a variant no case has.

**Outcome of a case** (``outcomes_from_results``): the scorer's value (1/0 for MCQ; any number for DDx
recall or rubric scores); NaN (left out of every pair, counted in ``n_unscored``) when the system call
failed, since a failed call is not the model's answer, or when the scorer could not score it. The
**answer** a flip compares, in this order: the scorer's ``breakdown["extracted"]`` (MCQ: the option
letter), the structured ``answer``, the first diagnosis of a structured ``differential``, else the output
text with whitespace collapsed; compared after stripping and case-folding.

**Gate metrics** (``gate_metrics``): ``counterfactual_flip_rate`` (the largest flip rate over the task's
pairs) and ``counterfactual_abs_delta`` (the largest |delta|), both lower-is-better gating metrics
(``clineval.analysis.gate_roles``). Computed only when every pair has pairs; else absent, and the report
says why.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.core.case import Case
from clineval.core.score import CaseResult
from clineval.counterfactual.paired import Outcome, counterfactual_analysis

FLIP_METRIC = "counterfactual_flip_rate"
DELTA_METRIC = "counterfactual_abs_delta"
MAX_LISTED = 200  # flipped groups listed per pair in report.json (the viewer lists all)


class CounterfactualOption(BaseModel):
    """The task option (module docstring); unknown keys are an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    group: str = Field(default="group", min_length=1)
    variant: str = Field(default="variant", min_length=1)
    reference: str | None = "reference"
    pairs: list[tuple[str, str]] = Field(min_length=1)
    scorer: str | None = None
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    seed: int = 0
    n_resamples: int = Field(default=10_000, ge=100)


def key_of(case_id: str, metadata: Mapping[str, Any], option: CounterfactualOption) -> tuple[str, str] | None:
    """``(group, variant)`` of a case: its metadata keys, else its id's ``<base>:<variant>``; else None."""
    group, variant = metadata.get(option.group), metadata.get(option.variant)
    if group is not None and variant is not None:
        return str(group), str(variant)
    if ":" in case_id:
        base, name = case_id.rsplit(":", 1)
        return str(group) if group is not None else base, str(variant) if variant is not None else name
    return None


def check_cases(option: CounterfactualOption, cases: Iterable[Case]) -> str | None:
    """Why these cases cannot be analysed with ``option`` (one line), or None."""
    seen: dict[tuple[str, str], str] = {}
    variants: set[str] = set()
    for case in cases:
        key = key_of(case.id, case.metadata, option)
        if key is None:
            return (
                f"case {case.id!r} has no {option.group!r}/{option.variant!r} metadata and its id has no "
                "':<variant>' suffix"
            )
        if key in seen:
            return f"cases {seen[key]!r} and {case.id!r} are both group {key[0]!r}, variant {key[1]!r}"
        seen[key] = case.id
        variants.add(key[1])
    named = [v for pair in option.pairs for v in pair] + ([option.reference] if option.reference else [])
    missing = sorted({v for v in named if v not in variants})
    if missing:
        known = ", ".join(sorted(variants))
        return f"variant(s) {', '.join(map(repr, missing))} in no case (variants: {known})"
    for a, b in option.pairs:
        if a == b:
            return f"pair [{a}, {b}] compares a variant with itself"
    return None


def sample_groups(ids: Sequence[str], keys: Sequence[tuple[str, str]], limit: int, seed: int) -> list[int]:
    """Indices of the cases of ``limit`` base questions chosen by a seeded hash (all their variants), in
    dataset order: ``--limit`` on a counterfactual task counts questions, so no pair is cut in half."""
    groups = sorted({g for g, _ in keys}, key=lambda g: hashlib.sha256(f"{seed}:{g}".encode()).digest())
    chosen = set(groups[:limit])
    return [i for i, (g, _) in enumerate(keys) if g in chosen and i < len(ids)]


def answer_of(result: CaseResult, scorer: str) -> str | None:
    """The answer a flip compares (module docstring), or None when the output has none."""
    score = result.scores.get(scorer)
    extracted = score.breakdown.get("extracted") if score is not None else None
    if extracted is not None:
        return str(extracted)
    structured = result.output.structured
    if structured is not None:
        if structured.answer:
            return str(structured.answer)
        if structured.differential:
            return str(structured.differential[0].diagnosis)
    text = result.output.text
    return " ".join(text.split()) if text else None


def outcomes_from_results(
    results: Iterable[CaseResult], option: CounterfactualOption, scorer: str
) -> list[Outcome]:
    """One ``Outcome`` per result that ``key_of`` can key (module docstring)."""
    out: list[Outcome] = []
    for result in results:
        key = key_of(result.case_id, result.metadata, option)
        if key is None:
            continue
        score = result.scores.get(scorer)
        value = math.nan if result.failed or score is None else float(score.value)
        answer = None if result.failed else answer_of(result, scorer)
        out.append(Outcome(result.case_id, key[0], key[1], value, answer))
    return out


def _natural(text: str) -> tuple[tuple[int, int, str], ...]:
    """A sort key that orders "2" before "11" (base-question ids are often numbers written as text)."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part
    )


def _flipped(outcomes: Sequence[Outcome], a: str, b: str) -> list[list[str]]:
    by = {(o.group, o.variant): o for o in outcomes}
    rows = []
    for (group, variant), x in sorted(by.items(), key=lambda item: (_natural(item[0][0]), item[0][1])):
        y = by.get((group, b))
        if variant != a or y is None or x.answer is None or y.answer is None:
            continue
        if not (math.isfinite(x.score) and math.isfinite(y.score)):
            continue
        if x.answer.strip().casefold() != y.answer.strip().casefold():
            rows.append([x.id, y.id])
    return rows


def analyse_task(option: CounterfactualOption, results: Iterable[CaseResult], scorer: str) -> dict[str, Any]:
    """The task's ``report.json["counterfactual"][task]`` from its results (``analyse_outcomes``)."""
    return analyse_outcomes(option, outcomes_from_results(results, option, scorer), scorer)


def analyse_outcomes(
    option: CounterfactualOption, outcomes: Sequence[Outcome], scorer: str
) -> dict[str, Any]:
    """``counterfactual_analysis`` plus the option, the scorer, ``n_unscored``, the flipped case-id pairs
    per pair (``flipped``, at most ``MAX_LISTED``; ``n_flipped`` counts all) and the gate metrics
    (``gate_metrics``, with ``gate_note`` when absent)."""
    reference = option.reference or "\x00none"
    analysis = counterfactual_analysis(
        outcomes,
        [list(p) for p in option.pairs],
        reference,
        confidence=option.confidence,
        seed=option.seed,
        n_resamples=option.n_resamples,
    )
    if option.reference is None:
        analysis["reference"] = None
    for key, row in analysis["pairs"].items():
        a, b = key.split("|", 1)
        flipped = _flipped(outcomes, a, b)
        row["n_flipped"] = len(flipped)
        row["flipped"] = flipped[:MAX_LISTED]
        row["note"] = _note(row)
    analysis["scorer"] = scorer
    analysis["option"] = option.model_dump(mode="json")
    analysis["n_cases"] = len(outcomes)
    analysis["n_unscored"] = sum(not math.isfinite(o.score) for o in outcomes)
    analysis["gate_metrics"], analysis["gate_note"] = gate_metrics(analysis)
    return analysis


def _note(row: Mapping[str, Any]) -> str | None:
    """What a reader must know before reading the row's numbers (n too small to say anything)."""
    n = row["n_pairs"]
    if n == 0:
        return "no pair has both variants scored: nothing to compare"
    discordant = (row.get("a_only") or 0) + (row.get("b_only") or 0)
    if row.get("binary") and discordant < 6:
        return f"{discordant} discordant pair(s): exact McNemar cannot reach p < 0.05 with fewer than 6"
    return None


def gate_metrics(analysis: Mapping[str, Any]) -> tuple[dict[str, float], str | None]:
    """``{FLIP_METRIC, DELTA_METRIC}`` over the pairs (module docstring), and why any is absent."""
    rows = list(analysis["pairs"].values())
    empty = [k for k, r in analysis["pairs"].items() if not r["n_pairs"]]
    if empty:
        return {}, f"no gate metric: pair(s) {', '.join(empty)} have no scored pairs"
    found: dict[str, float] = {DELTA_METRIC: max(abs(float(r["delta"])) for r in rows)}
    flips = [r["flip_rate"] for r in rows]
    if any(f is None for f in flips):
        return found, f"no {FLIP_METRIC}: some pair has no answers to compare"
    found[FLIP_METRIC] = max(float(f) for f in flips)
    return found, None
