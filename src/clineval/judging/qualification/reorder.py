"""What the judge is shown in the permuted pass, and the labels a stored run's adjudications give.

**The permuted output** (order sensitivity, ``order``): the same content in another order, seeded per
case (``order.permuted(parts, seed, case_id)``, never the identity):

* a text answer: its blocks reordered. Blocks are the blank-line paragraphs; a single paragraph is split
  into its lines (a bullet list); a single line into its sentences. Blocks are re-joined with the separator
  they were split on.
* a structured answer (no text): each of its lists (``differential``, ``recommended_actions``,
  ``evidence_table``, ``contraindications_checked``, ``problems``, ``reasoning``) with two or more entries
  reordered; the values inside stay as they are.

An output with nothing to reorder (one block, no list of two) gives None: the case is left out of the order
figure (counted as skipped), never compared with itself, which would be asked from the response cache and
look perfectly order-blind. The equivalence judge's question is permuted by swapping its two names
(``order.swapped``).

**Adjudications as labels** (``--from-run``): a ``judge_dimension`` review (item key
``<scorer>:<dimension>``, corrected value an integer 1-5) is a grade label of ``(case_id, dimension)``; a
``ddx_pair`` review (item key ``<scorer>|<ground truth>|<system name>``, corrected value a boolean) is a same
label of ``(system name, ground truth)``, the order the equivalence judge is asked in. Adjudications are not
blind (the form shows the automated value) and the review queue favours disagreements: a qualification
from them says so in its record (``labels_source``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from clineval.core.output import SystemOutput
from clineval.judging.qualification.errors import QualificationInputError
from clineval.judging.qualification.labels import Label, LabelSet
from clineval.judging.qualification.order import permuted

LISTS = (
    "differential",
    "recommended_actions",
    "evidence_table",
    "contraindications_checked",
    "problems",
    "reasoning",
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")


def text_blocks(text: str) -> tuple[list[str], str]:
    """The blocks of a text answer and the separator that joins them (module docstring)."""
    stripped = text.strip()
    paragraphs = [p for p in re.split(r"\n\s*\n", stripped) if p.strip()]
    if len(paragraphs) >= 2:
        return paragraphs, "\n\n"
    lines = [line for line in stripped.splitlines() if line.strip()]
    if len(lines) >= 2:
        return lines, "\n"
    return [s for s in _SENTENCE.split(stripped) if s], " "


def permuted_output(output: SystemOutput, seed: int, case_id: str) -> SystemOutput | None:
    """``output`` with its parts in the case's seeded order, or None when there is nothing to reorder."""
    if output.failed:
        return None
    if output.text and output.text.strip():
        blocks, separator = text_blocks(output.text)
        if len(blocks) < 2:
            return None
        return output.model_copy(update={"text": separator.join(permuted(blocks, seed, case_id))})
    if output.structured is None:
        return None
    changes: dict[str, Any] = {}
    for name in LISTS:
        parts = getattr(output.structured, name)
        if isinstance(parts, list) and len(parts) >= 2:
            changes[name] = permuted(parts, seed, f"{case_id}:{name}")
    if not changes:
        return None
    return output.model_copy(update={"structured": output.structured.model_copy(update=changes)})


def adjudication_labels(rows: Iterable[tuple[str, str, str, Any, str]], *, source: str) -> LabelSet:
    """Labels from adjudications ``(case_id, item_kind, item_key, corrected value, reviewer)``."""
    labels: list[Label] = []
    for case_id, kind, key, value, reviewer in rows:
        if kind == "judge_dimension":
            dimension = key.split(":", 1)[-1]
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
                continue  # parse_value only stores 1-5; anything else is not a grade
            labels.append(Label("grade", (case_id, dimension), int(value), reviewer, 0))
        elif kind == "ddx_pair":
            parts = key.split("|")
            if len(parts) == 3 and isinstance(value, bool):
                labels.append(Label("same", (parts[2], parts[1]), value, reviewer, 0))
    if not labels:
        raise QualificationInputError(
            "no judge-dimension or DDx-pair adjudication in this run's task",
            path=source,
            hint="review items with `clineval view` first, or qualify from a labels file (--labels)",
        )
    return LabelSet(source, tuple(labels))
