"""The verdict: a judge (model + prompt + settings) is qualified when every dimension / criterion group meets
every threshold. Defaults and why:

* ``min_kappa = 0.6`` on the point estimate (quadratic-weighted κ for grades, Cohen's κ for met / not met).
  Landis & Koch (1977), "The measurement of observer agreement for categorical data", Biometrics 33:159,
  call 0.61-0.80 "substantial" agreement, the first band above "moderate" (0.41-0.60); 0.6 is its rounded
  lower edge. It is a convention, not a law: HealthBench's meta-evaluation (Arora et al. 2025; openai/
  simple-evals ``healthbench_meta_eval.py``) judges its grader not by a fixed κ but by its balanced (macro)
  F1 against physicians next to the physicians' own F1 against one another, which is why balanced F1 and the
  clinicians' ceiling are reported beside κ (``min_balanced_f1`` can gate on it; off by default).
* ``min_kappa_lower = 0.4``: the lower end of κ's 95% interval must reach "moderate" (Landis & Koch).
  Qualifying on the point estimate alone would let ten lucky labels qualify a judge. Requiring the lower
  bound itself to be >= 0.6 would make the threshold a statement about the labelling budget rather than
  the judge: with SE ≈ √(0.2 / n) (1-5 tables of the simulation, results/coverage.md), a judge at κ = 0.75
  needs some 35-50 items per dimension for its lower bound to reach 0.6, a judge at κ = 0.65 some 400. The
  pair "point >= 0.6 and lower >= 0.4" says: the best estimate is substantial, and the data rule out fair
  or worse agreement. No interval (fewer than ``MIN_N_INTERVAL`` compared items) -> not qualified.
* ``max_flip_rate = 0.1`` (the issue's ``--max-flip`` default): at most 1 item in 10 whose K samples are
  not all equal (``stability``). A judge whose grade changes on re-asking more often than that makes
  the majority of K samples carry the stability burden, and its figures drift between runs. This is the
  item-level rate; with K = 3 it corresponds to a per-sample ``judge_flip_rate`` (as runs log it) of about
  0.035 to 0.07, so the same 0.1 on the logged per-sample figure would be two to three times laxer.
* ``max_order_change = 0.1``: at most 1 item in 10 whose majority grade changes when the parts shown are
  permuted (``order``), the same allowance as for re-asking: a judge allowed to change 1 item in 10 by
  sampling is allowed no more by re-ordering; beyond that the order, not the content, decides grades.
* ``max_undecided = 0.1``: at most 1 labelled item in 10 without a judge majority (every sample failed, or
  the met votes tied). Agreement on the items the judge could answer says nothing of the others.
* ``max_abs_bias``: off by default (reported). Quadratic-weighted κ already penalises a systematic shift;
  set it (e.g. 0.5 grade) where a lenient judge would mislead more than a noisy one.
* ``min_samples = 2``: stability cannot be measured with one sample; the CLI's default K is 3, as
  ``judge_dimensions``' own ``samples``.

Figures that were not measured fail their check with the reason "not measured": a verdict never passes a
check it did not make. The clinicians' ceiling never changes the verdict; when it is below ``min_kappa`` a
note says the labels themselves may not support the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

from clineval.judging.qualification.agreement import BinaryAgreement, GradeAgreement
from clineval.judging.qualification.order import OrderSensitivity
from clineval.judging.qualification.reviewers import Ceiling
from clineval.judging.qualification.stability import Stability


@dataclass(frozen=True)
class Thresholds:
    min_kappa: float = 0.6
    min_kappa_lower: float = 0.4
    max_flip_rate: float = 0.1
    max_order_change: float = 0.1
    max_undecided: float = 0.1
    max_abs_bias: float | None = None
    min_balanced_f1: float | None = None
    min_samples: int = 2

    def __post_init__(self) -> None:
        for name in ("min_kappa", "min_kappa_lower"):
            if not -1.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [-1, 1], got {getattr(self, name)!r}")
        for name in ("max_flip_rate", "max_order_change", "max_undecided"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(self, name)!r}")
        if self.min_kappa_lower > self.min_kappa:
            raise ValueError("min_kappa_lower must not exceed min_kappa")
        if self.min_samples < 2:
            raise ValueError("min_samples must be >= 2: stability needs two samples")


@dataclass(frozen=True)
class GroupFigures:
    """Everything measured for one dimension / criterion group, before the verdict."""

    group: str
    kind: str  # grade | met | same
    labelled: int  # items with a label
    compared: int  # items with both a reference and a judge majority
    undecided: int  # labelled items without a judge majority
    reference_ties: int  # met items whose clinicians tied (no reference)
    reviewers: int
    agreement: GradeAgreement | BinaryAgreement
    stability: Stability
    order: OrderSensitivity | None
    ceiling: Ceiling | None


@dataclass(frozen=True)
class GroupVerdict:
    figures: GroupFigures
    qualified: bool
    reasons: tuple[str, ...]
    notes: tuple[str, ...]


def _f(x: float) -> str:
    return f"{x:.3f}"


def decide(fig: GroupFigures, th: Thresholds) -> GroupVerdict:
    """The group's verdict: every failed check as a reason (module docstring)."""
    reasons: list[str] = []
    notes: list[str] = []
    kappa = fig.agreement.kappa
    if kappa.kappa < th.min_kappa:
        reasons.append(f"kappa {_f(kappa.kappa)} < {th.min_kappa}")
    if kappa.interval is None:
        if kappa.kappa >= th.min_kappa or "too few" in kappa.note:
            reasons.append(f"no 95% interval: {kappa.note}")
        else:
            notes.append(kappa.note)
    elif kappa.interval[0] < th.min_kappa_lower:
        reasons.append(f"kappa lower 95% bound {_f(kappa.interval[0])} < {th.min_kappa_lower}")
    if fig.labelled and fig.undecided / fig.labelled > th.max_undecided:
        share = fig.undecided / fig.labelled
        reasons.append(
            f"no judge majority on {fig.undecided} of {fig.labelled} items ({_f(share)} > {th.max_undecided})"
        )
    st = fig.stability
    if st.flip_rate is None or st.samples < th.min_samples:
        reasons.append(f"stability not measured (K = {st.samples} samples; at least {th.min_samples} needed)")
    elif st.flip_rate > th.max_flip_rate:
        reasons.append(
            f"flip rate {_f(st.flip_rate)} > {th.max_flip_rate} ({st.flipped} of {st.items} items)"
        )
    order = fig.order
    if order is None or order.share is None:
        reasons.append("order sensitivity not measured")
    elif order.share > th.max_order_change:
        reasons.append(
            f"order sensitivity {_f(order.share)} > {th.max_order_change}"
            f" ({order.changed} of {order.items} items)"
        )
        if st.flip_rate is not None and st.flip_rate > th.max_flip_rate:
            notes.append("the judge is also unstable: part of the order change may be sampling noise")
    bias = fig.agreement.bias
    if th.max_abs_bias is not None and abs(bias.value) > th.max_abs_bias:
        reasons.append(f"bias {bias.value:+.3f} exceeds ±{th.max_abs_bias}")
    if th.min_balanced_f1 is not None and isinstance(fig.agreement, BinaryAgreement):
        f1 = fig.agreement.balanced_f1.value
        if f1 < th.min_balanced_f1:
            reasons.append(f"balanced F1 {_f(f1)} < {th.min_balanced_f1}")
    if fig.reference_ties:
        notes.append(f"{fig.reference_ties} item(s) left out: the clinicians tied")
    ceiling = fig.ceiling
    if ceiling is not None and ceiling.clinicians is not None and ceiling.clinicians < th.min_kappa:
        notes.append(
            f"the clinicians agree at kappa {_f(ceiling.clinicians)} among themselves: the labels may not "
            f"support a threshold of {th.min_kappa}"
        )
    return GroupVerdict(fig, not reasons, tuple(reasons), tuple(notes))


@dataclass(frozen=True)
class Qualification:
    """The whole verdict: qualified when there is at least one group and every group qualified."""

    groups: tuple[GroupVerdict, ...]
    thresholds: Thresholds
    labels_hash: str
    seed: int = 0
    vote_samples: int | None = None  # None: the majority of all K samples

    @property
    def qualified(self) -> bool:
        return bool(self.groups) and all(g.qualified for g in self.groups)

    @property
    def reasons(self) -> list[str]:
        return [f"{g.figures.group}: {r}" for g in self.groups for r in g.reasons]

    @property
    def exit_code(self) -> int:
        """0 qualified, 1 not qualified (bad input never gets here: it raises, exit 2)."""
        return 0 if self.qualified else 1
