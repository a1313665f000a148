"""Diagnosis names split into clinically meaningful components, so a matcher can compare components.

``components(name)`` returns a ``Composition``:

- ``condition``: the head disease ("Hypoglycemia due to insulinoma" -> "Hypoglycemia");
- ``causes``: what produces it: "X due to / secondary to / caused by / induced by / resulting from /
  from Y", "Y-related X", "Y-induced X", "Y-associated X", "Y-mediated X" (Y is the cause), and an end
  parenthetical listing causes under a *mechanism* head (below);
- ``with_``: co-conditions, "X with Y" ("Left pneumothorax with hemothorax" -> "hemothorax") and "X and Y"
  when both sides are diseases;
- ``alternatives``: a name written "A or B" / "A / B"; a shared head is distributed ("Rh or ABO
  incompatibility" -> "Rh incompatibility", "ABO incompatibility"; "Subdural or epidural hematoma");
- ``aliases`` and ``examples``: an end parenthetical that renames the whole ("(PAD)", "(frozen shoulder)",
  "also known as ...") or lists subtypes / examples ("such as", "like", "e.g.", "including", or a list
  under a *category* head: "sexually transmitted infection (gonorrhea, chlamydia, syphilis)");
- ``notes``: other end parentheticals (a consequence "(causing syncope)", a description "(initial
  infection)");
- ``qualifiers_dropped``: laterality only (left, right, bilateral, unilateral, left-/right-sided). Acuity
  (acute / chronic), severity and site words are kept: they often change the disease or its management
  (acute vs chronic pancreatitis, upper vs lower GI bleeding, pulmonary vs cerebral oedema); a side does
  not ("Left pneumothorax" is a pneumothorax);
- ``patterns``: the registry entries that fired; ``explanation``: one line saying what was split and why.

An end parenthetical holding a comma / "or" list is a cause list when the head names a mechanism or
state that other diseases produce (``_MECHANISM_HEADS``: insufficiency, obstruction, intoxication, side
effect, dehydration, ...): "vascular insufficiency (atherosclerosis, arteriosclerosis)" is vascular
insufficiency *caused by* atherosclerosis, not another name for it. Under a category head (infection,
cancer, disorder, heart block ...) the list names subtypes. Proposed rule for ``diagnosis_vocab.name_forms``:
treat an end parenthetical as an alias only when ``paren_role`` says "alias" (it does).

Names where "with" / "and" / "or" belong to the disease name are protected (``_FIXED``: "hand, foot and
mouth disease", "dementia with Lewy bodies", "drug rash with eosinophilia and systemic symptoms" ...), and
"with" followed by a DSM / ICHD specifier ("with psychotic features", "with depressed mood", "with aura")
stays part of the condition: it is a subtype, not a second disease. An explanation after the name and a
leading hedge are cut first (``diagnosis_vocab.clean_name``); inline "such as / like / including" gives
``examples``. Pure: no I/O, no vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache

from clineval.text.names.diagnosis_vocab import clean_name

__all__ = ["LINKS", "Composition", "Link", "components", "paren_role"]

_LATERALITY = re.compile(r"\b(?:left|right|bilateral|unilateral)(?:[- ]sided)?\s+", re.I)
_END_PAREN = re.compile(r"\s*\(([^()]*)\)\s*$")
_SPACE = re.compile(r"\s+")

# Names whose "with" / "and" / "or" / hyphen are part of one disease name (matched case-insensitively,
# as a substring of the name).
_FIXED = (
    "hand, foot and mouth",
    "hand foot and mouth",
    "dementia with lewy bodies",
    "drug rash with eosinophilia and systemic symptoms",
    "drug reaction with eosinophilia and systemic symptoms",
    "hemorrhagic fever with renal syndrome",
    "with or without",
    "constitutional delay of growth and puberty",
    "head and neck",
    "growth and development",
)
# Last word of a "with ..." phrase that is a specifier of the condition, not a second disease.
_SPECIFIERS = frozenset({"features", "mood", "aura", "ideation", "symptoms", "bodies", "type", "onset"})
# Heads under which an end-parenthetical list names causes (other diseases / agents producing the state).
_MECHANISM_HEADS = frozenset(
    {
        "insufficiency", "obstruction", "intoxication", "effect", "effects", "toxicity", "poisoning",
        "dehydration", "hypotension", "overload", "use", "withdrawal", "reaction", "failure",
    }
)  # fmt: skip
# A word that is a disease head on its own (suffix or head noun); a side without one shares the other's.
_DISEASE_HEAD = re.compile(
    r"(?:itis|osis|oma|emia|ia|pathy|trophy|plasia|ism|spasm|ectasis|disease|disorder|syndrome|attack|"
    r"failure|injury|infection|cancer|ulcers?|fracture|deficiency|insufficiency|stenosis|abuse|dependence)$",
    re.I,
)
_EXAMPLE_LEAD = re.compile(r"^\s*(?:such as|like|e\.?\s?g\.?,?|eg,?|including|for example)(?![a-z])\s*", re.I)
_ABBREVIATION = re.compile(r"^[A-Z][A-Za-z0-9]{1,5}$")
_ALIAS_LEAD = re.compile(r"^\s*(?:also known as|aka|a\.k\.a\.|or)\s+", re.I)
_CAUSE_LEAD = re.compile(r"^\s*(?:caused by|due to|secondary to)\s+", re.I)
_CONSEQUENCE_LEAD = re.compile(r"^\s*(?:causing|leading to|with|given|either|both)\b", re.I)


@dataclass(frozen=True, slots=True)
class Composition:
    """A diagnosis name's components (see the module docstring for each role)."""

    name: str
    condition: str
    causes: tuple[str, ...] = ()
    with_: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    qualifiers_dropped: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    explanation: str = ""


@dataclass(frozen=True, slots=True)
class Link:
    """A link pattern: ``regex`` splits the name into (left, right) at its first match; ``apply`` builds
    the composition from the two sides. ``guard(left, right, whole)`` refuses a split (returns False),
    e.g. for protected names."""

    name: str
    regex: re.Pattern[str]
    apply: Callable[[Composition, str, str], Composition]
    guard: Callable[[str, str, str], bool] = field(default=lambda left, right, text: True)


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip(" ,;:-")


def _lacks_head(text: str) -> bool:
    """One or two words with no disease head of their own ("Rh", "primary", "Small bowel", "Viral"): they
    qualify the head of what follows ("Rh or ABO incompatibility")."""
    words = text.split()
    return 0 < len(words) <= 2 and not _DISEASE_HEAD.search(words[-1])


def _distribute(left: str, right: str) -> tuple[str, str]:
    """Share a head between the two alternatives: "Rh or ABO incompatibility" -> ("Rh incompatibility",
    "ABO incompatibility") (left lacks a head: it takes the right side without its first word);
    "Hemophilia A or B" -> ("Hemophilia A", "Hemophilia B") (a one-letter / number right side takes the
    left side's words before its last)."""
    lw, rw = left.split(), right.split()
    if _lacks_head(left) and len(rw) >= 2:
        return f"{left} {' '.join(rw[1:])}", right
    if len(rw) == 1 and len(right) <= 3 and len(lw) >= 2:
        return left, f"{' '.join(lw[:-1])} {right}"
    return left, right


def _cause(comp: Composition, left: str, right: str) -> Composition:
    return replace(comp, condition=_clean(left), causes=(*comp.causes, _clean(right)))


def _cause_prefix(comp: Composition, left: str, right: str) -> Composition:
    return replace(comp, condition=_clean(right), causes=(*comp.causes, _clean(left)))


def _with(comp: Composition, left: str, right: str) -> Composition:
    return replace(comp, condition=_clean(left), with_=(*comp.with_, _clean(right)))


def _alternative(comp: Composition, left: str, right: str) -> Composition:
    a, b = _distribute(_clean(left), _clean(right))
    return replace(comp, condition=a, alternatives=(a, b))


def _examples(comp: Composition, left: str, right: str) -> Composition:
    return replace(comp, condition=_clean(left), examples=(*comp.examples, *_split_list(right)))


def _slash(comp: Composition, left: str, right: str) -> Composition:
    return replace(comp, condition=_clean(left), alternatives=(_clean(left), _clean(right)))


def _not_fixed(left: str, right: str, whole: str) -> bool:
    low = whole.lower()
    return not any(f in low for f in _FIXED)


def _with_guard(left: str, right: str, whole: str) -> bool:
    words = right.lower().split()
    return _not_fixed(left, right, whole) and bool(words) and words[-1] not in _SPECIFIERS


def _and_guard(left: str, right: str, whole: str) -> bool:
    # both sides diseases of their own: not modifiers sharing a head ("acute and chronic"), not a list of
    # sites ("nerve roots C6 and C7"), not part of an "of" phrase
    first = right.split()[0] if right.split() else ""
    return (
        _not_fixed(left, right, whole)
        and not _lacks_head(left)
        and "," not in left
        and " of " not in f" {left.lower()} "
        and len(first) > 3
    )


def _or_guard(left: str, right: str, whole: str) -> bool:
    return _not_fixed(left, right, whole) and "," not in left and " of " not in f" {left.lower()} "


# The registry, tried in order; the first link that matches and passes its guard splits the name, and the
# condition side is parsed again (so "X due to Y with Z" gives a cause and a co-condition).
LINKS: tuple[Link, ...] = (
    Link("examples", re.compile(r"\s+(?:such as|like|including)\s+", re.I), _examples),
    Link(
        "due_to",
        re.compile(
            r"\s+(?:due to|secondary to|caused by|induced by|resulting from|attributable to|related to|from)"
            r"\s+",
            re.I,
        ),
        _cause,
        _not_fixed,
    ),
    Link("with", re.compile(r"\s+with\s+", re.I), _with, _with_guard),
    Link(
        "prefix_cause", re.compile(r"[-~ ]\s*(?:related|induced|associated|mediated)\s+", re.I), _cause_prefix
    ),
    Link("or", re.compile(r"\s+or\s+", re.I), _alternative, _or_guard),
    Link("slash", re.compile(r"\s+/\s+"), _slash, _not_fixed),
    Link("and", re.compile(r"\s+and\s+", re.I), _with, _and_guard),
)


def paren_role(head: str, inner: str) -> str:
    """Role of an end parenthetical: alias, example, cause or note (see the module docstring)."""
    text = inner.strip()
    if not text:
        return "note"
    if _ALIAS_LEAD.match(text):
        return "alias"
    if _EXAMPLE_LEAD.match(text):
        return "example"
    if _CAUSE_LEAD.match(text):
        return "cause"
    if _CONSEQUENCE_LEAD.match(text) or "other causes" in text.lower():
        return "note"
    listed = "," in text or " or " in text.lower()
    last = head.lower().split()[-1] if head.split() else ""
    if listed:
        if last in _MECHANISM_HEADS:
            return "cause"
        # "(CVA or stroke)": an abbreviation in the list makes it a list of names of the whole
        return "alias" if any(_ABBREVIATION.match(x) for x in _split_list(text)) else "example"
    if len(text.split()) == 1 and last in _MECHANISM_HEADS and not text.isupper():
        return "cause"
    return "alias"


def _split_list(text: str) -> tuple[str, ...]:
    text = _CAUSE_LEAD.sub("", _EXAMPLE_LEAD.sub("", _ALIAS_LEAD.sub("", text)))
    parts = re.split(r",|;|\bor\b|\band\b", text)
    return tuple(p for p in (_clean(x) for x in parts) if p and p.lower() not in {"others", "other causes"})


def _parse(comp: Composition, text: str, depth: int = 0) -> Composition:
    for link in LINKS:
        m = link.regex.search(text)
        if m is None:
            continue
        left, right = text[: m.start()], text[m.end() :]
        if not left.strip() or not right.strip() or not link.guard(left, right, text):
            continue
        comp = link.apply(comp, left, right)
        comp = replace(comp, patterns=(*comp.patterns, link.name))
        if depth < 3 and link.name not in ("or", "slash"):
            return _parse(comp, comp.condition, depth + 1)
        return comp
    return replace(comp, condition=_clean(text))


@lru_cache(maxsize=16384)
def components(name: str) -> Composition:
    """The components of one diagnosis name (see the module docstring)."""
    text = _SPACE.sub(" ", clean_name(name)).strip()
    comp = Composition(name=name, condition=text)
    end = _END_PAREN.search(text)
    if end is not None and end.start() > 0:
        text = text[: end.start()]
        head = re.sub(r"\([^()]*\)", " ", text).strip()
        role = paren_role(head, end.group(1))
        items = _split_list(end.group(1)) if role != "note" else (_clean(end.group(1)),)
        comp = replace(
            comp,
            aliases=items if role == "alias" else (),
            examples=items if role == "example" else (),
            causes=items if role == "cause" else (),
            notes=items if role == "note" else (),
            patterns=(f"paren_{role}",),
        )
    text = _clean(re.sub(r"\s*\([^()]*\)\s*", " ", text))
    dropped = tuple(m.group(0).strip() for m in _LATERALITY.finditer(text))
    if dropped:
        text = _clean(_LATERALITY.sub("", text))
        comp = replace(comp, qualifiers_dropped=dropped, patterns=(*comp.patterns, "laterality"))
    comp = _parse(comp, text)
    return replace(comp, explanation=_explain(comp))


def _explain(comp: Composition) -> str:
    parts = [f"condition {comp.condition!r}"]
    for label, values in (
        ("caused by", comp.causes),
        ("with", comp.with_),
        ("alternatives", comp.alternatives),
        ("aliases", comp.aliases),
        ("examples", comp.examples),
        ("notes", comp.notes),
        ("dropped laterality", comp.qualifiers_dropped),
    ):
        if values:
            parts.append(f"{label} {', '.join(map(repr, values))}")
    return "; ".join(parts) + (f" (patterns: {', '.join(comp.patterns)})" if comp.patterns else "")
