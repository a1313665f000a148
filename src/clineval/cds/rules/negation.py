"""Which actions a recommendation affirms: a negation covers the action it is about, not its whole clause.

"Surgical embolectomy or catheter-directed therapy (systemic thrombolysis contraindicated: major surgery 2
weeks ago)" recommends embolectomy and *names thrombolysis as contraindicated*: it recommends no
thrombolysis. ``affirmed_parts(clause)`` returns the pieces of a clause outside every negated span; the
rule engine (``clineval.cds.rules.actions``) looks for actions, forbidden or required alike, only there.

**Cues.** *Before* the action: "avoid", "do not", "don't", "should not", "never", "no", "nor", "not",
"hold", "withhold", "omit", "stop", "discontinue", "cease", "defer", "delay", "postpone", "decline",
"refuse", "without", "instead of", "rather than", "in place of", "contraindication to/for", "not a
candidate for", "ineligible / unsuitable for". *After* it: "contraindicated", "(is) not
indicated / recommended / advised / appropriate / suitable / required / needed / warranted / safe /
possible / available / feasible", "inappropriate", "unsafe", "unavailable", "on hold", "not given",
"should not be given", "no longer indicated / required / needed". A participle ("held", "withheld",
"stopped", "discontinued", "omitted", "ceased", "deferred", "declined", "refused", "avoided",
"postponed", and "cannot", "unable to") covers the words before it ("X stopped on admission", "PCI
cannot be done"), but the words after it when it comes first in its part or after an agent or a perfect
("stopped X", "patient declined X", "we have stopped X", "unable to give X").

**Scope.** A clause (split at ``;``, ``.``, " but " by ``rule_patient``) is cut at hard boundaries (``:``,
``(``, ``)``, ``[``, ``]``, a spaced dash, "then", "followed by", "instead") and soft ones (``,``, ``+``,
"and", "or", "plus"). A cue *before* the action covers the words after it up to a hard boundary, a reason
word ("because", "as", "since", "due to", "owing to", "in view of", "secondary to", "following", "after",
"until", "unless", "if", "while", "when", "so", "therefore", "given that"), or a soft boundary followed by an
affirmative verb ("give", "start", "use", "continue", "add", "switch", "proceed" ...): "avoid NSAIDs,
ACE inhibitors and potassium supplements" covers all three, "avoid NSAIDs and give paracetamol" covers
NSAIDs only. A cue *after* the action covers the words before it back to a hard boundary, a reason word or
a soft boundary; back across soft boundaries only when plural ("NSAIDs and aspirin *are* contraindicated"),
never into a part that starts with an affirmative verb. A cue with nothing on its side ("Thrombolysis:
contraindicated", "alteplase (avoid)") covers the part before its boundary.

**Not negations.** Double negatives affirm: a cue followed by a delay or stop word ("do not delay
thrombolysis", "avoid delay", "without delay", "do not stop aspirin", "never withhold") and "no / not /
without contraindication" ("thrombolysis is not contraindicated", "no contraindication to thrombolysis").
Limits are not negations ("no more than 28% oxygen", "not exceeding 2 L", "no later than 12 h"), nor "not
only" and "whether or not". A synonym that itself carries a cue ("PCI not available", "no PCI-capable
centre") is looked for in the whole clause (``rule_actions``).

Known limits (documented in docs/cds/tier3_guidelines.md): a comma list under a cue before it is read as one
scope ("no thrombolysis, UFH infusion" negates both: write "no thrombolysis; UFH infusion" or "... start
UFH"); sarcasm, hypotheticals and negation across sentences are not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_F = re.IGNORECASE
_W = r"(?<![\w-])"  # a word start (a hyphenated word is one word: "non-invasive" holds no "no")
_E = r"(?![\w-])"  # a word end

_DELAY = (
    r"(?:the\s+|any\s+)?(?:delay\w*|wait\w*|postpon\w*|hesitat\w*|interrupt\w*|stop\w*|discontinu\w*|"
    r"withh[eo]ld\w*|hold\w*|held|omit\w*|miss\w*|forget\w*|defer\w*|ceas\w*)"
)
_NEG_HEAD = (
    r"(?:do\s+not|don'?t|does\s+not|should\s+not|must\s+not|cannot|can'?t|never|avoid\w*|no|not|without|nor)"
)
# Matched first and consumed: what is said with a cue word but negates nothing.
_SKIP = (
    rf"{_NEG_HEAD}\s+{_DELAY}{_E}",
    rf"(?:(?:should|must|will|need)\s+not|(?:should|must)n'?t|not\s+to)\s+be\s+{_DELAY}{_E}",
    r"(?:no|not|without|never|nil|absence\s+of|no\s+longer)\s+(?:\w+\s+)?contra-?indicat\w*",
    r"no\s+(?:more|less|later|sooner|higher|lower|fewer|greater)\s+than",
    r"not\s+(?:more|less|later|sooner|higher|lower|fewer|greater)\s+than",
    r"not\s+(?:exceed\w*|above|below|before|only)",
    r"whether\s+or\s+not",
)
_POST = (
    r"(?:should|must|can|will)\s+not\s+be\s+\w+|(?:should|must|ca)n'?t\s+be\s+\w+|not\s+to\s+be\s+\w+",
    r"contra-?indicated",
    r"(?:not|no\s+longer)\s+(?:indicated|recommended|advised|appropriate|suitable|required|needed|necessary|"
    r"warranted|safe|possible|available|feasible|an\s+option|to\s+be\s+given|given)",
    r"inappropriate|unsafe|unavailable|ill-advised|on\s+hold",
)
_PARTICIPLE = (
    r"held|withheld|stopped|discontinued|omitted|ceased|deferred|declined|refused|avoided|postponed|"
    r"cannot|can'?t|can\s+not|unable\s+to|not\s+able\s+to"  # "PCI cannot be done" / "cannot give X"
)
_PRE = (
    r"contra-?indications?\s+(?:to|for|with)",
    r"not\s+(?:a\s+)?(?:candidate|eligible|suitable)\s+for|ineligible\s+for|unsuitable\s+for",
    r"do\s+not|don'?t|does\s+not|doesn'?t|did\s+not|should\s+not|shouldn'?t|must\s+not|mustn'?t|need\s+not",
    r"instead\s+of|rather\s+than|in\s+place\s+of",
    r"avoid\w*|withhold\w*|hold(?:ing)?|omit(?:ting)?|stop(?:ping)?|discontinu(?:e|ing)|ceas(?:e|ing)|"
    r"defer(?:ring)?|delay(?:ing)?|postpon(?:e|ing)|declin(?:e|es|ing)|refus(?:e|es|ing)",
    r"never|without|no|nor|neither|not",
)
_CUE = re.compile(
    "|".join(
        [
            *(f"(?P<skip{i}>{_W}(?:{p}){_E})" for i, p in enumerate(_SKIP)),
            *(f"(?P<post{i}>{_W}(?:{p}){_E})" for i, p in enumerate(_POST)),
            f"(?P<part>{_W}(?:{_PARTICIPLE}){_E})",
            *(f"(?P<pre{i}>{_W}(?:{p}){_E})" for i, p in enumerate(_PRE)),
        ]
    ),
    _F,
)
_HARD = re.compile(r"[:()\[\]]|\s[-–—]+\s|\bthen\b|\bfollowed\s+by\b|\binstead\b(?!\s+of)", _F)
_SOFT = re.compile(r",|\+|\b(?:and|or|plus|&)\b", _F)
_REASON = re.compile(
    r"\b(?:because|(?<!such )(?<!as well )as(?! well)|since|due\s+to|owing\s+to|in\s+view\s+of|"
    r"secondary\s+to|following|after|until|unless|if|while|whilst|when|so|therefore|given\s+that|"
    r"in\s+light\s+of)\b",
    _F,
)
_VERB = re.compile(
    r"\s*(?:give|start|begin|commence|administer|use|prescribe|continue|add|offer|arrange|refer|proceed|"
    r"consider|treat|switch|perform|order|obtain|initiate|activate|call|escalate|admit|transfer|request|"
    r"recommend|resume|restart|monitor|check|repeat|titrate|increase|reduce|load|take|insert|book|discuss|"
    r"contact|plan|aim|target|keep|maintain|send|measure|assess|calculate|review|apply|prefer|opt|go|do)"
    r"(?:s|es|ed|d|ing)?\b",
    _F,
)
# before a participle, an agent or a perfect: "patient declined X", "we have stopped X" (the words after it)
_ACTIVE = re.compile(r"\b(?:patient|pt|he|she|they|we|i|family|team|who|has|have|had)\s+$", _F)
_PLURAL = re.compile(r"\b(?:are|were|both|all|these|either)\b", _F)
_CONTENT = re.compile(r"[^\W\d_]{2,}|\d")
_EMPTY_WORDS = frozenset(
    "is are was were be been being to the a an any all this that these it them for of in on now currently "
    "please should must both either which".split()
)


@dataclass(frozen=True, slots=True)
class _Boundary:
    start: int
    end: int
    kind: str  # hard | soft | reason


def _boundaries(clause: str) -> list[_Boundary]:
    found = [_Boundary(m.start(), m.end(), "hard") for m in _HARD.finditer(clause)]
    found += [_Boundary(m.start(), m.end(), "soft") for m in _SOFT.finditer(clause)]
    found += [_Boundary(m.start(), m.end(), "reason") for m in _REASON.finditer(clause)]
    return sorted(found, key=lambda b: (b.start, -b.end))


def _has_content(text: str) -> bool:
    return any(w.lower() not in _EMPTY_WORDS for w in _CONTENT.findall(text))


def _forward_end(clause: str, pos: int, bounds: list[_Boundary]) -> int:
    """Where the scope of a cue ending at ``pos`` ends: a hard boundary, a reason word, or a soft boundary
    followed by an affirmative verb or a reason word."""
    for b in bounds:
        if b.start < pos:
            continue
        if b.kind != "soft" or _VERB.match(clause, b.end) or _REASON.match(clause[b.end :].lstrip()):
            return b.start
    return len(clause)


def _back_span(clause: str, start: int, bounds: list[_Boundary]) -> tuple[int, int] | None:
    """The span a cue after its action covers: back to a boundary (across soft ones when plural, never
    into a part that starts with an affirmative verb); when that holds nothing ("Thrombolysis:
    contraindicated"), the part before the boundary. None when there is nothing before the cue."""
    before = [b for b in bounds if b.end <= start]
    own = before[-1].end if before else 0
    plural = bool(_PLURAL.search(clause[own:start]))
    stop = -1
    for i in range(len(before) - 1, -1, -1):
        previous = before[i - 1].end if i > 0 else 0
        if before[i].kind != "soft" or not plural or _VERB.match(clause, previous):
            stop = i
            break
    begin = before[stop].end if stop >= 0 else 0
    if _has_content(clause[begin:start]):
        return begin, start
    if stop < 0:
        return None
    hop = before[stop - 1].end if stop > 0 else 0
    return (hop, start) if _has_content(clause[hop : before[stop].start]) else None


def negated_spans(clause: str) -> list[tuple[int, int]]:
    """The (start, end) character spans of ``clause`` that a negation cue covers, merged and sorted."""
    bounds = _boundaries(clause)
    spans: list[tuple[int, int]] = []
    for cue in _CUE.finditer(clause):
        kind = (cue.lastgroup or "").rstrip("0123456789")
        if kind == "skip":
            continue
        back = _back_span(clause, cue.start(), bounds)
        active = kind == "part" and bool(_ACTIVE.search(clause[: cue.start()]))
        if kind == "part" and back is not None and not active:  # "X stopped on admission": before it
            spans.append((back[0], cue.end()))
            continue
        if kind in ("pre", "part"):  # "Stopped X", "avoid X": the words after it
            end = _forward_end(clause, cue.end(), bounds)
            if _has_content(clause[cue.end() : end]):
                spans.append((cue.start(), end))
                continue
        if back is not None:
            spans.append((back[0], cue.end()))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


@lru_cache(maxsize=1 << 14)
def affirmed_parts(clause: str) -> tuple[str, ...]:
    """The pieces of ``clause`` outside every negated span (the clause itself when nothing is negated)."""
    spans = negated_spans(clause)
    if not spans:
        return (clause,)
    pieces, at = [], 0
    for start, end in spans:
        pieces.append(clause[at:start])
        at = end
    pieces.append(clause[at:])
    return tuple(p for p in pieces if _has_content(p))


@lru_cache(maxsize=1 << 14)
def carries_cue(term: str) -> bool:
    """Does a synonym itself name a negated state ("PCI not available")? Then it is read in the whole
    clause, not in the affirmed parts."""
    return any((m.lastgroup or "").rstrip("0123456789") != "skip" for m in _CUE.finditer(term))
