"""``evidence_types_cited`` (tier 2): are the evidence source types the golden set expects cited?

Four-tier evaluation design, golden set: "Each case includes ... Expected evidence source types that
should be cited". Per case, with E = ``reference.data["evidence_source_types"]`` (guideline, note, lab,
imaging, drug)::

    coverage = |E ∩ T| / |E|

where T is the set of ``source_type`` values of the ``evidence_table`` rows that are **cited** (some
``recommended_actions[].evidence_refs`` names the row's ``id``) and **grounded**:

* ``guideline``: the row has a ``doc_id`` or a text with content;
* ``lab``: its text (or ``doc_id``/``chunk_id``) names one of the patient's labs and gives that lab's value
  ("BNP 900 pg/mL");
* ``imaging`` / ``note``: its text quotes the patient's imaging (``cxr``, ``measurements``) / ``note``: at
  least 3/4 of its content words (framing words such as "CXR", "shows", "note" aside) are in that record,
  and at least one (a note: two) is;
* ``drug``: its text shares a content word of four letters or more with the patient's ``medications`` or
  with an action that cites it ("Apixaban SmPC" cited by "Start apixaban").

So a row in the table that no recommendation cites adds nothing, and a degenerate system that fills the
table with one row of each type (constant text) gets no more than one that cites a generic guideline:
the patient-data types need the patient's data. ``value`` = coverage; metric ``evidence_type_coverage``
= mean coverage with a 95% bootstrap interval. It says which kinds of evidence were cited, not whether they
support the action (tier 4 judges that), so it is **tracked**, not gating: 74 of the 102 golden cases
expect all five types, and a system that copies the patient record into cited rows of every type reaches
1.0 whatever it recommends (``clineval audit``, docs/runs/audit.md); tier 2 gates on
   ``guideline_citation_rate``
(a cited guideline relevant to its action). Breakdown: ``expected``, ``covered``,
``missing``, ``cited_types``, ``ungrounded`` rows, ``uncited_types`` (in the table, cited by no action).
Labels: ``covered`` (1.0), ``partial``, ``none``, ``no_citations`` (no action cites a row of the table),
``failed``, ``no_reference``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from clineval.cds.golden.labels import failed_score, label_of, no_reference, recommendation
from clineval.cds.lab_samples import names_lab_value
from clineval.core import EvidenceRow, Metric, Score, ScoringContext
from clineval.metrics.basic import Accuracy
from clineval.text.matching import prepare

KEY = "evidence_source_types"
FRAMING = (
    "cxr x ray xray chest radiograph film ct scan imaging report shows showed finding findings note notes "
)
FRAMING += "history hpi clinical documented recorded per patient states stated record"
_WORD = re.compile(r"[a-z][a-z-]{3,}")


class EvidenceOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    n_resamples: int = Field(default=2000, ge=1)


def _row_text(row: EvidenceRow) -> str:
    return " ".join(p for p in (row.text, row.doc_id, row.chunk_id) if p)


def _content(text: str) -> frozenset[str]:
    prepared = prepare(text)
    return prepared.content[0] if prepared.content else frozenset()


def quotes(row_text: str, source: str, minimum: int) -> bool:
    """At least 3/4 of the row's content stems (framing words aside) are in ``source``, and ``minimum``."""
    words = _content(row_text) - prepare(FRAMING).stems
    found = words & prepare(source).stems
    return len(found) >= minimum and len(found) >= 0.75 * len(words)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def grounded(row: EvidenceRow, patient: Mapping[str, Any], citing: Sequence[str]) -> bool:
    """Is a cited row of its type grounded in the case (module docstring)?"""
    text = _row_text(row)
    if row.source_type == "guideline":
        return bool(_content(text))
    if row.source_type == "lab":
        return names_lab_value(text, patient)
    if row.source_type == "imaging":
        record = [
            *map(str, patient.get("cxr") or []),
            *map(str, (patient.get("measurements") or {}).values()),
        ]
        record += [str(k).replace("_", " ") for k in (patient.get("measurements") or {})]
        return quotes(text, " ".join(record), 1)
    if row.source_type == "note":
        return quotes(text, str(patient.get("note") or ""), 2)
    drugs = _words(" ".join(map(str, patient.get("medications") or []))) | _words(" ".join(citing))
    return bool(_words(text) & drugs)


def coverage(
    expected: Sequence[str],
    rows: Sequence[EvidenceRow],
    actions: Mapping[str, list[str]],
    patient: Mapping[str, Any],
) -> dict[str, Any]:
    """Coverage and its parts. ``actions``: row id -> the texts of the actions citing it."""
    cited = [r for r in rows if r.id.strip() in actions]
    good = [r for r in cited if grounded(r, patient, actions[r.id.strip()])]
    types = {r.source_type for r in good}
    covered = [t for t in expected if t in types]
    return {
        "expected": list(expected),
        "covered": covered,
        "missing": [t for t in expected if t not in types],
        "cited_types": sorted({r.source_type for r in cited}),
        "ungrounded": [{"id": r.id, "source_type": r.source_type} for r in cited if r not in good],
        "uncited_types": sorted({r.source_type for r in rows} - {r.source_type for r in cited}),
        "coverage": len(covered) / len(expected),
    }


class EvidenceTypesScorer:
    name = "evidence_types_cited"
    tier = 2

    def __init__(self, options: EvidenceOptions | None = None) -> None:
        self.options = options or EvidenceOptions()
        self.metrics: Sequence[Metric] = (
            Accuracy(
                name="evidence_type_coverage",
                ci="bootstrap",
                seed=self.options.seed,
                n_resamples=self.options.n_resamples,
            ),
        )

    def __call__(self, ctx: ScoringContext) -> Score:
        raw = label_of(ctx, KEY)
        expected = list(dict.fromkeys(str(t) for t in raw)) if isinstance(raw, list) else []
        if not expected:
            return no_reference(KEY)
        if ctx.output.failed:
            return failed_score(ctx, {"expected": expected, "covered": [], "missing": expected})
        rec = recommendation(ctx)
        actions: dict[str, list[str]] = {}
        for action in (rec.recommended_actions or []) if rec else []:
            for ref in action.evidence_refs:
                actions.setdefault(ref.strip(), []).append(action.action)
        rows = (rec.evidence_table or []) if rec else []
        patient = ctx.case.input.data.get("patient")
        found = coverage(expected, rows, actions, patient if isinstance(patient, Mapping) else {})
        if not any(r.id.strip() in actions for r in rows):
            why = "no recommended action cites a row of the evidence table"
            return Score(value=0.0, label="no_citations", explanation=why, breakdown=found)
        value = found["coverage"]
        label = "covered" if value == 1.0 else "partial" if value > 0 else "none"
        missing = f"not cited (grounded): {', '.join(found['missing'])}" if found["missing"] else None
        return Score(value=value, label=label, explanation=missing, breakdown=found)


def make_evidence_types_scorer(options: Mapping[str, Any]) -> EvidenceTypesScorer:
    return EvidenceTypesScorer(EvidenceOptions.model_validate(dict(options)))
