"""One case's differential classified into the DDx outcome classes (``clineval.ddx.classes``).

``classify_differential``, with ``match`` an equivalence function (default
``clineval.text.names.equivalence.best_match``):

0. only the first ``max_differential`` (K, default 10) distinct diagnoses of the list are scored, whatever
   their status (a name repeated, same normalised text, is no new diagnosis); the items past them are not
   classified at all and are counted in ``beyond_k`` (issue 22: listing every diagnosis of a sample raised
   recall to 1.0). K None scores the whole list;
1. the system's items are taken in their order; each is matched against the ground-truth diagnoses not yet
   matched (greedy, first come first served), leaving out a ground truth that the item is *more general*
   than (a ``hierarchy`` match whose ``broader`` side is the system name). ``proposed`` or ``alternative``
   + match -> TP; ``excluded`` + match -> AE when the exclusion is supported
   (``clineval.ddx.support.SupportPolicy.exclusion``: a turn rules it out, or with
   ``transcript_or_reasoning`` its reasoning cites a finding of the case; ``label``: the status alone),
   else the ground truth is decided in step 3 and, unless ruled out or treated there, is an FN "excluded
   without support". A match of the ``hierarchy`` tier (the system name narrower) counts only with
   ``hierarchy_counts_as_tp`` (default True; the tier is reported either way). An item equivalent only to an
   already matched ground truth is a ``DUP`` (not counted);
2. an item related to a ground truth only as its broader name ("Diabetes mellitus" for "type 2 diabetes")
   -> ``BROADER`` (never a hit; ``excluded`` items -> ``EXCLUDED``); other unmatched ``proposed`` items
   -> FP; unmatched ``alternative`` items -> CAA when supported (``clineval.ddx.support``:
   named with a finding of the case in a can't-miss turn), else FP with the reason; unmatched
   ``excluded`` items -> ``EXCLUDED`` (not counted); a name already classified so (same normalised text)
   -> ``DUP``;
3. each ground truth still unmatched: AE if the transcript rules it out with support (``clineval.scoring.
   assertion``; put forward before citing a finding of the case, or ruled out citing one: ``ddx_support``;
   evidence: the latest supported sentence, its round and phase; without support: no AE, "ruled out without
   support" if nothing else decides it); else
   TM-SM if the triage / symptom-management turns (``tm_sm_phases``) give an action that treats it or its
   key findings (``clineval.ddx.treatment``; a mention of findings is no treatment; agents of more
   than ``max_treatment_rows`` rows in one case are a shotgun, and none counts); else FN.

Ranks: the ``proposed`` items, in order, are the ranked list (1-based). A hit is a proposed item
equivalent (as counted above) to a ground truth, duplicates included; a ``BROADER`` item is no hit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from clineval.core.output import DifferentialItem, TranscriptTurn
from clineval.ddx.classes import (
    LLM_JUDGE_TIER,
    DdxClass,
    DdxClassification,
    DdxDecision,
    EquivalenceLike,
    Evidence,
    MatchFn,
)
from clineval.ddx.support import DEFAULT_CANT_MISS_PHASES, CaaSupport, SupportPolicy
from clineval.ddx.treatment import (
    SHOTGUN_ROWS,
    GivenAction,
    given_actions,
    present_findings,
    shotgun,
    tm_sm_evidence,
)
from clineval.text.assertion import Mention, Passage, TargetMentions, target_mentions
from clineval.text.matching import normalize_for_match
from clineval.text.names.equivalence import best_match, synonyms_of

DEFAULT_TM_SM_PHASES = ("symptom_management", "triage")
DEFAULT_MAX_DIFFERENTIAL = 10
NO_SUPPORT = "no can't-miss turn names it with a finding of the case"
NO_EXCLUSION_SUPPORT = {
    "transcript": "no turn rules it out after putting it forward with a finding of the case, or citing one",
    "transcript_or_reasoning": (
        "no turn rules it out after putting it forward with a finding of the case, or citing one, and its "
        "reasoning cites no finding of the case"
    ),
    "label": "",
}
BARE_EXCLUSION = (
    "ruled out without support: the transcript rules it out ({n} mention(s); latest shown), but no earlier "
    "sentence puts it forward citing a finding of the case and no ruling-out sentence cites one"
)


def _findings_of(gt: str, findings: Mapping[str, Sequence[str]]) -> Sequence[str]:
    if gt in findings:
        return findings[gt]
    wanted = normalize_for_match(gt)
    return next((f for k, f in findings.items() if normalize_for_match(k) == wanted), ())


def _broader(eq: EquivalenceLike | None) -> bool:
    """Is the first name (the system's) the more general one of a hierarchy match?"""
    return eq is not None and eq.tier == "hierarchy" and getattr(eq, "broader", None) == "a"


Found = tuple[int | None, EquivalenceLike | None, tuple[int, EquivalenceLike] | None]


def specific_match(match: MatchFn, name: str, candidates: Sequence[str]) -> Found:
    """(index of the best candidate ``name`` is not broader than, its equivalence, and the first candidate
    ``name`` is broader than with that equivalence): ``match`` again without each broader candidate."""
    remaining = list(range(len(candidates)))
    broader: tuple[int, EquivalenceLike] | None = None
    eq: EquivalenceLike | None = None
    while remaining:
        found, eq = match(name, [candidates[i] for i in remaining])
        if found is None:
            return None, eq, broader
        if not _broader(eq):
            return remaining[found], eq, broader
        broader = broader or (remaining[found], eq)
        remaining.pop(found)
    return None, eq, broader


def _reserved(gts: Sequence[str], differential: Sequence[DifferentialItem]) -> dict[int, int]:
    """Ground truth index -> the first differential item that names it at a same-disease tier (exact,
    synonym, overlap), by the deterministic matcher."""
    reserved: dict[int, int] = {}
    for j, item in enumerate(differential):
        for gi, gt in enumerate(gts):
            if gi not in reserved:
                _, eq = best_match(item.diagnosis, [gt], allow_hierarchy=False)
                if eq.equivalent:
                    reserved[gi] = j
    return reserved


def first_k(differential: Sequence[DifferentialItem], k: int | None) -> tuple[list[DifferentialItem], int]:
    """The items of the first ``k`` distinct diagnoses (normalised names; a repeat is no new diagnosis),
    and the number of items left out past them; ``k`` None: every item."""
    if k is None:
        return list(differential), 0
    seen: set[str] = set()
    kept: list[DifferentialItem] = []
    for item in differential:
        key = normalize_for_match(item.diagnosis)
        if key not in seen:
            if len(seen) >= k:
                break
            seen.add(key)
        kept.append(item)
    return kept, len(differential) - len(kept)


def classify_differential(
    ground_truth: Sequence[str],
    differential: Sequence[DifferentialItem],
    transcript: Sequence[TranscriptTurn] | None = None,
    *,
    match: MatchFn = best_match,
    findings: Mapping[str, Sequence[str]] | None = None,
    hierarchy_counts_as_tp: bool = True,
    tm_sm_phases: Sequence[str] = DEFAULT_TM_SM_PHASES,
    case_text: str | None = None,
    caa_support: CaaSupport = "transcript",
    cant_miss_phases: Sequence[str] = DEFAULT_CANT_MISS_PHASES,
    max_differential: int | None = DEFAULT_MAX_DIFFERENTIAL,
    max_treatment_rows: int | None = SHOTGUN_ROWS,
) -> DdxClassification:
    """Per-diagnosis class decisions for one case (see the module docstring for the rules). ``case_text``:
    the vignette, read for the findings a CAA must cite and a TM-SM action must be indicated by."""
    differential, beyond_k = first_k(differential, max_differential)
    gts = [g for g in ground_truth if g.strip()]
    open_gt = list(range(len(gts)))  # indices of ground truths not yet matched
    decided: dict[int, DdxDecision] = {}
    system_side: list[DdxDecision] = []
    hit_ranks: list[int] = []
    first_ranks: list[int] = []
    broader_of: dict[int, str] = {}  # ground truth index -> the first broader system name
    seen_other: set[str] = set()
    rank = 0
    reserved = _reserved(gts, differential)
    turns = list(transcript or ())
    names = [item.diagnosis for item in differential]
    support = SupportPolicy(caa_support, turns, case_text, findings or {}, cant_miss_phases, names)
    unsupported: dict[int, DdxDecision] = {}  # ground truth index -> its exclusion without support
    for j, item in enumerate(differential):
        if item.status == "proposed":
            rank += 1
        item_rank = rank if item.status == "proposed" else None
        name, status = item.diagnosis, item.status
        # a ground truth a later item names exactly (or as a synonym) is kept for it: "Hemochromatosis-Related
        # Osteoarthritis" must not take "osteoarthritis" from a later "Osteoarthritis"
        pool = [i for i in open_gt if reserved.get(i, j) <= j]
        found, eq, broad = specific_match(match, name, [gts[i] for i in pool]) if pool else (None, None, None)
        idx = open_gt.index(pool[found]) if found is not None else None
        if eq is not None and eq.tier == "hierarchy" and not hierarchy_counts_as_tp:
            idx = None
        tier = eq.tier if eq is not None and idx is not None else None
        conf = eq.confidence if eq is not None and idx is not None and tier != LLM_JUDGE_TIER else None
        why = eq.explanation if eq is not None else ""
        ev = (Evidence(f"{name}: {item.reasoning}" if item.reasoning else name, "differential"),)
        if idx is not None:
            gi = open_gt.pop(idx)
            if status == "excluded":
                backing = support.exclusion(item)
                if backing is None:
                    unsupported[gi] = DdxDecision("FN", gts[gi], name, None, tier, conf, why, ev, status)
                else:
                    decided[gi] = DdxDecision("AE", gts[gi], name, None, tier, conf, why, (backing,), status)
            else:
                decided[gi] = DdxDecision("TP", gts[gi], name, item_rank, tier, conf, why, ev, status)
                if item_rank is not None:
                    hit_ranks.append(item_rank)
                    if gi == 0:
                        first_ranks.append(item_rank)
            continue
        dup_idx, dup_eq, dup_broad = specific_match(match, name, gts)
        if (
            dup_idx is not None
            and dup_eq is not None
            and (dup_eq.tier != "hierarchy" or hierarchy_counts_as_tp)
        ):
            dup_conf = None if dup_eq.tier == LLM_JUDGE_TIER else dup_eq.confidence
            system_side.append(
                DdxDecision(
                    "DUP",
                    gts[dup_idx],
                    name,
                    item_rank,
                    dup_eq.tier,
                    dup_conf,
                    dup_eq.explanation,
                    ev,
                    status,
                )
            )
            if item_rank is not None and status != "excluded":
                hit_ranks.append(item_rank)
                if dup_idx == 0:
                    first_ranks.append(item_rank)
            continue
        key = normalize_for_match(name)
        if key in seen_other:  # the same non-ground-truth name again (e.g. proposed, then alternative)
            system_side.append(DdxDecision("DUP", None, name, item_rank, explanation="repeated", evidence=ev))
            continue
        seen_other.add(key)
        wider = (pool[broad[0]], broad[1]) if broad is not None else dup_broad
        if wider is not None and status != "excluded":
            gi, weq = wider
            broader_of.setdefault(gi, name)
            text = f"more general than the ground truth, no hit: {weq.explanation}"
            system_side.append(
                DdxDecision(
                    "BROADER", gts[gi], name, item_rank, "hierarchy", weq.confidence, text, ev, status
                )
            )
            continue
        if status == "alternative":
            backing = support.alternative(item)
            if backing is not None:
                system_side.append(DdxDecision("CAA", None, name, None, None, None, why, (backing,), status))
            else:
                text = f"alternative without can't-miss support: {NO_SUPPORT}"
                system_side.append(DdxDecision("FP", None, name, None, None, None, text, ev, status))
            continue
        cls: DdxClass = "FP" if status == "proposed" else "EXCLUDED"
        system_side.append(DdxDecision(cls, None, name, item_rank, None, None, why, ev, status))
    side = _GroundTruthSide(gts, turns, support, findings or {}, tm_sm_phases, case_text, max_treatment_rows)
    why_excluded = NO_EXCLUSION_SUPPORT[caa_support]
    side.open_gt = sorted([*open_gt, *unsupported])
    for gi in side.open_gt:
        decided[gi] = side.decide(gi, broader_of.get(gi), unsupported.get(gi), why_excluded)
    decisions = (*(decided[i] for i in sorted(decided)), *system_side)
    broader_gt = sum(1 for gi in broader_of if decided[gi].cls != "TP")
    return DdxClassification(
        decisions,
        len(gts),
        tuple(sorted(hit_ranks)),
        tuple(sorted(first_ranks)),
        broader_gt,
        beyond_k,
        side.shotgun_rows,
    )


class _GroundTruthSide:
    """AE (ruled out in the transcript), TM-SM (treated) or FN for each ground truth the list left open
    (step 3); the ruled-out mentions are read once, the given actions when first needed."""

    def __init__(
        self,
        gts: Sequence[str],
        turns: Sequence[TranscriptTurn],
        support: SupportPolicy,
        findings: Mapping[str, Sequence[str]],
        tm_sm_phases: Sequence[str],
        case_text: str | None,
        max_rows: int | None,
    ) -> None:
        self.gts, self.turns, self.findings, self.case_text, self.max_rows = (
            gts,
            turns,
            findings,
            case_text,
            max_rows,
        )
        self.support = support
        self.open_gt: list[int] = []  # the ground truths to decide (read for the ruled-out mentions)
        self.phase_turns = [t for t in turns if t.phase in tm_sm_phases]
        self._mentions: TargetMentions | None = None
        self._actions: list[GivenAction] | None = None
        self._indicated: frozenset[int] | None = None
        self.shotgun_rows = 0

    def _ruled_out(self, gt: str) -> tuple[list[Mention], list[Mention]]:
        """The ruled-out mentions of ``gt`` and the sentences putting it forward."""
        if self._mentions is None:
            passages = [Passage(t.text, t.round, t.phase, t.agent) for t in self.turns]
            targets = [self.gts[i] for i in self.open_gt] if passages else []
            self._mentions = target_mentions(targets, passages, names_for=synonyms_of)
        return self._mentions.ruled_out.get(gt) or [], self._mentions.put_forward.get(gt) or []

    def _given(self) -> list[GivenAction]:
        if self._actions is None:
            text = self.case_text
            self._actions = given_actions(self.phase_turns, case_text=text) if self.phase_turns else []
            self._indicated = present_findings(text) if self._actions and text else None
            self.shotgun_rows = shotgun(self._actions, self.max_rows)
        return self._actions

    def decide(
        self, gi: int, broader: str | None, excluded: DdxDecision | None, why_excluded: str
    ) -> DdxDecision:
        gt = self.gts[gi]
        negated, put = self._ruled_out(gt)
        backing = self.support.ruled_out(gt, negated, put) if negated else None
        if backing is not None:
            why = f"ruled out in the transcript ({len(negated)} negated mention(s); latest supported shown)"
            return DdxDecision("AE", gt, None, explanation=why, evidence=(backing,))
        actions = self._given()
        tm, why = tm_sm_evidence(gt, _findings_of(gt, self.findings), actions, indicated=self._indicated)
        if tm and not self.shotgun_rows:
            return DdxDecision("TM-SM", gt, None, explanation=why, evidence=tuple(tm))
        notes = [BARE_EXCLUSION.format(n=len(negated))] if negated else []
        if tm:
            notes.append(
                f"missed; treated only within a shotgun treatment (agents of {self.shotgun_rows} action-map "
                f"rows given, more than {self.max_rows}): no treatment counts"
            )
        why = "; ".join(notes) or "not in the differential"
        if broader is not None:
            why += f"; named only by the broader {broader!r} (partial credit in recall_broader)"
        if excluded is not None:  # the match (tier, confidence) and the item kept, the reason replaced
            why = f"excluded without support: {excluded.system!r} has status excluded, but {why_excluded}"
            return replace(excluded, explanation=why)
        bare = (_mention_evidence(negated[-1]),) if negated else ()
        return DdxDecision("FN", gt, None, explanation=why, evidence=(*bare, *tm))


def _mention_evidence(mention: Mention) -> Evidence:
    p = mention.passage
    return Evidence(mention.sentence, "transcript", p.round, p.phase, p.agent, mention.trigger)
