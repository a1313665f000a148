"""TM-SM: a missed ground-truth diagnosis that the triage / symptom-management turns *treated*.

The LDDx v6 metrics guide (Local-DDx by Baglecake, MIT) defines TM-SM as a diagnosis the team missed while its
symptom management treated it: "missed Dehydration but gave fluids". A mention of findings is not a treatment:
"noted hypotension, tachycardia, dry mucous membranes" treats nothing.

The action map (``data/tm_sm_actions.yaml``, one cited row per action: the agents as written, the conditions
and findings it treats, the guideline or textbook that says so) is read by ``load_action_map``. Rules:

1. **An action is given** (``given_actions``) when a sentence of a triage / symptom-management turn names an
   agent of a row (its stemmed words, whole and in order) and
   - the sentence orders it: at most ``CUE_REACH`` (6) words before or after the agent it holds an action
     word as written (``CUES``: administer, give, start, initiate, provide, prescribe, recommend, use,
     apply, infuse, continue, treat, replace, correct, their past forms "started", "administered", "gave"...
     or an action noun such as therapy, infusion, bolus, resuscitation, transfusion, supplementation; not
     "given", which opens a reason: "Given the history, ..."; the history "was started on aspirin" is
     withheld by the action lexicon's "started on"), or the agent is followed within three words by "for" /
     "to" ("Acetaminophen or ibuprofen for fever"); an abbreviation written in capitals in the map ("ORS",
     "NIV") must occur as written, other words match by their Snowball stem;
   - the sentence is not a heading (it does not end with ":": "**Blood Transfusion:** Consider ..." gives
     nothing until the sentence after it does);
   - it is not the case's history copied: the agent with the two words before or after it is not a phrase of
     the case text ("occasionally takes pantoprazole", "requiring a blood transfusion", "opioid pain
     management" in the vignette);
   - it is not a measurement, a cause or a question of eligibility (``NOT_AFTER`` / ``NOT_BEFORE``: "oxygen
     saturation", "insulin resistance", "acetaminophen overdose", "thrombolysis eligibility", "serum
     potassium", "exogenous insulin", "osmotic diuretics" for the loop-diuretic row).
2. **The action treats the ground truth** (``tm_sm_evidence``) when either
   - a) one of the row's ``conditions`` names the ground truth at a same-disease tier of
     ``clineval.text.names.equivalence`` (exact, synonym, overlap: "dehydration" treats "dehydration"), or
     names the condition part of a compositional ground truth ("secondary hypertension due to renal disease":
     its condition "secondary hypertension"). A subtype is not covered: fluids treat hypovolaemic shock, not
     every shock (cardiogenic shock); a row lists the subtypes it treats. And the action is indicated by
     the case: one of the row's findings is present, not negated, in the case text, in words or as a
     number past its threshold (``clineval.ddx.vitals``: "pulse is 176/min" is tachycardia);
     rows without findings (antibiotics, anticoagulation) need none; without a case text the check is
     skipped; or
   - b) the ground truth's key findings (``reference.findings[gt]``: Open-XDDx, LDDx v10) are treated: of its
     key findings that some row can treat (a row finding occurs in the finding's words), at least one and at
     least half are treated by a given action.

3. **A shotgun treats nothing** (issue 22, the audit's ``treat_everything``: a triage turn "Give X." for every
   agent of the map made every missed ground truth that any agent treats TM-SM): when a case's triage /
   symptom-management turns give agents of more than ``SHOTGUN_ROWS`` (8) distinct rows, none of the actions
   counts (``shotgun``). The 46 LDDx transcripts give 0 to 6 rows (6 in three: v8_5/2, v8_6/2, v8_6/18, e.g.
   oxygen, bronchodilators, antipyretics, analgesia, NSAIDs and insulin-dextrose), so 8 cuts no real one and
   leaves a sicker patient two more.

The evidence of a TM-SM decision is each treating sentence, with the agent, the row id and what it treats.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from clineval.core.errors import DataFileError
from clineval.core.output import TranscriptTurn
from clineval.ddx.classes import Evidence
from clineval.ddx.vitals import numeric_findings
from clineval.text.assertion import action_state, find_form, negation_in, split_sentences
from clineval.text.matching import match_tokens
from clineval.text.names.equivalence import equivalent
from clineval.text.names.resolution import parts_of
from clineval.text.stemming import stem

ACTIONS_FILE = "tm_sm_actions.yaml"
CUES = frozenset(
    "administer administering administered administration give giving gave start starting started initiate "
    "initiating initiated initiation commenced prescribed infused transfused "
    "commence commencing begin beginning provide providing prescribe prescribing recommend recommending "
    "recommended use using apply applying infuse infusing infusion deliver delivering offer offering "
    "continue continuing place placing titrate titrating treat treating treatment manage managing management "
    "replace replacing replacement replete repletion correct correcting correction resuscitate resuscitating "
    "resuscitation transfuse transfusing transfusion supplement supplementing supplementation supplemental "
    "bolus boluses therapy drip dose nebulised nebulized nebulise nebulize nebuliser nebulizer rehydrate "
    "rehydrating rehydration hydration cooling immersion decompression thoracostomy drainage cardioversion "
    "defibrillation pacing ventilation intubation intubate phototherapy plasmapheresis elevate elevating "
    "elevation ligation pericardiocentesis thrombolysis anticoagulation analgesia osmotherapy".split()
)
PURPOSE = frozenset({"for", "to"})
CUE_REACH = 6  # words before the agent's first or after its last word where an action word counts
RESTATED = 2  # words before or after an agent that, with it, make a phrase of the case text (a restatement)
_HEADING_END = re.compile(r"(?<=:)\*+\s+")  # "**Blood Transfusion:** Consider ...": a heading ends there
NOT_AFTER = frozenset(
    "saturation sat sats level levels concentration resistance secretion production deficiency overdose "
    "toxicity poisoning allergy allergic intolerance sensitivity induced associated related use disorder "
    "abuse withdrawal ingestion exposure eligibility candidate candidacy criteria contraindication "
    "contraindications window".split()
)
NOT_BEFORE = frozenset("serum plasma blood urine urinary exogenous endogenous surreptitious osmotic".split())
SHOTGUN_ROWS = 8  # a case's turns giving agents of more distinct rows than this: no action counts (rule 3)


class ActionRow(BaseModel):
    """One row of the action map (``data/tm_sm_actions.yaml``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    actions: list[str] = Field(min_length=1)
    conditions: list[str] = Field(default_factory=list)
    findings: list[str] = Field(default_factory=list)
    source: str = Field(min_length=20)


class _ActionFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1]
    rows: list[ActionRow] = Field(min_length=1)


def _stems(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in match_tokens(text))


def _agent_form(agent: str) -> tuple[str, ...]:
    """The tokens an agent is matched by: Snowball stems, except that a word written in capitals in the map
    ("ORS", "NIV", "O2") must occur as written ("=ors": its stem "or" would match the conjunction)."""
    raw = agent.replace("-", " ").split()
    caps = {
        w.lower().strip("'()") for w in raw if len(w) > 1 and w.upper() == w and any(c.isalpha() for c in w)
    }
    return tuple(f"={w}" if w in caps else stem(w) for w in match_tokens(agent))


def _key(words: Sequence[str], stems: Sequence[str], i: int, token: str) -> bool:
    return words[i] == token[1:] if token.startswith("=") else stems[i] == token


@dataclass(frozen=True, eq=False)  # hashed by identity: a key of the per-map caches below
class ActionMap:
    """The rows, an index of agent forms by first stem (stems, row index, agent as written) and each row's
    finding forms (stems, finding as written)."""

    rows: tuple[ActionRow, ...]
    agents: Mapping[str, tuple[tuple[tuple[str, ...], int, str], ...]]
    finding_forms: tuple[tuple[tuple[tuple[str, ...], str], ...], ...]

    @classmethod
    def of(cls, rows: Sequence[ActionRow]) -> ActionMap:
        ids = [r.id for r in rows]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate row ids: {sorted({i for i in ids if ids.count(i) > 1})}")
        index: dict[str, list[tuple[tuple[str, ...], int, str]]] = {}
        for i, row in enumerate(rows):
            for agent in row.actions:
                form = _agent_form(agent)
                if form:
                    index.setdefault(form[0], []).append((form, i, agent))
        findings = tuple(tuple((f, text) for text in r.findings if (f := _stems(text))) for r in rows)
        return cls(tuple(rows), {k: tuple(v) for k, v in index.items()}, findings)


def load_action_map(path: str | Path | None = None) -> ActionMap:
    """The packaged action map (``path`` None, read once) or a file of the same format."""
    if path is None:
        return _packaged()
    return _parse(Path(path).read_text(encoding="utf-8"), Path(path))


@lru_cache(maxsize=1)
def _packaged() -> ActionMap:
    ref = resources.files("clineval.ddx") / "data" / ACTIONS_FILE
    return _parse(ref.read_text(encoding="utf-8"), Path(str(ref)))


def _parse(text: str, path: Path) -> ActionMap:
    try:
        return ActionMap.of(_ActionFile.model_validate(yaml.safe_load(text)).rows)
    except (yaml.YAMLError, ValidationError, ValueError) as err:
        raise DataFileError(f"invalid TM-SM action map: {str(err).splitlines()[0]}", path=path) from None


@dataclass(frozen=True, slots=True)
class GivenAction:
    """An action a turn gives: the row, the agent as written in the map, the sentence, where it was said."""

    row: int
    agent: str
    sentence: str
    round: int | None = None
    phase: str | None = None
    speaker: str | None = None


def _ordered(words: Sequence[str], start: int, end: int) -> bool:
    if (start and words[start - 1] in NOT_BEFORE) or (end < len(words) and words[end] in NOT_AFTER):
        return False
    window = words[max(0, start - CUE_REACH) : end + CUE_REACH]
    return any(w in CUES for w in window) or any(w in PURPOSE for w in words[end : end + 4])


def _restated(stems: Sequence[str], start: int, end: int, case_stems: Sequence[str] | None) -> bool:
    """Is the agent, with the two words before or after it, a phrase of the case text (its history copied:
    "occasionally takes pantoprazole", "requiring a blood transfusion", "opioid pain management")?"""
    if not case_stems:
        return False
    before = tuple(stems[max(0, start - RESTATED) : end])
    after = tuple(stems[start : end + RESTATED])
    return any(len(p) > end - start and find_form(case_stems, p) for p in (before, after))


def given_actions(
    turns: Sequence[TranscriptTurn], amap: ActionMap | None = None, *, case_text: str | None = None
) -> list[GivenAction]:
    """Every (row, sentence) action the turns give, in order (module docstring, rule 1); with ``case_text``,
    an agent named as the case text names it (with the two words before it) is its history, not given."""
    m = amap or load_action_map()
    case_stems = [stem(w) for w in match_tokens(case_text)] if case_text else None
    out: list[GivenAction] = []
    for turn in turns:
        for sentence in (p for piece in split_sentences(turn.text) for p in _HEADING_END.split(piece)):
            if sentence.strip().strip("*#-•[] ").rstrip("*").endswith(":"):
                continue  # a heading ("**Blood Transfusion:**"): what is done follows it
            words = match_tokens(sentence)
            stems = [stem(w) for w in words]
            seen: set[int] = set()
            for i in range(len(words)):
                for form, row, agent in (*m.agents.get(stems[i], ()), *m.agents.get(f"={words[i]}", ())):
                    end = i + len(form)
                    if row in seen or end > len(words) or not _ordered(words, i, end):
                        continue
                    if not all(_key(words, stems, i + k, t) for k, t in enumerate(form)):
                        continue
                    if _restated(stems, i, end, case_stems):
                        continue
                    withheld, hedged = action_state(words, i, end)
                    if withheld is None and not hedged:
                        seen.add(row)
                        out.append(
                            GivenAction(row, agent, sentence[:300], turn.round, turn.phase, turn.agent)
                        )
    return out


def shotgun(actions: Sequence[GivenAction], limit: int | None = SHOTGUN_ROWS) -> int:
    """The number of distinct action-map rows ``actions`` give when it is more than ``limit`` (rule 3: then
    none of them counts), else 0; ``limit`` None: never."""
    rows = len({a.row for a in actions})
    return rows if limit is not None and rows > limit else 0


def _same_disease(a: str, b: str) -> bool:
    eq = equivalent(a, b)
    return eq.equivalent and eq.tier != "hierarchy"


@lru_cache(maxsize=4096)
def _condition_rows(gt: str, amap: ActionMap) -> tuple[tuple[int, str], ...]:
    """(row, condition) for the rows with a condition naming the ground truth (rule 2a)."""
    names = [gt, *(part for role, part in parts_of(gt) if role == "condition")]
    found = []
    for i, row in enumerate(amap.rows):
        cond = next((c for c in row.conditions if any(_same_disease(n, c) for n in names)), None)
        if cond is not None:
            found.append((i, cond))
    return tuple(found)


@lru_cache(maxsize=16384)
def _finding_rows(finding: str, amap: ActionMap) -> Mapping[int, str]:
    """Row -> the row finding that this key finding names, for the rows that can treat it."""
    stems = _stems(finding)
    out: dict[int, str] = {}
    for i, forms in enumerate(amap.finding_forms):
        hit = next((text for form, text in forms if find_form(stems, form)), None)
        if hit is not None:
            out[i] = hit
    return out


def present_findings(case_text: str, amap: ActionMap | None = None) -> frozenset[int]:
    """The rows with a finding that the case text states, in words and not negated ("no fever" states no
    fever), or in numbers (``clineval.ddx.vitals``: "pulse is 176/min" states tachycardia)."""
    m = amap or load_action_map()
    numeric = {_stems(f) for f in numeric_findings(case_text)}
    rows: set[int] = {i for i, forms in enumerate(m.finding_forms) if any(f in numeric for f, _ in forms)}
    for sentence in split_sentences(case_text):
        words = match_tokens(sentence)
        stems = [stem(w) for w in words]
        negated = negation_in(words)
        for i, forms in enumerate(m.finding_forms):
            if i in rows:
                continue
            for form, _ in forms:
                if any(negated(s, s + len(form)) is None for s in find_form(stems, form)):
                    rows.add(i)
                    break
    return frozenset(rows)


def _evidence(action: GivenAction, amap: ActionMap, what: str) -> Evidence:
    row = amap.rows[action.row]
    trigger = f"{action.agent} ({row.id}) treats {what}"
    return Evidence(action.sentence, "transcript", action.round, action.phase, action.speaker, trigger)


def tm_sm_evidence(
    gt: str,
    key_findings: Sequence[str],
    actions: Sequence[GivenAction],
    *,
    indicated: frozenset[int] | None = None,
    amap: ActionMap | None = None,
) -> tuple[list[Evidence], str]:
    """(evidence, explanation) when the given ``actions`` treat the missed ground truth ``gt``; ([], "")
    otherwise. ``indicated``: the rows the case text indicates (``present_findings``), None to skip that check
    (module docstring, rule 2)."""
    m = amap or load_action_map()
    given: dict[int, GivenAction] = {}
    for action in actions:
        given.setdefault(action.row, action)
    if not given:
        return [], ""
    for row, cond in _condition_rows(gt, m):
        needs_sign = bool(m.finding_forms[row]) and indicated is not None
        if row in given and (not needs_sign or (indicated is not None and row in indicated)):
            why = f"missed, but treated: {given[row].agent} ({m.rows[row].id}) treats {cond!r}"
            return [_evidence(given[row], m, repr(cond))], why
    treatable = [(f, rows) for f in key_findings if (rows := _finding_rows(f, m))]
    treated = [(f, next(r for r in rows if r in given), rows) for f, rows in treatable if given.keys() & rows]
    if treated and 2 * len(treated) >= len(treatable):
        ev = [_evidence(given[r], m, f"key finding {f!r} ({rows[r]})") for f, r, rows in treated]
        why = f"missed, but {len(treated)} of {len(treatable)} treatable key finding(s) treated"
        return ev, why
    return [], ""
