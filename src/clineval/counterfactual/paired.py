"""Paired analysis of counterfactual variants: ``counterfactual_analysis(outcomes, pairs, reference)``.

Each ``Outcome`` is one scored case: its base question (``group``), its ``variant``, a ``score`` (1/0 for
right/wrong, or any number for DDx recall or rubric scores; NaN = not scored) and, when known, the ``answer``
(the option letter / label the system gave). Two variants a and b are **paired** on every group where both
have a finite score.

Per pair ``"a|b"`` (``pairs``), the keys named in issue 27:

* ``n_pairs``; ``both_right``, ``a_only`` (a right, b wrong), ``b_only``, ``both_wrong`` (binary scores);
* ``accuracy_a``, ``accuracy_b`` (mean score; for binary scores the proportion right) with
  ``accuracy_a_ci`` / ``accuracy_b_ci`` (Wilson; percentile bootstrap for non-binary scores);
* ``delta`` = accuracy_b - accuracy_a (positive: b scores higher) and ``delta_ci``: Newcombe's paired
  interval (1998, method 10) for binary scores, a seeded paired bootstrap of mean(b - a) otherwise;
* ``p_mcnemar_exact`` (binary: two-sided binomial test on the discordant pairs; ``None`` otherwise) and
  ``p_wilcoxon`` (non-binary: signed-rank, Pratt's zeros; ``None`` otherwise); ``test`` names the one used;
* ``p_holm``: Holm-adjusted across the pairs of this analysis (of the test used per pair);
* ``flip_rate``: share of pairs whose answers differ, right or wrong (answers compared after stripping and
  case-folding; pairs missing an answer are left out, ``n_flip_pairs`` says how many count; ``None`` when no
  answers were given).

Per variant (``variants`` -> name): ``n``, ``accuracy``, ``accuracy_ci``, and against ``reference`` (the
unmodified vignette): ``n_pairs_vs_reference``, ``flip_rate_vs_reference``, ``delta_vs_reference``
(accuracy change, variant minus reference on the paired groups) with ``delta_vs_reference_ci`` and the
unadjusted ``p_vs_reference``.

Formulas and sources: Newcombe's interval in ``clineval.counterfactual.stats``; Wilson and the bounded-mean
interval in ``clineval.metrics.intervals``; exact McNemar, Holm, the paired bootstrap and Wilcoxon in
``clineval.analysis.paired``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from clineval.analysis.paired import holm, mcnemar_exact_values, paired_bootstrap_ci, wilcoxon_p
from clineval.counterfactual.stats import newcombe_paired_ci
from clineval.metrics.intervals import mean_interval, wilson_interval


@dataclass(frozen=True)
class Outcome:
    """One scored case of a counterfactual task."""

    id: str
    group: str
    variant: str
    score: float
    answer: str | None = None


def split_id(case_id: str) -> tuple[str, str]:
    """``"17:black" -> ("17", "black")`` (split at the last colon)."""
    if ":" not in case_id:
        raise ValueError(f"case id {case_id!r} has no ':<variant>' suffix")
    group, variant = case_id.rsplit(":", 1)
    return group, variant


def outcomes_from_records(
    records: Iterable[Mapping[str, Any]],
    *,
    score_key: str = "correct",
    answer_key: str = "answer",
    group_key: str = "group",
    variant_key: str = "variant",
    id_key: str = "id",
) -> list[Outcome]:
    """Outcomes from dicts; ``group``/``variant`` fall back to the id's ``<base>:<variant>`` form; a bool
    score counts 1/0, ``None`` is NaN (not scored)."""
    out = []
    for record in records:
        case_id = str(record[id_key])
        group, variant = record.get(group_key), record.get(variant_key)
        if group is None or variant is None:
            group, variant = split_id(case_id)
        raw = record.get(score_key)
        score = math.nan if raw is None else float(raw)
        answer = record.get(answer_key)
        out.append(Outcome(case_id, str(group), str(variant), score, None if answer is None else str(answer)))
    return out


def _index(outcomes: Iterable[Outcome]) -> dict[str, dict[str, Outcome]]:
    table: dict[str, dict[str, Outcome]] = {}
    for o in outcomes:
        row = table.setdefault(o.variant, {})
        if o.group in row:
            raise ValueError(f"two outcomes for group {o.group!r}, variant {o.variant!r}")
        row[o.group] = o
    return table


def _paired(a: dict[str, Outcome], b: dict[str, Outcome]) -> list[tuple[Outcome, Outcome]]:
    common = sorted(set(a) & set(b), key=_group_key)
    return [(a[g], b[g]) for g in common if math.isfinite(a[g].score) and math.isfinite(b[g].score)]


def _group_key(group: str) -> tuple[int, int | str]:
    return (0, int(group)) if group.isdigit() else (1, group)


def _binary(values: Iterable[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def _norm_answer(answer: str) -> str:
    return answer.strip().casefold()


def _flips(pairs: Sequence[tuple[Outcome, Outcome]]) -> tuple[float | None, int]:
    known = [(x, y) for x, y in pairs if x.answer is not None and y.answer is not None]
    if not known:
        return None, 0
    flips = sum(_norm_answer(x.answer or "") != _norm_answer(y.answer or "") for x, y in known)
    return flips / len(known), len(known)


def _ci(lo_hi: tuple[float, float]) -> list[float]:
    return [float(lo_hi[0]), float(lo_hi[1])]


def compare_pair(
    pairs: Sequence[tuple[Outcome, Outcome]],
    *,
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = 10_000,
) -> dict[str, Any]:
    """The statistics of one pair of variants (keys in the module docstring, without ``p_holm``)."""
    n = len(pairs)
    flip_rate, n_flip = _flips(pairs)
    if n == 0:
        return {
            "n_pairs": 0,
            "both_right": None,
            "a_only": None,
            "b_only": None,
            "both_wrong": None,
            "accuracy_a": None,
            "accuracy_b": None,
            "accuracy_a_ci": None,
            "accuracy_b_ci": None,
            "delta": None,
            "delta_ci": None,
            "p_mcnemar_exact": None,
            "p_wilcoxon": None,
            "test": None,
            "flip_rate": flip_rate,
            "n_flip_pairs": n_flip,
            "binary": None,
        }
    a = [x.score for x, _ in pairs]
    b = [y.score for _, y in pairs]
    acc_a, acc_b = sum(a) / n, sum(b) / n
    if _binary(a + b):
        n11 = sum(1 for x, y in zip(a, b, strict=True) if x == 1 and y == 1)
        n10 = sum(1 for x, y in zip(a, b, strict=True) if x == 1 and y == 0)
        n01 = sum(1 for x, y in zip(a, b, strict=True) if x == 0 and y == 1)
        n00 = n - n11 - n10 - n01
        return {
            "n_pairs": n,
            "both_right": n11,
            "a_only": n10,
            "b_only": n01,
            "both_wrong": n00,
            "accuracy_a": acc_a,
            "accuracy_b": acc_b,
            "accuracy_a_ci": _ci(wilson_interval(n11 + n10, n, confidence)),
            "accuracy_b_ci": _ci(wilson_interval(n11 + n01, n, confidence)),
            "delta": acc_b - acc_a,
            "delta_ci": _ci(newcombe_paired_ci(n11, n10, n01, n00, confidence)),
            "p_mcnemar_exact": mcnemar_exact_values(a, b)[2],
            "p_wilcoxon": None,
            "test": "mcnemar_exact",
            "flip_rate": flip_rate,
            "n_flip_pairs": n_flip,
            "binary": True,
        }
    return {
        "n_pairs": n,
        "both_right": None,
        "a_only": sum(x > y for x, y in zip(a, b, strict=True)),
        "b_only": sum(y > x for x, y in zip(a, b, strict=True)),
        "both_wrong": None,
        "ties": sum(x == y for x, y in zip(a, b, strict=True)),
        "accuracy_a": acc_a,
        "accuracy_b": acc_b,
        "accuracy_a_ci": _ci(mean_interval(a, seed=seed, n_resamples=n_resamples, confidence=confidence)),
        "accuracy_b_ci": _ci(mean_interval(b, seed=seed, n_resamples=n_resamples, confidence=confidence)),
        "delta": acc_b - acc_a,
        "delta_ci": _ci(
            paired_bootstrap_ci(
                a,
                b,
                bounds=(min(0.0, *a, *b), max(1.0, *a, *b)),
                seed=seed,
                n_resamples=n_resamples,
                confidence=confidence,
            )
        ),
        "p_mcnemar_exact": None,
        "p_wilcoxon": wilcoxon_p(a, b, zero_method="pratt"),
        "test": "wilcoxon_pratt",
        "flip_rate": flip_rate,
        "n_flip_pairs": n_flip,
        "binary": False,
    }


def _variant_row(
    outcomes: dict[str, Outcome], confidence: float, seed: int, n_resamples: int
) -> dict[str, Any]:
    scores = [o.score for o in outcomes.values() if math.isfinite(o.score)]
    n = len(scores)
    if n == 0:
        return {"n": 0, "n_unscored": len(outcomes), "accuracy": None, "accuracy_ci": None}
    if _binary(scores):
        ci = wilson_interval(int(sum(scores)), n, confidence)
    else:
        ci = mean_interval(scores, seed=seed, n_resamples=n_resamples, confidence=confidence)
    return {"n": n, "n_unscored": len(outcomes) - n, "accuracy": sum(scores) / n, "accuracy_ci": _ci(ci)}


def counterfactual_analysis(
    outcomes: Iterable[Outcome],
    pairs: Sequence[Sequence[str]] | None = None,
    reference: str = "reference",
    *,
    confidence: float = 0.95,
    seed: int = 0,
    n_resamples: int = 10_000,
) -> dict[str, Any]:
    """``{"reference", "confidence", "pairs": {"a|b": ...}, "variants": {name: ...}}`` (module docstring).
    Without ``pairs``, the one pair of the two non-reference variants (an error if there are more)."""
    table = _index(outcomes)
    if pairs is None:
        others = sorted(v for v in table if v != reference)
        if len(others) != 2:
            raise ValueError(f"name the pairs: {len(others)} non-reference variants {others}")
        pairs = [others]

    def compare(pairs_: Sequence[tuple[Outcome, Outcome]]) -> dict[str, Any]:
        return compare_pair(pairs_, confidence=confidence, seed=seed, n_resamples=n_resamples)

    pair_rows: dict[str, dict[str, Any]] = {}
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"a pair has two variants, got {list(pair)}")
        a, b = pair
        pair_rows[f"{a}|{b}"] = compare(_paired(table.get(a, {}), table.get(b, {})))
    tested = [(k, r["p_mcnemar_exact"] if r["binary"] else r["p_wilcoxon"]) for k, r in pair_rows.items()]
    tested = [(k, p) for k, p in tested if p is not None]
    for (key, _), adjusted in zip(tested, holm([p for _, p in tested]), strict=True):
        pair_rows[key]["p_holm"] = adjusted
    for row in pair_rows.values():
        row.setdefault("p_holm", None)
    variants: dict[str, dict[str, Any]] = {}
    for name in sorted(table, key=lambda v: (v != reference, v)):
        row = _variant_row(table[name], confidence, seed, n_resamples)
        if name != reference and reference in table:
            vs = compare(_paired(table[reference], table[name]))
            row.update(
                n_pairs_vs_reference=vs["n_pairs"],
                flip_rate_vs_reference=vs["flip_rate"],
                delta_vs_reference=vs["delta"],
                delta_vs_reference_ci=vs["delta_ci"],
                p_vs_reference=vs["p_mcnemar_exact"] if vs["binary"] else vs["p_wilcoxon"],
            )
        else:
            row.update(
                n_pairs_vs_reference=None,
                flip_rate_vs_reference=None,
                delta_vs_reference=None,
                delta_vs_reference_ci=None,
                p_vs_reference=None,
            )
        variants[name] = row
    return {"reference": reference, "confidence": confidence, "pairs": pair_rows, "variants": variants}


def pairs_for(variants: Iterable[str], reference: str = "reference") -> list[list[str]]:
    """Every pair of the non-reference variants, in sorted order (a helper for exploratory use)."""
    return [list(p) for p in combinations(sorted(v for v in variants if v != reference), 2)]
