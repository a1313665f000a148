"""Several clinicians: the reference the judge is compared with, and their own agreement (the ceiling).

**Consensus reference** (one value per item, for the judge-vs-clinician figures of ``agreement``):

* grades: the **median** of the clinicians' grades. With an even number of clinicians it may fall between
  two grades (3 and 4 -> 3.5): it is kept as the half grade, and the quadratic-weighted κ places it halfway
  (``qualification.kappa.half_steps``; weights on the value scale). No tie-break is needed, so none biases the
  reference up or down: the low median (``clineval.judging.dimensions.majority_grade``'s tie rule,
  right for picking one of the judge's own samples) would make every split item a point lower and the judge
  look lenient by half the split share.
* met / not met: the **majority**; a tie (two clinicians split, 2 of 4...) has no reference and the item is
  left out of the judge-vs-clinician figures, counted in ``ties``. (Any tie-break is a one-sided bias; for
  met there is no halfway value a κ or an F1 can use.) Items where clinicians split are the hard ones, so
  many ties flatter the judge: ``ties`` is reported next to the figures and the ceiling below, which uses
  every pair, does not drop them.

**Ceiling** (Light 1971, "Measures of response agreement for qualitative data", Psychol. Bull. 76:365:
the mean of the pairwise Cohen's κ; the same κ as the judge's, quadratic-weighted for grades): for every two
clinicians with at least ``min_shared`` items in common, their κ on those items; ``clinicians`` is the mean
over those pairs. ``judge`` is the judge's figure **made comparable**: the mean over clinicians of κ(judge,
that clinician) on that clinician's items, i.e. the judge as one more rater. Comparing the judge-vs-consensus
κ with the clinician-vs-clinician κ would flatter the judge (a consensus is less noisy than any one
clinician), which is why the ceiling block has its own judge figure. A pair whose κ is undefined (one of
them used one category on the shared items) is listed, not averaged.

Why not Fleiss' κ (Fleiss 1971) for more than two clinicians: it is unweighted (wrong for ordinal grades),
needs the same number of ratings on every item (rare in adjudication data) and treats raters as
interchangeable, so it is not the same quantity as the judge's Cohen κ and cannot serve as its ceiling.
"""

from __future__ import annotations

import statistics
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Generic, Literal, TypeVar

from clineval.judging.qualification.errors import KappaUndefinedError
from clineval.judging.qualification.kappa import cohen_kappa, weighted_kappa

Kind = Literal["grade", "met"]
Item = TypeVar("Item", bound=Hashable)
MIN_SHARED = 10


def consensus_grade(grades: Sequence[int]) -> float:
    """The median grade (a half grade when an even number of grades splits)."""
    if not grades:
        raise ValueError("no grades to take the median of")
    return float(statistics.median(grades))


def consensus_met(votes: Sequence[bool]) -> bool | None:
    """The majority of met / not met; None on a tie."""
    yes = sum(1 for v in votes if v)
    no = len(votes) - yes
    return True if yes > no else False if no > yes else None


@dataclass(frozen=True)
class Consensus(Generic[Item]):
    reference: dict[Item, float | bool]
    ties: list[Item]
    reviewers_per_item: dict[Item, int]


def consensus(labels: Mapping[Item, Mapping[str, int | bool]], kind: Kind) -> Consensus[Item]:
    """The reference of each item from its clinicians' labels (``{item: {reviewer: value}}``)."""
    reference: dict[Item, float | bool] = {}
    ties: list[Item] = []
    for item, by_reviewer in labels.items():
        values = list(by_reviewer.values())
        if kind == "grade":
            reference[item] = consensus_grade([int(v) for v in values])
            continue
        met = consensus_met([bool(v) for v in values])
        if met is None:
            ties.append(item)
        else:
            reference[item] = met
    return Consensus(reference, ties, {item: len(v) for item, v in labels.items()})


@dataclass(frozen=True)
class PairKappa:
    a: str
    b: str
    n: int
    kappa: float | None  # None: undefined on the shared items (``why``)
    why: str = ""


@dataclass(frozen=True)
class Ceiling:
    clinicians: float | None  # mean pairwise κ between clinicians (None: no pair qualifies)
    clinician_pairs: list[PairKappa]
    judge: float | None  # mean over clinicians of κ(judge, clinician)
    judge_pairs: list[PairKappa]


def pair_kappa(
    a: str, b: str, ra: Mapping[Item, int | bool], rb: Mapping[Item, int | bool], kind: Kind, min_shared: int
) -> PairKappa | None:
    """κ of two raters on the items both rated; None when they share fewer than ``min_shared``."""
    shared = [i for i in ra if i in rb]
    if len(shared) < min_shared:
        return None
    xa, xb = [ra[i] for i in shared], [rb[i] for i in shared]
    try:
        if kind == "grade":
            value = weighted_kappa([float(x) for x in xa], [float(x) for x in xb]).kappa
        else:
            value = cohen_kappa([bool(x) for x in xa], [bool(x) for x in xb], (True, False)).kappa
    except KappaUndefinedError as err:
        return PairKappa(a, b, len(shared), None, str(err))
    return PairKappa(a, b, len(shared), value)


def _mean(pairs: Sequence[PairKappa]) -> float | None:
    values = [p.kappa for p in pairs if p.kappa is not None]
    return statistics.fmean(values) if values else None


def ceiling(
    labels: Mapping[Item, Mapping[str, int | bool]],
    judge: Mapping[Item, int | bool],
    kind: Kind,
    *,
    min_shared: int = MIN_SHARED,
) -> Ceiling:
    """The clinicians' mean pairwise κ and the judge's comparable figure (module docstring)."""
    by_reviewer: dict[str, dict[Item, int | bool]] = {}
    for item, votes in labels.items():
        for reviewer, value in votes.items():
            by_reviewer.setdefault(reviewer, {})[item] = value
    names = sorted(by_reviewer)
    clinician_pairs = [
        p
        for a, b in combinations(names, 2)
        if (p := pair_kappa(a, b, by_reviewer[a], by_reviewer[b], kind, min_shared)) is not None
    ]
    judge_pairs = [
        p for r in names if (p := pair_kappa("judge", r, judge, by_reviewer[r], kind, min_shared)) is not None
    ]
    if not clinician_pairs:
        return Ceiling(None, [], _mean(judge_pairs), judge_pairs)
    return Ceiling(_mean(clinician_pairs), clinician_pairs, _mean(judge_pairs), judge_pairs)
