"""Which qualification applies to each judge of a run, recorded in its provenance when the run is planned.

For every task with a judge and every prompt whose grades the run reports (``identity.reported_prompts``),
the judge key (model + prompt + prompt hash + settings, ``clineval.judging.qualification.identity``) is
looked up in ``judge_qualifications``; the newest record with that key applies. The entry, under
``provenance["judge_qualification"][task_id][prompt]``, has a ``status``:

* ``qualified``: the newest record passed, and is at most ``STALE_AFTER_DAYS`` old;
* ``stale``: it passed more than ``STALE_AFTER_DAYS`` days before the run. A hosted model behind a fixed
  name changes without notice, so agreement measured half a year ago is re-measured, not assumed;
* ``not qualified``: the newest record failed (its reasons kept);
* ``unqualified``: no record has this key (the judge, its prompt or a setting changed since, or it was
  never qualified).

Reports turn anything but ``qualified`` into a banner (``report.sections.judge_qualification``). It is never
a gate: tier 4 does not gate and nothing reads this entry to decide a release.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from clineval.core import SuiteSpec
from clineval.store import ResultStore

if TYPE_CHECKING:  # imported by a run with a judge only: the qualification package is ~30 ms of start-up
    from clineval.judging.qualification.identity import JudgeIdentity
    from clineval.store.qualifications import QualificationRecord

KEY = "judge_qualification"
STALE_AFTER_DAYS = 180


def _groups(record: QualificationRecord) -> dict[str, Any]:
    found = {}
    for group in record.figures:
        kappa = ((group.get("figures") or {}).get("agreement") or {}).get("kappa") or {}
        found[str(group.get("group"))] = {
            "kappa": kappa.get("kappa"),
            "interval": kappa.get("interval"),
            "qualified": group.get("qualified"),
        }
    return found


def entry(identity: JudgeIdentity, record: QualificationRecord | None, now: datetime) -> dict[str, Any]:
    """The provenance entry of one judge prompt (module docstring)."""
    judge = identity.describe()
    if record is None:
        return {"status": "unqualified", "judge": judge, "judge_key": identity.judge_key}
    age = now - record.created_at
    status = (
        "not qualified"
        if not record.qualified
        else "stale"
        if age > timedelta(days=STALE_AFTER_DAYS)
        else "qualified"
    )
    return {
        "status": status,
        "judge": judge,
        "judge_key": identity.judge_key,
        "qualification_id": record.qualification_id,
        "date": record.created_at.date().isoformat(),
        "age_days": age.days,
        "labelled": record.n_labelled,
        "reviewers": record.reviewers,
        "labels_source": record.labels_source,
        "groups": _groups(record),
        "reasons": list(record.reasons),
    }


def judge_qualification(store: ResultStore, spec: SuiteSpec, now: datetime) -> dict[str, Any]:
    """``{"judge_qualification": {task: {prompt: entry}}}``, or ``{}`` when no task has a judge."""
    if all(t.judge is None for t in spec.tasks):
        return {}
    from clineval.judging.qualification.identity import judge_identities, reported_prompts
    from clineval.store.qualifications import latest_for

    identities = {
        t.id: {p: ids[p] for p in reported_prompts(t.judge) if p in (ids := judge_identities(t.judge))}
        for t in spec.tasks
        if t.judge is not None
    }
    if not identities:
        return {}
    records = latest_for(store, [i.judge_key for per in identities.values() for i in per.values()])
    return {
        KEY: {
            task: {p: entry(i, records.get(i.judge_key), now) for p, i in per.items()}
            for task, per in identities.items()
        }
    }
