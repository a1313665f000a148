"""Qualify a judge from its answers on labelled items: the entry point the CLI calls.

Input: the labels (``qualification.labels.LabelSet``) and the judge's K samples per labelled item, keyed by
``(kind, item)`` as the labels key them (``("grade", (case_id, dimension))``, ``("met", (case_id,
criterion))``, ``("same", (a, b))``), under the original order and, for order sensitivity, under the
permuted order (``order``). A sample is an int 1-5 for grades, a bool for met / same, None for a sample
without a valid answer.

Groups (each gets its own figures and verdict): grades by **dimension**; rubric criteria **pooled** into
one group ``rubric`` by default (HealthBench criteria are written per case, so a group per criterion holds
one item: pass ``group_of=by_criterion`` where criteria repeat across cases, e.g. HealthBench's 34
consensus criteria); equivalence questions in one group ``equivalence``.

Per group: the reference of each labelled item (``qualification.reviewers.consensus``), the judge's majority
(``stability.majority``) of its first ``vote_samples`` samples (default all K: pass the task scorer's own
``samples`` so agreement measures what a run reports, e.g. 1 for ``rubric``, while stability still uses all
K), agreement on the items that have both (``qualification.agreement``), stability over the
labelled items' samples, order sensitivity, the clinicians' ceiling where an item has two or more
reviewers, and the verdict (``qualification.verdict``). A group whose reference has no variance raises
:class:`~clineval.judging.qualification.errors.KappaUndefinedError` (the CLI's exit 2) naming the group.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from clineval.judging.qualification.agreement import binary_agreement, grade_agreement
from clineval.judging.qualification.intervals import N_RESAMPLES
from clineval.judging.qualification.labels import Kind, LabelSet
from clineval.judging.qualification.order import order_sensitivity
from clineval.judging.qualification.reviewers import Kind as RefKind
from clineval.judging.qualification.reviewers import ceiling, consensus
from clineval.judging.qualification.stability import Value, majority, stability
from clineval.judging.qualification.verdict import GroupFigures, Qualification, Thresholds, decide

Key = tuple[Kind, tuple[str, str]]
Samples = Mapping[Key, Sequence[Value | None]]
GroupOf = Callable[[Kind, tuple[str, str]], str]


def default_group(kind: Kind, item: tuple[str, str]) -> str:
    """Grades by dimension; rubric criteria pooled; equivalence questions pooled."""
    return item[1] if kind == "grade" else "rubric" if kind == "met" else "equivalence"


def by_criterion(kind: Kind, item: tuple[str, str]) -> str:
    """Grades by dimension, rubric criteria one group per criterion text."""
    return f"criterion: {item[1]}" if kind == "met" else default_group(kind, item)


def qualify(
    labels: LabelSet,
    judged: Samples,
    reordered: Samples | None = None,
    *,
    thresholds: Thresholds | None = None,
    group_of: GroupOf = default_group,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    vote_samples: int | None = None,
) -> Qualification:
    """The qualification of a judge (module docstring)."""
    if vote_samples is not None and vote_samples < 1:
        raise ValueError(f"vote_samples must be >= 1, got {vote_samples}")
    th = thresholds or Thresholds()
    verdicts = []
    for kind in labels.kinds:
        by_item = labels.of_kind(kind)
        groups: dict[str, list[tuple[str, str]]] = {}
        for item in by_item:
            groups.setdefault(group_of(kind, item), []).append(item)
        for group, items in groups.items():
            fig = group_figures(
                kind,
                group,
                {i: by_item[i] for i in items},
                judged,
                reordered,
                seed=seed,
                n_resamples=n_resamples,
                vote_samples=vote_samples,
            )
            verdicts.append(decide(fig, th))
    return Qualification(tuple(verdicts), th, labels.labels_hash, seed, vote_samples)


def group_figures(
    kind: Kind,
    group: str,
    labelled: Mapping[tuple[str, str], Mapping[str, int | bool]],
    judged: Samples,
    reordered: Samples | None,
    *,
    seed: int,
    n_resamples: int,
    vote_samples: int | None = None,
) -> GroupFigures:
    """Every figure of one group (module docstring)."""
    ref_kind: RefKind = "grade" if kind == "grade" else "met"
    cons = consensus(labelled, ref_kind)
    samples = {item: list(judged.get((kind, item), ())) for item in labelled}
    majorities = {item: majority(s[:vote_samples]) for item, s in samples.items()}
    compared = [i for i in labelled if i in cons.reference and majorities[i] is not None]
    what = f"{group} ({kind})"
    if kind == "grade":
        agreement: Any = grade_agreement(
            [int(majorities[i]) for i in compared],  # type: ignore[arg-type]
            [float(cons.reference[i]) for i in compared],
            what=what,
            seed=seed,
            n_resamples=n_resamples,
        )
    else:
        agreement = binary_agreement(
            [bool(majorities[i]) for i in compared],
            [bool(cons.reference[i]) for i in compared],
            what=what,
            seed=seed,
            n_resamples=n_resamples,
        )
    order = None
    if reordered is not None:
        shuffled = {item: majority(list(reordered.get((kind, item), ()))[:vote_samples]) for item in labelled}
        order = order_sensitivity(majorities, shuffled)
    several = any(len(v) > 1 for v in labelled.values())
    judge_values = {i: v for i, v in majorities.items() if v is not None}
    return GroupFigures(
        group=group,
        kind=kind,
        labelled=len(labelled),
        compared=len(compared),
        undecided=sum(1 for v in majorities.values() if v is None),
        reference_ties=len(cons.ties),
        reviewers=len({r for v in labelled.values() for r in v}),
        agreement=agreement,
        stability=stability(samples),
        order=order,
        ceiling=ceiling(labelled, judge_values, ref_kind) if several else None,
    )


def as_dict(result: Qualification) -> dict[str, Any]:
    """The qualification as JSON-ready data (what ``--out DIR`` writes and the store record keeps)."""
    return {
        "qualified": result.qualified,
        "labels_hash": result.labels_hash,
        "seed": result.seed,
        "vote_samples": result.vote_samples,
        "thresholds": dataclasses.asdict(result.thresholds),
        "reasons": result.reasons,
        "groups": [
            {
                "group": g.figures.group,
                "kind": g.figures.kind,
                "qualified": g.qualified,
                "reasons": list(g.reasons),
                "notes": list(g.notes),
                "figures": dataclasses.asdict(g.figures),
            }
            for g in result.groups
        ],
    }
