"""Diagnosis names as patients and wards say them (issue 25): lay names, drug names across countries, and
qualifiers that do not change the disease. Each adds *forms* to a name (``clineval.text.names.resolution``),
with the reason, so that every tier of ``clineval.text.names.equivalence`` reads the name through them.

* **Lay names** (``data/lay_names.tsv``, each with a cited public source): the whole name is an alias of its
  clinical name ("lockjaw" -> "tetanus", "stomach flu" -> "gastroenteritis", never influenza). Names marked
  context ``diagnosis`` (mono, sugar, cold ...) are used here, because equivalence compares diagnosis names;
  they are never offered for free-text search (``search_names``). Two-letter abbreviations ("MS", "ME") are
  left to
  ``clineval.text.names.acronyms`` (read by context).
* **Drug names** (``data/drug_names.tsv``, INN / BAN / USAN): every name of one substance is rewritten to one
  representative ("paracetamol overdose" -> "acetaminophen overdose"); and for a drug or a toxin of
  ``TOXINS``, "overdose", "poisoning" and "intoxication" read as "toxicity" (one acute presentation; guide).
* **Qualifiers** (``QUALIFIERS``, closed rules, each tested with the cases where the qualifier does change the
  disease): a rate state of atrial fibrillation or flutter ("AF with RVR"), "of the liver" after cirrhosis,
  "pectoris" after angina, "valve" in a named valve lesion, "urinary" in stress urinary incontinence.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from clineval.text.names.diagnosis_vocab import name_forms, name_key

LAY_FILE, DRUG_FILE = "lay_names.tsv", "drug_names.tsv"
TOXINS = frozenset(
    "acetaminophen aspirin salicylate digoxin digitalis lithium iron carbon monoxide lead opioid opiate "
    "benzodiazepine methanol ethylene glycol organophosphate cyanide theophylline tricyclic antidepressant "
    "beta blocker calcium channel blocker insulin sulfonylurea anticholinergic".split()
)
_TOX = re.compile(r"^(?P<agent>.+?)\s+(?:overdose|poisoning|intoxication|toxicity|toxic effect)$")
_AF = r"(?P<h>atrial fibrillation|af|afib|atrial flutter)"
_RATE = (
    r"(?:(?:a\s+)?(?:rapid|fast|slow|controlled|uncontrolled) ventricular (?:response|rate)|rvr|"
    r"controlled rate|rate controlled|\d\s*\d? ?(?:block|conduction)|variable (?:block|conduction))"
)
# (pattern on a name key, replacement template, the rule's name): see the module docstring.
QUALIFIERS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(rf"^{_AF}\s+(?:with\s+)?{_RATE}$"), r"\g<h>", "a rate state of the arrhythmia"),
    (
        re.compile(rf"^(?:rapid ventricular response|rvr)\s+(?:due to|secondary to|from|in)\s+{_AF}$"),
        r"\g<h>",
        "RVR of",
    ),
    (re.compile(r"^(?:fast|uncontrolled|rapid)\s+(?P<h>af|atrial fibrillation)$"), r"\g<h>", "fast AF"),
    (re.compile(r"^cirrhosis of (?:the )?liver$|^(?:liver|hepatic) cirrhosis$"), "cirrhosis", "of the liver"),
    (re.compile(r"^(?P<pre>.*\b)?angina pectoris(?P<post>\b.*)?$"), r"\g<pre>angina\g<post>", "pectoris"),
    (
        re.compile(
            r"^(?P<v>aortic|mitral|tricuspid|pulmonary|pulmonic) valve (?P<l>stenosis|regurgitation|"
            r"insufficiency|prolapse|atresia)$"
        ),
        r"\g<v> \g<l>",
        "valve",
    ),
    (re.compile(r"^stress urinary incontinence$"), "stress incontinence", "urinary"),
)


@dataclass(frozen=True, slots=True)
class LayName:
    name: str
    clinical: str
    context: str  # "any" or "diagnosis"
    source: str  # "NHS conditions page https://..."


def _rows(filename: str) -> list[dict[str, str]]:
    text = (resources.files("clineval.text.names") / "data" / filename).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))


@lru_cache(maxsize=1)
def lay_index() -> dict[str, LayName]:
    """name key of a lay name -> its entry (the first row wins for a lay name listed twice)."""
    found: dict[str, LayName] = {}
    for row in _rows(LAY_FILE):
        if len(row["lay_name"]) <= 2 and row["lay_name"].isupper():
            continue  # "MS", "ME": read by context (clineval.text.names.acronyms), as the guide asks
        entry = LayName(
            row["lay_name"], row["clinical_name"], row["context"], f"{row['source']} {row['source_url']}"
        )
        found.setdefault(name_key(entry.name), entry)
    return found


@lru_cache(maxsize=1)
def drug_map() -> tuple[re.Pattern[str], dict[str, str]]:
    """(a pattern matching any drug name as whole words, name key -> representative of its substance)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for row in _rows(DRUG_FILE):
        a, b = find(name_key(row["name_a"])), find(name_key(row["name_b"]))
        if a != b:
            parent[max(a, b)] = min(a, b)
    rep = {name: find(name) for name in parent}
    rep = {name: r for name, r in rep.items() if name != r}
    words = sorted(rep, key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b"), rep


def _drug_form(key: str) -> str | None:
    pattern, rep = drug_map()
    new = pattern.sub(lambda m: rep[m.group(0)], key)
    match = _TOX.match(new)
    if match and (match.group("agent") in TOXINS or match.group("agent") in set(rep.values()) | set(rep)):
        new = f"{match.group('agent')} toxicity"
    return new if new != key else None


# Every word a qualifier rule (QUALIFIERS) needs: a name with none of them skips the patterns.
_QUALIFIER_WORDS = frozenset(
    "af afib atrial fibrillation flutter rvr ventricular response rate cirrhosis liver hepatic angina "
    "pectoris valve stress urinary".split()
)


@lru_cache(maxsize=1)
def _drug_words() -> frozenset[str]:
    """Every word of a drug name, a toxin or an overdose word: a name with none of them has no drug form."""
    _, rep = drug_map()
    names = [*rep, *rep.values(), *TOXINS, "overdose poisoning intoxication toxicity toxic"]
    return frozenset(w for n in names for w in n.split())


@lru_cache(maxsize=65536)
def extra_forms(forms: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(form, reason) added to a name's normalised forms: its lay name's clinical name, a drug name
    rewritten, a qualifier dropped. Empty for most names."""
    added: dict[str, str] = {}
    for key in forms:
        lay = lay_index().get(key)
        if lay is not None:
            for form in name_forms(lay.clinical):
                added.setdefault(form, f"lay name {lay.name!r} = {lay.clinical!r} ({lay.source})")
        words = set(key.split())
        if not words & _QUALIFIER_WORDS and not words & _drug_words():
            continue
        for pattern, template, rule in QUALIFIERS:
            if pattern.match(key):
                added.setdefault(" ".join(pattern.sub(template, key).split()), f"qualifier rule {rule!r}")
        drug = _drug_form(key)
        if drug is not None:
            added.setdefault(drug, "drug name across countries (INN/BAN/USAN) or overdose = toxicity")
    return tuple((f, why) for f, why in added.items() if f and f not in forms)


def search_names(names: Iterable[str]) -> tuple[str, ...]:
    """Lay names usable in free text for these clinical names (context ``any`` only)."""
    keys = {name_key(n) for n in names}
    return tuple(e.name for e in lay_index().values() if e.context == "any" and name_key(e.clinical) in keys)
