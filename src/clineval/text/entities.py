"""Clinical entities in free text, by category: diagnoses, medications, procedures, labs/findings.

Dictionary based. A text is tokenised (``match_tokens`` rules, with character offsets kept), each token
Snowball-stemmed, and the longest vocabulary phrase starting at each token is taken (greedy, left to
right, no overlaps): a dictionary probe on the first stem, then one lookup of the stem tuple per
candidate length. No regular expression per term, so the cost is a few dictionary probes per token.

Vocabularies (``EntityVocabulary.sources`` lists them; the first to claim a phrase keeps it):

1. diagnoses: every form (``diagnosis_vocab.name_forms``: parentheticals, "/" alternatives, expanded
   abbreviations) of every name of the curated diagnosis vocabulary; a synonym group's key is the
   normalised name of its first member ("AKI" and "acute renal failure" -> ``acute kidney injury``);
2. labs_findings: ``data/entity_labs_findings.txt`` (lab tests, examination findings, symptoms);
3. procedures: ``data/entity_procedures.txt`` (imaging, endoscopy, cardiology, surgery, bedside);
4. medications: ``data/entity_medications.txt`` (drug classes and therapies);
5. diagnoses: ``data/entity_diseases.txt`` (DDXPlus condition names and Open-XDDx expert differentials);
6. medications: the drug names of the ``drug-named-entity-recognition`` package (MIT; DrugBank CC0, MeSH,
   MedlinePlus, NHS data shipped in its wheel) restricted to entries linked to DrugBank, MedlinePlus or the
   NHS (its MeSH-only entries are proteins and reagents), minus ``data/entity_drug_denylist.txt`` (variants
   whose stem is another common English word's: "Prominal" ~ "prominent") and variants under 4 characters;
   the key is the drug's canonical name, so brand names and synonyms share it ("Tylenol" ->
   ``acetaminophen``). Read from the wheel's data file (bz2 pickle), offline.
7. every packaged clinical abbreviation whose expansion is one of the phrases above ("afib").

In the ``.txt`` files a line is ``canonical | synonym | ...``; the normalised canonical name is the key.
Single-token phrases that are stop words or shorter than two letters are never entered.

Negation: ``extract_entities(text, negation=...)`` takes a detector that, given the tokens of one sentence,
says whether a token span is negated (``clineval.quality.clinical_accuracy`` passes the project's
ConText detector; the text layer cannot import it). Without one, nothing is marked negated.
"""

from __future__ import annotations

import bisect
import bz2
import hashlib
import importlib.util
import pickle
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal, TypeAlias

from clineval.text.abbreviations import load_abbreviations
from clineval.text.matching import match_tokens
from clineval.text.names.diagnosis_vocab import (
    _NUMBERED,
    _ROMAN,
    _SPELLING,
    load_vocabulary,
    name_forms,
    name_key,
)
from clineval.text.stemming import stem_all
from clineval.text.stopwords import STOP_WORDS

Category: TypeAlias = Literal["diagnoses", "medications", "procedures", "labs_findings"]
CATEGORIES: tuple[Category, ...] = ("diagnoses", "medications", "procedures", "labs_findings")
SpanNegation: TypeAlias = Callable[[int, int], "str | None"]
NegationDetector: TypeAlias = Callable[[Sequence[str]], SpanNegation]
"""Given one sentence's tokens, a function (start, end) -> the negating trigger, or None."""

DRUG_PACKAGE = "drug_named_entity_recognition"
_DRUG_DATA = "drug_ner_dictionary.pkl.bz2"
_DRUG_LINKED = ("drugbank_id", "medline_plus_id", "nhs_url")
_DRUG_DENY = frozenset({"beta-2", "gaba", "acth", "citrate", "sits"})  # other senses in clinical text
_TOKEN = re.compile(r"[^\W\d_][^\W_]*|\d+(?:\.\d+)?")
_ACCENTS = re.compile("[\u0300-\u036f]")
_CLITICS = frozenset({"s", "re", "ll", "ve", "d", "m"})
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|\n+")
# one-word names of these categories must match as written (or plural), not by stem: "vaginal" has the
# stem of "vaginitis", "prominent" that of the brand "Prominal"
_PAREN = re.compile(r"\([^()]*\)")
_EXACT: frozenset[str] = frozenset({"diagnoses", "medications"})
_ABBREVIATION_ALIAS = re.compile(r"\(([A-Z][A-Za-z0-9-]*[A-Z0-9])\)\s*$")


@dataclass(frozen=True, slots=True)
class Entity:
    """One mention: category, the text as written, its character span, the concept key, negated or not."""

    category: Category
    text: str
    start: int
    end: int
    key: str
    negated: bool = False


def _fold(word: str) -> str:
    if word.isascii():
        return word.lower()
    return _ACCENTS.sub("", unicodedata.normalize("NFKD", word)).casefold()


def tokenize(text: str) -> tuple[list[str], list[int], list[int]]:
    """(folded words, start offsets, end offsets): ``match_tokens`` tokens with their character spans.

    Contractions: a clitic after an apostrophe ('s, 're, ...) is dropped, and "n't" gives the word "not"."""
    words: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _TOKEN.finditer(text):
        word, start = _fold(m.group()), m.start()
        if start and text[start - 1] in "'’":
            if word in _CLITICS:
                continue
            if word == "t" and words and words[-1].endswith("n"):
                word = "not"
        elif word in _ROMAN and words and words[-1] in _NUMBERED:
            word = _ROMAN[word]
        words.append(_SPELLING.get(word, word))
        starts.append(start)
        ends.append(m.end())
    return words, starts, ends


def _phrase(text: str) -> tuple[str, ...]:
    words = [_SPELLING.get(w, w) for w in match_tokens(text)]
    return tuple(stem_all(words))


@dataclass
class EntityVocabulary:
    """Stemmed phrases -> (category, key), with the first stem of each phrase -> its longest length."""

    phrases: dict[tuple[str, ...], tuple[Category, str]] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)
    exact: dict[str, frozenset[str]] = field(default_factory=dict)  # one-word phrase stem -> words allowed
    sources: list[str] = field(default_factory=list)
    hashed: list[bytes] = field(default_factory=list, repr=False)

    def add(self, surface: str, category: Category, key: str) -> bool:
        """Enter one surface form; False when it is empty, a stop word, or already claimed."""
        stems = _phrase(surface)
        if not stems or (len(stems) == 1 and (stems[0] in STOP_WORDS or len(stems[0]) < 2)):
            return False
        if all(s.replace(".", "").isdigit() for s in stems):
            return False
        claimed = self.phrases.get(stems)
        if claimed is not None and claimed != (category, key):
            return False
        if len(stems) == 1 and category in _EXACT:  # every spelling of the same concept is allowed
            word = _SPELLING.get(w := _fold(surface.strip()), w)
            self.exact[stems[0]] = self.exact.get(stems[0], frozenset()) | {word, word + "s", word + "es"}
        if claimed is not None:
            return False
        self.phrases[stems] = (category, key)
        if len(stems) > self.first.get(stems[0], 0):
            self.first[stems[0]] = len(stems)
        return True

    def add_lines(self, text: str, category: Category, origin: str) -> None:
        """Enter a ``canonical | synonym | ...`` file (``#`` comments)."""
        self.sources.append(origin)
        self.hashed.append(text.encode())
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            names = [n for n in (_PAREN.sub(" ", n).strip() for n in line.split("|")) if n]
            key = name_key(names[0])
            for name in names:
                self.add(name, category, key)

    def sizes(self) -> dict[str, dict[str, int]]:
        """Per category: distinct concept keys and surface phrases."""
        out: dict[str, dict[str, int]] = {c: {"concepts": 0, "phrases": 0} for c in CATEGORIES}
        keys: dict[str, set[str]] = {c: set() for c in CATEGORIES}
        for category, key in self.phrases.values():
            keys[category].add(key)
            out[category]["phrases"] += 1
        for c in CATEGORIES:
            out[c]["concepts"] = len(keys[c])
        return out

    @property
    def sha256(self) -> str:
        """sha256 over the files' text (and the diagnosis vocabulary's hash), for run provenance."""
        return hashlib.sha256(b"\0".join(self.hashed)).hexdigest()


def _diagnosis_forms(name: str) -> list[str]:
    """The main form of a diagnosis name and an abbreviation in parentheses at its end ("(AKI)"). Not its
    abbreviation expansions (step 7 adds abbreviations; "TTP" must not become "tenderness to palpation")."""
    forms = [name_forms(name)[0]]
    alias = _ABBREVIATION_ALIAS.search(name)
    if alias is not None:
        forms.append(name_key(alias.group(1)))
    return forms


def _data(name: str) -> str:
    return resources.files("clineval.text").joinpath("data", name).read_text(encoding="utf-8")


def drug_names() -> Iterable[tuple[str, str]]:
    """(variant, canonical name) of the drug package's DrugBank/MedlinePlus/NHS-linked entries; none if
    the package is not installed. Its data file is read directly (its module would load it again)."""
    spec = importlib.util.find_spec(DRUG_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return []
    path = Path(next(iter(spec.submodule_search_locations))) / _DRUG_DATA
    with bz2.open(path, "rb") as handle:
        data = pickle.load(handle)  # the installed package's own data file
    canonical: dict[str, dict[str, object]] = data["drug_canonical_to_data"]
    deny = _DRUG_DENY | {
        ln for ln in _data("entity_drug_denylist.txt").splitlines() if not ln.startswith("#")
    }
    pairs: list[tuple[str, str]] = []
    for variant, names in sorted(data["drug_variant_to_canonical"].items()):
        linked = [n for n in names if any(k in canonical.get(n, {}) for k in _DRUG_LINKED)]
        if linked and variant not in deny and len(variant) >= 4:
            pairs.append((variant, str(canonical[linked[0]].get("name") or linked[0])))
    return pairs


def build_vocabulary(
    *, drugs: bool = True, extra_files: Sequence[tuple[str | Path, Category]] = ()
) -> EntityVocabulary:
    """The entity vocabulary from the packaged sources (module docstring), plus user ``extra_files``
    (``canonical | synonym`` lines, entered after the packaged curated files, before the generated ones)."""
    vocab = EntityVocabulary()
    dx = load_vocabulary()
    vocab.sources.append(f"diagnosis vocabulary ({dx.version})")
    vocab.hashed.append(dx.sha256.encode())
    for group in dx.groups:
        key = name_forms(group[0])[0]
        for member in group:
            for form in _diagnosis_forms(member):
                vocab.add(form, "diagnoses", key)
    for member in dx.members():
        for form in _diagnosis_forms(member):
            vocab.add(form, "diagnoses", name_forms(member)[0])
    vocab.add_lines(_data("entity_labs_findings.txt"), "labs_findings", "entity_labs_findings.txt")
    vocab.add_lines(_data("entity_procedures.txt"), "procedures", "entity_procedures.txt")
    vocab.add_lines(_data("entity_medications.txt"), "medications", "entity_medications.txt")
    for path, category in extra_files:
        vocab.add_lines(Path(path).read_text(encoding="utf-8"), category, str(path))
    diseases = _data("entity_diseases.txt")
    vocab.add_lines(diseases, "diagnoses", "entity_diseases.txt")
    if drugs:
        pairs = list(drug_names())
        if pairs:
            vocab.sources.append(f"{DRUG_PACKAGE} ({len(pairs)} linked variants)")
            for variant, name in pairs:
                vocab.add(variant, "medications", name_key(name))
    table = load_abbreviations()
    vocab.sources.append("abbreviations.tsv")
    for abbreviation, expansion in sorted(table.items()):
        hit = vocab.phrases.get(_phrase(expansion))
        if hit is not None:
            vocab.add(abbreviation, *hit)
    return vocab


@lru_cache(maxsize=1)
def default_vocabulary() -> EntityVocabulary:
    """The packaged vocabulary, built once (about a second, most of it reading the drug package)."""
    return build_vocabulary()


def extract_entities(
    text: str, *, negation: NegationDetector | None = None, vocabulary: EntityVocabulary | None = None
) -> list[Entity]:
    """The entities ``text`` names, in order: longest phrase first at each token, no overlaps.

    ``negation``: a sentence-level detector (see module docstring); None marks nothing negated."""
    vocab = vocabulary or default_vocabulary()
    words, starts, ends = tokenize(text)
    stems = stem_all(words)
    first, phrases, exact = vocab.first, vocab.phrases, vocab.exact
    n = len(stems)
    found: list[tuple[int, int, Category, str]] = []
    i = 0
    while i < n:
        longest = first.get(stems[i])
        if longest is not None:
            for length in range(min(longest, n - i), 0, -1):
                hit = phrases.get(tuple(stems[i : i + length]))
                if hit is not None and (length > 1 or words[i] in exact.get(stems[i], (words[i],))):
                    found.append((i, i + length, hit[0], hit[1]))
                    i += length
                    break
            else:
                i += 1
        else:
            i += 1
    if not found:
        return []
    negated = _negations(text, words, starts, found, negation) if negation is not None else {}
    return [
        Entity(cat, text[starts[s] : ends[e - 1]], starts[s], ends[e - 1], key, negated.get(s, False))
        for s, e, cat, key in found
    ]


def _negations(
    text: str,
    words: Sequence[str],
    starts: Sequence[int],
    found: Sequence[tuple[int, int, Category, str]],
    negation: NegationDetector,
) -> dict[int, bool]:
    """Token start of each entity -> negated, the detector run once per sentence holding entities."""
    boundaries = [m.start() for m in _SENTENCE_END.finditer(text)]
    sentence_of = [bisect.bisect_right(boundaries, starts[s]) for s, *_ in found]
    out: dict[int, bool] = {}
    cache: dict[int, tuple[int, SpanNegation]] = {}
    for (s, e, *_), sid in zip(found, sentence_of, strict=True):
        if sid not in cache:
            lo = 0 if sid == 0 else boundaries[sid - 1]
            hi = boundaries[sid] if sid < len(boundaries) else len(text)
            first_token = bisect.bisect_left(starts, lo)
            last_token = bisect.bisect_left(starts, hi)
            cache[sid] = (first_token, negation(words[first_token:last_token]))
        offset, detector = cache[sid]
        out[s] = detector(s - offset, e - offset) is not None
    return out


def entity_sets(
    text: str, *, negation: NegationDetector | None = None, vocabulary: EntityVocabulary | None = None
) -> dict[Category, set[str]]:
    """Category -> the concept keys ``text`` claims (non-negated entities only); every category present."""
    sets: dict[Category, set[str]] = {c: set() for c in CATEGORIES}
    for entity in extract_entities(text, negation=negation, vocabulary=vocabulary):
        if not entity.negated:
            sets[entity.category].add(entity.key)
    return sets
