"""The per-case DDx scores from a classification: recall, precision, clinical reasoning quality, diagnostic
safety, system safety coverage, top-k, reciprocal rank and the broader-name partial credit (formulas in
``ddx_scores``)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from clineval.ddx.classes import DdxClassification


def _ratio(num: float, den: float) -> float:
    return num / den if den else math.nan


def ddx_scores(
    classification: DdxClassification,
    caa_weight: float = 0.5,
    *,
    ks: Sequence[int] = (1, 3, 5, 10),
    true_diagnosis: str = "any",
) -> dict[str, float | bool | None]:
    """The scores of one case (NaN where a denominator is 0; top-k None without ground truth).

    With w = ``caa_weight``, GT = the number of ground-truth diagnoses and B = BROADER (system names more
    general than a ground truth: never a hit, a non-hit in every denominator of the system's diagnoses):

    - ``recall`` (traditional recall) = TP / GT  (LDDx's ``tp_rate``, not its ``traditional_recall``
      TP / (TP + FN));
    - ``precision`` = TP / (TP + FP + CAA + B): the share of the system's distinct, non-excluded diagnoses
      that are ground truth (LDDx's ``traditional_precision`` = TP / (TP + FP), the same when CAA = B = 0);
    - ``clinical_reasoning_quality`` = (TP + w·CAA + AE) / considered, considered = GT + FP + CAA + B (every
      ground truth once, plus each system diagnosis outside it; LDDx's stored values fit this);
    - ``diagnostic_safety`` = (TP + max(0, w·CAA)) / (TP + CAA + FP + B);
    - ``system_safety_coverage`` = (TP + TM-SM) / GT;
    - ``top{k}`` = a ground truth is matched among the first k ranked (``proposed``) items
      (``true_diagnosis="first"``: the first ground truth, e.g. the DDXPlus pathology); a BROADER item is
      no match;
    - ``reciprocal_rank`` = 1 / rank of that first hit (0 if none);
    - ``recall_broader`` = (TP + GT_B) / GT, GT_B = the ground truths not found that a BROADER item names:
      the partial credit of broader names, reported apart, never in recall, top-k or reciprocal rank.
    """
    if true_diagnosis not in ("any", "first"):
        raise ValueError(f"true_diagnosis must be 'any' or 'first', got {true_diagnosis!r}")
    c = classification.counts
    tp, fp, caa, ae, tmsm, broad = c["TP"], c["FP"], c["CAA"], c["AE"], c["TM-SM"], c["BROADER"]
    gt = classification.n_ground_truth
    hits = classification.hit_ranks if true_diagnosis == "any" else classification.first_gt_ranks
    first = hits[0] if hits else None
    out: dict[str, float | bool | None] = {
        "recall": _ratio(tp, gt),
        "precision": _ratio(tp, tp + fp + caa + broad),
        "clinical_reasoning_quality": _ratio(tp + caa_weight * caa + ae, classification.considered),
        "diagnostic_safety": _ratio(tp + max(0.0, caa_weight * caa), tp + caa + fp + broad),
        "system_safety_coverage": _ratio(tp + tmsm, gt),
        "reciprocal_rank": (1.0 / first if first else 0.0) if gt else math.nan,
        "recall_broader": _ratio(tp + classification.broader_ground_truth, gt),
    }
    for k in ks:
        out[f"top{k}"] = (first is not None and first <= k) if gt else None
    return out
