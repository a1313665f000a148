"""What the overlap tier of ``clineval.text.names.equivalence`` compares: the features of a diagnosis name.

``analyse(name)`` splits a name's main form (abbreviations expanded; cancer named as carcinoma /
malignancy / malignant neoplasm read as cancer) into *discriminators* (numbers, single letters, laterality,
negation), *generic* heads (disease, syndrome, infection, virus, fever...), and *specific* content stems
(Snowball; organ nouns and adjectives folded: "bowel" / "intestinal"), with the *head* stem (the last one
before a linking word: of, with, due to, secondary to, related to...). ``overlap(a, b)`` says whether two
names' features are the same disease, a subtype by name (the longer adds a narrowing word or number), or
neither and why; ``conflict(a, b)`` whether their course or discriminators make them different whatever a
terminology says (acute vs chronic, type 1 vs type 2, left vs right, a negation on one side).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from clineval.text.abbreviations import expand_tokens
from clineval.text.names.diagnosis_vocab import name_forms
from clineval.text.stemming import stem
from clineval.text.stopwords import STOP_WORDS

OVERLAP_MIN_JACCARD, OVERLAP_MIN_SUBTYPE_JACCARD = 0.5, 0.3

_LATERAL = frozenset({"left", "right", "bilateral", "unilateral"})
_NEGATION = frozenset({"non", "no", "not", "without", "absent"})
_GENERIC = frozenset(
    {"disease", "syndrome", "disorder", "infection", "condition", "illness", "mellitus", "virus", "fever",
     "species", "headache"}
)  # fmt: skip
# Generic heads that say the same thing ("Ebola virus" ~ "Ebola infection"; "disease" ~ "disorder");
# "syndrome" stays apart ("Cushing disease" != "Cushing syndrome").
_GENERIC_CLASS = {"virus": "infection", "fever": "infection", "species": "infection", "disorder": "disease",
                  "condition": "disease", "illness": "disease"}  # fmt: skip
# Organ nouns and their adjectives name the same site ("bowel obstruction" ~ "intestinal obstruction").
_SITE_SYNONYMS = {
    stem(w): stem(c)
    for w, c in (("intestinal", "bowel"), ("intestine", "bowel"), ("kidney", "renal"), ("liver", "hepatic"),
                 ("heart", "cardiac"), ("lung", "pulmonary"), ("pulmonic", "pulmonary"),
                 ("brain", "cerebral"), ("stomach", "gastric"), ("humerus", "humeral"), ("femur", "femoral"))
}  # fmt: skip
# "type 2": the number decides, the marker word is skipped
_MARKERS = frozenset({"type", "types", "grade", "stage", "class", "degree", "phase", "sided"})
# Words one name may add without narrowing the disease (severity, course, certainty): stems.
_SAME_QUALIFIERS = frozenset(
    stem(w)
    for w in ("acute", "severe", "mild", "moderate", "benign", "suspected", "possible", "probable", "likely",
              "presumed", "simple", "uncomplicated", "clinical", "idiopathic", "true", "classic", "typical",
              "valve", "valvular")
)  # fmt: skip
# Modifiers that turn one disease's name into another's: never merged by overlap ("German measles").
_OTHER_DISEASE = frozenset(
    stem(w)
    for w in ("german", "insipidus", "pseudo", "para", "mellitus", "heat", "hemophilus", "haemophilus")
)
_LINK = frozenset(
    {"of", "with", "due", "secondary", "from", "in", "caused", "associated", "after", "following", "related"}
)


@dataclass(frozen=True, slots=True)
class NameFeatures:
    """What the overlap tier compares: head stem, specific stems, discriminators, generic words."""

    head: str
    specific: frozenset[str]
    head_specific: frozenset[str]
    discriminators: frozenset[str]
    generic: frozenset[str]


_CANCER_WORDS = {"carcinoma": ("cancer",), "malignancy": ("cancer",), "adenocarcinoma": ("adeno", "cancer")}
_MALIGNANT_NOUNS = frozenset({"neoplasm", "tumor", "growth"})


def _cancer_words(tokens: list[str]) -> list[str]:
    """Cancer named as "carcinoma", "malignancy" or "malignant neoplasm/tumor" reads as "cancer"; an
    adenocarcinoma is a cancer that adds "adeno" ("adenocarcinoma of the colon" narrows "colon cancer")."""
    out: list[str] = []
    for tok in tokens:
        if tok in _MALIGNANT_NOUNS and out and out[-1] == "malignant":
            out[-1] = "cancer"
        else:
            out.extend(_CANCER_WORDS.get(tok, (tok,)))
    return out


def _site(stemmed: str) -> str:
    return _SITE_SYNONYMS.get(stemmed, stemmed)


def _generic_class(words: frozenset[str]) -> frozenset[str]:
    return frozenset(_GENERIC_CLASS.get(w, w) for w in words)


@lru_cache(maxsize=32768)
def analyse(name: str) -> NameFeatures:
    """The overlap features of a name's main form (its abbreviation-expanded form when it has one)."""
    main = name_forms(name)[0]
    tokens = _cancer_words(expand_tokens(main.split()) or main.split())
    head = ""
    specific: set[str] = set()
    disc: set[str] = set()
    generic: set[str] = set()
    head_specific: set[str] = set()
    in_head_phrase = True
    for i, tok in enumerate(tokens):
        if tok in _LINK and (tok not in ("secondary", "related") or tokens[i + 1 : i + 2] == ["to"]):
            in_head_phrase = False
            continue
        if tok in _MARKERS:
            continue
        if not in_head_phrase and tok not in STOP_WORDS:
            specific.add(_site(stem(tok)))
        elif tok.isdigit() or tok in _LATERAL or tok in _NEGATION or (len(tok) == 1 and (tok != "a" or i)):
            disc.add(tok)
        elif tok in _GENERIC:
            generic.add(tok)
        elif tok not in STOP_WORDS:
            s = _site(stem(tok))
            specific.add(s)
            head = s
            head_specific.add(s)
    return NameFeatures(
        head, frozenset(specific), frozenset(head_specific), frozenset(disc), frozenset(generic)
    )


@dataclass(frozen=True, slots=True)
class Overlap:
    jaccard: float  # 0.0: no overlap (``why`` says which rule failed)
    why: str = ""
    added: frozenset[str] = frozenset()  # what the longer name adds that narrows it ("small cell"), if any


def _discriminators(a: NameFeatures, b: NameFeatures) -> tuple[bool, frozenset[str], str]:
    """(compatible, the discriminators only one side has, why not). Laterality on one side only is a
    detail ("left pneumothorax" is a pneumothorax); a number or letter on one side only narrows ("type 1
    neurofibromatosis" is a neurofibromatosis); different values, or a negation on one side, conflict."""
    la, lb = a.discriminators & _LATERAL, b.discriminators & _LATERAL
    if la and lb and la != lb:
        return False, frozenset(), f"laterality differs: {sorted(la)} vs {sorted(lb)}"
    da, db = a.discriminators - _LATERAL, b.discriminators - _LATERAL
    if da == db:
        return True, frozenset(), ""
    extra = da ^ db
    if (da <= db or db <= da) and not extra & _NEGATION:
        return True, extra, ""
    return False, frozenset(), f"qualifiers differ: {sorted(a.discriminators)} vs {sorted(b.discriminators)}"


def overlap(a: NameFeatures, b: NameFeatures) -> Overlap:
    """The overlap of two names' features: Jaccard and what the longer adds, or why there is none."""
    if not a.specific or not b.specific:
        return Overlap(0.0, "no specific content words")
    compatible, narrowing, why = _discriminators(a, b)
    if not compatible:
        return Overlap(0.0, why)
    ca, cb = a.specific & _COURSE, b.specific & _COURSE
    if ca and cb and ca != cb:
        return Overlap(0.0, f"course differs: {sorted(ca)} vs {sorted(cb)}")
    if a.head != b.head:
        return Overlap(0.0, f"head nouns differ: {a.head!r} vs {b.head!r}")
    only_a, only_b = a.specific - b.specific, b.specific - a.specific
    narrows_a = (only_a - _SAME_QUALIFIERS) | (a.discriminators - b.discriminators - _LATERAL)
    narrows_b = (only_b - _SAME_QUALIFIERS) | (b.discriminators - a.discriminators - _LATERAL)
    if (narrows_a and narrows_b) or (only_a and only_b and (narrows_a or narrows_b)):
        # siblings: "simple" vs "hypothalamic obesity", "autoimmune hepatitis" vs "hepatitis B or C"
        return Overlap(0.0, f"both add words: {sorted(only_a ^ only_b)}")
    if a.generic and b.generic and _generic_class(a.generic) != _generic_class(b.generic):
        return Overlap(0.0, f"{'/'.join(sorted(a.generic))} vs {'/'.join(sorted(b.generic))}")
    blocked = (a.specific ^ b.specific) & _OTHER_DISEASE
    if blocked:  # "German measles" is rubella, "diabetes insipidus" is no diabetes mellitus
        return Overlap(0.0, f"{'/'.join(sorted(blocked))!r} makes it another disease")
    added = frozenset((a.specific ^ b.specific) - _SAME_QUALIFIERS) | narrowing
    jaccard = len(a.specific & b.specific) / len(a.specific | b.specific)
    if a.head_specific == b.head_specific:  # "X" vs "X due to Y": the same condition, its cause named
        jaccard = max(jaccard, OVERLAP_MIN_JACCARD)
    floor = OVERLAP_MIN_SUBTYPE_JACCARD if added else OVERLAP_MIN_JACCARD
    if jaccard < floor:
        return Overlap(0.0, f"overlap too small (Jaccard {jaccard:.2f} < {floor})")
    return Overlap(jaccard, "", added)


_COURSE = frozenset(stem(w) for w in ("acute", "chronic", "subacute", "congenital", "acquired"))


def conflict(a: NameFeatures, b: NameFeatures) -> str | None:
    """Why two names cannot be one disease whatever a terminology says: a different course ("acute" vs
    "chronic bronchitis", both EXACT synonyms of one Disease Ontology concept) or incompatible
    discriminators (type 1 vs type 2, left vs right, a negation on one side)."""
    ca, cb = a.specific & _COURSE, b.specific & _COURSE
    if ca and cb and ca != cb:
        return f"course differs: {sorted(ca)} vs {sorted(cb)}"
    compatible, _, why = _discriminators(a, b)
    return None if compatible else why
