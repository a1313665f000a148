"""Seeded sampling that is stable across runs.

Each case gets the key sha256(f"{seed}:{case_id}"); the ``limit`` cases with the smallest keys are kept, in
dataset order. The choice depends only on (seed, id), so re-runs, resumes and other machines pick the same
cases, and adding cases to a dataset never reshuffles which existing ones are chosen relative to each other.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from clineval.core import Case
from clineval.datasets.lazy_cases import JsonlCases, case_ids


def sample_cases(cases: Sequence[Case], limit: int | None, seed: int) -> Sequence[Case]:
    """The ``limit`` chosen cases in dataset order (all of them when ``limit`` is None); a dataset read from
    its file stays so (only the ids are looked at to choose)."""
    if limit is None or limit >= len(cases):
        return cases if isinstance(cases, JsonlCases) else list(cases)
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    ids = case_ids(cases)

    def key(index: int) -> bytes:
        return hashlib.sha256(f"{seed}:{ids[index]}".encode()).digest()

    chosen = sorted(sorted(range(len(ids)), key=key)[:limit])
    if isinstance(cases, JsonlCases):
        return cases.subset(chosen)
    return [cases[i] for i in chosen]
