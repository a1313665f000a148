"""Is a diagnosis mentioned as ruled out? A small ConText-style assertion detector for transcript text.

ConText (Harkema et al. 2009, J Biomed Inform 42:839; NegEx, Chapman et al. 2001) decides whether a
target concept in a sentence is negated by trigger phrases, each with a direction (FORWARD: the target
follows the trigger; BACKWARD: it precedes it; BIDIRECTIONAL), a scope that ends at the sentence end or
at a termination term ("but", "however"...), and pseudo-triggers that look like negations but are not
("cannot be ruled out"). When triggers overlap, the longest wins, as in medspaCy's ConText.

Why not medspaCy itself (tried, v1.3.1): it pins ``numpy<2`` through ``spacy<3.8``, pulls ~30 packages
and took ~11 s per LDDx transcript (docs/ddx/ddx_scoring.md). The rules below are a subset of ConText's
lexicon (the negated, possible and termination terms that occur in diagnostic discussion) extended with the
reasoning phrases of differential diagnosis: "ruled out", "excluded", "unlikely given", "argues against".

Rules added for the reasoning of a multi-agent discussion (issue 13), each a table below:

- comparatives are not exclusions (``COMPARATIVE``, both directions): "X is not as immediately
  life-threatening as Y", "X is less likely than Y" (Y is the more likely one; X is only ranked below it),
  "more urgent than", "not as likely as". A ``*`` in a trigger matches one to three words;
- conditionals and hypotheticals are not exclusions (``CONDITIONAL``, forward): "if X is not the primary
  cause", "should X be excluded", "unless X", "would argue against X if", "in case X is ruled out",
  "whether X";
- negating a qualified subtype does not exclude the parent (``SUBTYPE_QUALIFIERS``): in "no evidence of
  secondary dysmenorrhea" the negated concept is secondary dysmenorrhea, so a target "dysmenorrhea" is not
  ruled out. A mention whose preceding word is such a qualifier (and not part of the target's own name)
  is skipped;
- exclusion by reference (``REFERENCE``): a plural demonstrative ("these", "those", "both", "the above",
  "all of these") in a negated scope ("These diagnoses are less likely", "both are unlikely", "the above
  can be ruled out") excludes the targets named, in no hypothetical scope, in the immediately preceding
  sentence of the same passage, or in the run of list items just before it. Conservative: a singular
  ("this") does not refer, nor a demonstrative followed by a non-diagnosis noun ("these symptoms");
- synonyms: ``names_for(target)`` may give further names (synonyms, abbreviations); every form is searched.

``ruled_out_mentions(targets, passages, names_for=None)`` returns, for each target, the negated mentions
found: the sentence, the trigger, the passage's round / phase / agent, and whether an earlier sentence put
the target forward (named it in no negated and no conditional scope). ``target_mentions`` also returns those
sentences (for the DDx rule that an exclusion needs the diagnosis considered first: ``scoring.ddx_support``).

Actions (``action_state``, for TM-SM in ``clineval.ddx.treatment``) use the same scope rules with
their own lexicon (``ACTION_RULES``): an agent is withheld ("avoid NSAIDs", "hold insulin", "thrombolysis is
contraindicated") or only considered ("consider intubation", "if hypotensive, give fluids"), else given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from clineval.text.assertion_lexicon import (
    ACTION_RULES,
    BACKWARD,
    BLOCKING,
    BOTH,
    CONDITIONAL,
    FORWARD,
    NEGATED,
    REFERENCE,
    REFERENCE_NOT_DIAGNOSES,
    RULES,
    SCOPE,
    SUBTYPE_QUALIFIERS,
    TERMINATE,
    WILDCARD_MAX,
)
from clineval.text.matching import match_tokens
from clineval.text.stemming import stem

_LIST_ITEM_MAX = 25  # tokens: a longer piece is a sentence, not a list item
HEADING_EXTRA = 2  # words besides the name in a heading ("1. Diagnosis: X")


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of transcript text and where it was said."""

    text: str
    round: int | None = None
    phase: str | None = None
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class Mention:
    """A target mentioned as ruled out: the sentence, the trigger phrase and the passage it is in;
    ``put_forward``: an earlier sentence (of this passage or an earlier one) put the target forward (named it
    in no negated and no conditional scope: ``TargetMentions``)."""

    target: str
    sentence: str
    trigger: str
    passage: Passage
    put_forward: bool = False
    order: int = 0  # the sentence's position in the transcript (1-based, over all passages)
    reason: str = ""  # the next sentence when this one ends with ":" ("X is unlikely:", "no rash.")


def _stems(text: str) -> tuple[str, ...]:
    return tuple(stem(t) for t in match_tokens(text))


# Triggers match the words as written (lower-cased): "rule out" (possible) and "ruled out" (negated) share
# their stems. Targets match on stems ("nephropathies" names "nephropathy").
def _phrase(p: str) -> tuple[str, ...]:
    return tuple(w if w == "*" else " ".join(match_tokens(w)) for w in p.split())


Triggers = tuple[tuple[tuple[str, ...], str, str], ...]


def _compile(rules: Iterable[tuple[str, str, str]]) -> Triggers:
    compiled = ((_phrase(p), cat, d) for p, cat, d in rules)
    return tuple(sorted(compiled, key=lambda r: (-len(r[0]), "*" not in r[0])))


_TRIGGERS = _compile(RULES)
_FIRST = frozenset(t[0][0] for t in _TRIGGERS)
_ACTION_TRIGGERS = _compile(ACTION_RULES)
_ACTION_FIRST = frozenset(t[0][0] for t in _ACTION_TRIGGERS)
_CONDITION_OPENERS = frozenset({"if", "unless", "should", "whether", "once", "when"})
_SUPPOSED = frozenset({CONDITIONAL})  # a target named here is not put forward ("if X is the cause")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+|\\n|\s[-*•]\s|\"\s*[,:]\s*\"")


_ITEM_BREAK = re.compile(r"\n|\\n|\s[-*•]\s")
_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s")


def split_sentences(text: str) -> list[str]:
    """Sentences (and list items, JSON values) of ``text``; empty pieces dropped."""
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


def _pieces(text: str) -> list[tuple[str, bool]]:
    """``split_sentences`` with, for each piece, whether a line / bullet break comes before it (a list
    item when short)."""
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in [*_SENTENCE.finditer(text), None]:
        end = m.start() if m else len(text)
        piece = text[pos:end].strip()
        if piece:
            out.append((piece, False))
        if m is not None:
            pos = m.end()
            # the flag belongs to the next piece
            out.append(("", bool(_ITEM_BREAK.search(m.group(0)))))
    result: list[tuple[str, bool]] = []
    item = False
    for piece, flag in out:
        if not piece:
            item = flag
            continue
        result.append((piece, item or bool(_BULLET.match(piece))))
        item = False
    return result


@lru_cache(maxsize=4096)
def target_forms(target: str) -> tuple[tuple[str, ...], ...]:
    """Stemmed token sequences naming a target: as written, without its parenthesis, and the parenthesis
    when it is an abbreviation or a name of two or more words."""
    forms = {_stems(target)}
    inner = re.findall(r"\(([^)]*)\)", target)
    if inner:
        forms.add(_stems(re.sub(r"\([^)]*\)", " ", target)))
        # an abbreviation ("AKI") or a name of two or more words ("Type 2 diabetes"); not a qualifier
        # ("essential (primary) hypertension")
        forms.update(
            _stems(x) for x in inner if (x.strip().isupper() and len(x.strip()) >= 2) or len(x.split()) >= 2
        )
    return tuple(f for f in forms if f)


def find_form(tokens: Sequence[str], form: Sequence[str]) -> list[int]:
    """Start indices of the contiguous token sequence ``form`` in ``tokens``."""
    n = len(form)
    return [
        i for i in range(len(tokens) - n + 1) if tokens[i] == form[0] and tuple(tokens[i : i + n]) == form
    ]


_find = find_form


def _match_end(tokens: Sequence[str], i: int, phrase: Sequence[str]) -> int | None:
    """End of ``phrase`` matched at ``tokens[i]`` ("*" is one to WILDCARD_MAX words, shortest first)."""
    if not phrase:
        return i
    if phrase[0] == "*":
        for k in range(1, WILDCARD_MAX + 1):
            if i + k <= len(tokens) and (end := _match_end(tokens, i + k, phrase[1:])) is not None:
                return end
        return None
    if i < len(tokens) and tokens[i] == phrase[0]:
        return _match_end(tokens, i + 1, phrase[1:])
    return None


def _modifiers(
    tokens: Sequence[str], triggers: Triggers = _TRIGGERS, first: frozenset[str] = _FIRST
) -> list[tuple[int, int, str, str, str]]:
    """Trigger matches (start, end, category, direction, phrase), longest rule first, no overlaps."""
    taken = [False] * len(tokens)
    found: list[tuple[int, int, str, str, str]] = []
    for i, tok in enumerate(tokens):
        if tok not in first or taken[i]:
            continue
        for phrase, cat, direction in triggers:
            end = _match_end(tokens, i, phrase)
            if end is not None and not any(taken[i:end]):
                found.append((i, end, cat, direction, " ".join(tokens[i:end])))
                for j in range(i, end):
                    taken[j] = True
                break
    return found


def _negated_by(mods: Sequence[tuple[int, int, str, str, str]], start: int, end: int) -> str | None:
    """The trigger that puts tokens[start:end] in a negated scope, or None (a possible, comparative or
    conditional trigger in scope wins over a negated one)."""
    hits: list[tuple[str, str]] = []
    for m_start, m_end, cat, direction, phrase in mods:
        if cat in (TERMINATE, REFERENCE):
            continue
        if direction in (FORWARD, BOTH) and m_end <= start and start - m_end < SCOPE:
            between = range(m_end, start)
        elif direction in (BACKWARD, BOTH) and m_start >= end and m_start - end < SCOPE:
            between = range(end, m_start)
        else:
            continue
        if any(t_start in between for t_start, _, c, _, _ in mods if c == TERMINATE):
            continue
        hits.append((cat, phrase))
    if any(cat in BLOCKING for cat, _ in hits):
        return None
    return next((phrase for cat, phrase in hits if cat == NEGATED), None)


def _blocked(
    mods: Sequence[tuple[int, int, str, str, str]], start: int, end: int, cats: frozenset[str] = BLOCKING
) -> bool:
    """Is tokens[start:end] in a possible / comparative / conditional scope (or one of ``cats``)?"""
    for m_start, m_end, cat, direction, _ in mods:
        if cat not in cats:
            continue
        if direction in (FORWARD, BOTH) and m_end <= start and start - m_end < SCOPE:
            return True
        if direction in (BACKWARD, BOTH) and m_start >= end and m_start - end < SCOPE:
            return True
    return False


def action_state(words: Sequence[str], start: int, end: int) -> tuple[str | None, bool]:
    """(the trigger withholding it, or None; whether it is only considered) for an agent at
    ``words[start:end]`` (lower-cased ``match_tokens`` of one sentence), by the action lexicon; a sentence
    that opens with a condition ("if", "unless", "should", "once", "when", "in case") is considered only."""
    if words and (words[0] in _CONDITION_OPENERS or tuple(words[:2]) == ("in", "case")):
        return None, True  # "If blood glucose is low (<70 mg/dL), administer dextrose": all of it supposed
    mods = _modifiers(words, _ACTION_TRIGGERS, _ACTION_FIRST)
    if not mods:
        return None, False
    hedged = _blocked(mods, start, end)
    return (None if hedged else _negated_by(mods, start, end)), hedged


def negation_of(words: Sequence[str], start: int, end: int) -> str | None:
    """The trigger that puts ``words[start:end]`` in a negated scope by the diagnosis lexicon, or None
    ("no fever": the finding is absent)."""
    return negation_in(words)(start, end)


def negation_in(words: Sequence[str]) -> Callable[[int, int], str | None]:
    """``negation_of`` for many spans of one sentence: its triggers found once."""
    mods = _modifiers(words)
    if not mods:
        return _nothing
    return lambda start, end: _negated_by(mods, start, end)


def _nothing(start: int, end: int) -> str | None:
    return None


def _reference_trigger(words: Sequence[str], mods: Sequence[tuple[int, int, str, str, str]]) -> str | None:
    """The negation trigger of a plural demonstrative that refers back to diagnoses, or None."""
    for start, end, cat, _, phrase in mods:
        if cat != REFERENCE or (end < len(words) and words[end] in REFERENCE_NOT_DIAGNOSES):
            continue
        trigger = _negated_by(mods, start, end)
        if trigger is not None:
            return f"{phrase} ... {trigger}"
    return None


def _subtype_mention(words: Sequence[str], start: int, form: Sequence[str]) -> bool:
    """Is the word before the match a qualifier naming a subtype ("secondary dysmenorrhea")?"""
    return start > 0 and words[start - 1] in SUBTYPE_QUALIFIERS and form[0] != stem(words[start - 1])


def all_forms(target: str, names_for: Callable[[str], Iterable[str]] | None) -> tuple[tuple[str, ...], ...]:
    """``target_forms`` of a target and of each further name ``names_for`` gives."""
    forms = list(target_forms(target))
    for name in names_for(target) if names_for is not None else ():
        forms.extend(f for f in target_forms(name) if f not in forms)
    return tuple(forms)


@dataclass(frozen=True, slots=True)
class TargetMentions:
    """Per target, its ruled-out mentions and the sentences putting it forward (no negated or conditional
    scope: "X is likely", "X must be ruled out", "X is less likely than Y"; a heading with the next sentence,
    "**X:** fever"), in transcript order (``Mention.order``; trigger "")."""

    ruled_out: dict[str, list[Mention]]
    put_forward: dict[str, list[Mention]]


def heading(sentence: str, form: Sequence[str]) -> bool:
    """A heading naming the target ("**Acute Kidney Injury:**", "1. Sepsis"): its reasons follow it."""
    bare = sentence.strip().strip("*#-•[] ").rstrip("*")
    return bare.endswith(":") or len(match_tokens(bare)) <= len(form) + HEADING_EXTRA


def ruled_out_mentions(
    targets: Sequence[str],
    passages: Sequence[Passage],
    *,
    names_for: Callable[[str], Iterable[str]] | None = None,
) -> dict[str, list[Mention]]:
    """For each target, its mentions in a negated (ruled-out) scope, in passage and sentence order.

    ``names_for(target)``, when given, returns further names of a target (synonyms, abbreviations): a
    mention of any of them counts. A sentence whose plural demonstrative is negated ("These are less
    likely") rules out the targets named in the sentence or list items just before it (module docstring).
    ``Mention.put_forward``: an earlier sentence put the target forward (``target_mentions``)."""
    return target_mentions(targets, passages, names_for=names_for).ruled_out


def target_mentions(
    targets: Sequence[str],
    passages: Sequence[Passage],
    *,
    names_for: Callable[[str], Iterable[str]] | None = None,
) -> TargetMentions:
    """``ruled_out_mentions`` and, read in the same pass, the sentences putting each target forward."""
    forms = {t: all_forms(t, names_for) for t in targets}
    firsts = {f[0] for fs in forms.values() for f in fs}
    out: dict[str, list[Mention]] = {t: [] for t in targets}
    put: dict[str, list[Mention]] = {t: [] for t in targets}
    order = 0  # sentences read so far, over all passages
    for passage in passages:
        # targets named (outside a hypothetical scope) in the previous sentence / run of list items
        previous: list[tuple[set[str], bool, int]] = []
        pieces = _pieces(passage.text)
        for i, (sentence, is_item) in enumerate(pieces):
            order, after = order + 1, (pieces[i + 1][0] if i + 1 < len(pieces) else "")
            words = match_tokens(sentence)
            tokens = tuple(stem(w) for w in words)
            named: set[str] = set()
            here: dict[str, tuple[str, ...]] = {}  # put forward in this sentence, by the form
            mods = _modifiers(words) if (firsts.intersection(tokens) or _FIRST.intersection(words)) else []
            found: set[str] = set()
            for target, target_stems in forms.items():
                for form in target_stems:
                    trigger = None
                    for s in _find(tokens, form):
                        if _subtype_mention(words, s, form):
                            continue
                        negated = _negated_by(mods, s, s + len(form))
                        if not _blocked(mods, s, s + len(form)):
                            named.add(target)
                        if negated is None and not _blocked(mods, s, s + len(form), _SUPPOSED):
                            here.setdefault(target, form)
                        trigger = trigger or negated
                    if trigger is not None:
                        why = after[:400] if sentence.rstrip("* ").endswith(":") else ""
                        m = Mention(target, sentence[:400], trigger, passage, bool(put[target]), order, why)
                        out[target].append(m)
                        found.add(target)
                        break
            ref = _reference_trigger(words, mods) if mods else None
            if ref is not None and previous:
                referred: set[str] = set(previous[-1][0])
                if previous[-1][1]:  # a run of list items: all of them
                    for names, item, _ in reversed(previous[:-1]):
                        if not item:
                            break
                        referred |= names
                for target in sorted(referred - found, key=list(targets).index):
                    trigger, before = f"{ref} (by reference)", bool(put[target])
                    out[target].append(Mention(target, sentence[:400], trigger, passage, before, order))
            item = is_item and len(words) <= _LIST_ITEM_MAX
            previous.append((named, item, len(words)))
            for target, form in here.items():
                text = f"{sentence} {after}".strip() if heading(sentence, form) else sentence
                put[target].append(Mention(target, text[:400], "", passage, bool(put[target]), order))
    return TargetMentions(out, put)
