"""Diagnosis names normalised, and the curated diagnosis vocabulary (synonym groups, hierarchy edges).

Names: ``name_forms(name)`` gives the normalised forms a name is known by (``name_key`` of each):

1. an explanation after the name is cut ("Endometriosis: Endometriosis Can Cause ...", "Testicular
   Torsion-The Patient'S Presentation ...": text after ": ", " - " or a dash before The/This/While/...);
   a leading hedge is dropped ("Possible NSTEMI", "suspected", "probable", "likely", "presumed");
2. the main form: the name without parentheticals ("acute kidney injury (AKI)" -> "acute kidney injury");
3. a parenthetical at the END of the name is an alias of the whole ("AKI", "(frozen shoulder)") when
   ``clineval.text.names.compositional`` reads it as one: a list of causes ("vascular insufficiency
   (atherosclerosis, arteriosclerosis)") or of examples is not an alias; one in the middle is only
   dropped; an alias is not abbreviation-expanded ("Autism spectrum disorder (ASD)" is no septal defect);
4. alternatives written with "/" ("Bronchospasm / acute asthma exacerbation") are forms each;
5. each form also with the packaged clinical abbreviations expanded (``clineval.text.abbreviations``).

``name_key``: ``match_tokens`` (case, accents, punctuation, possessive 's folded), British spellings made
American, plurals singular ("kidney stones" = "kidney stone") and detached prefixes joined
("pre-eclampsia" = "preeclampsia"; ``clineval.text.names.normalisation``), and a roman numeral after
type/grade/stage/class/degree/phase made arabic ("type II" -> "type 2").
``name_forms`` also adds a form without state words ("COPD exacerbation" -> "copd";
``name_normalisation.state_free``).

Vocabulary files (YAML, see ``docs/ddx/diagnosis_vocabulary.md``)::

    version: 1
    groups:                                  # synonym groups: every member names the same diagnosis
      - [acute kidney injury, AKI, acute renal failure]
    hierarchy:                               # parent: [children]; a child is a subtype of its parent
      acute kidney injury: [contrast-induced nephropathy, acute tubular necrosis]
    distinct:                                # pairs never equivalent, whatever the ontology says
      - [pre-eclampsia, eclampsia]

A name in a hierarchy that is also a member of a group stands for the whole group. A member listed in two
groups of one file, an edge inside one group, or a cycle is an error (``DataFileError`` with file and line).
A user file (``extra_synonyms``) may have ``groups`` and ``hierarchy``; a user group sharing a member
with a packaged group is merged into it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from clineval.core.errors import DataFileError
from clineval.core.helpers.safe_yaml import check_yaml
from clineval.text.abbreviations import expand_tokens
from clineval.text.matching import match_tokens
from clineval.text.names.normalisation import american, join_prefixes, singular, state_free

SYNONYMS_FILE = "diagnosis_synonyms.yaml"
HIERARCHY_FILE = "diagnosis_hierarchy.yaml"

_SPELLING = {
    "oedema": "edema", "anaemia": "anemia", "haemorrhage": "hemorrhage", "haemorrhagic": "hemorrhagic",
    "haematoma": "hematoma", "haemolytic": "hemolytic", "haemothorax": "hemothorax", "tumour": "tumor",
    "oesophageal": "esophageal", "oesophagitis": "esophagitis", "diarrhoea": "diarrhea", "foetal": "fetal",
    "leukaemia": "leukemia", "ischaemia": "ischemia", "ischaemic": "ischemic", "oestrogen": "estrogen",
    "haemochromatosis": "hemochromatosis", "paediatric": "pediatric", "coeliac": "celiac",
    "gonorrhoea": "gonorrhea", "haematuria": "hematuria", "anaesthesia": "anesthesia",
    "septicaemia": "septicemia", "hyperkalaemia": "hyperkalemia", "hypokalaemia": "hypokalemia",
    "hyponatraemia": "hyponatremia", "hypernatraemia": "hypernatremia", "hypoglycaemia": "hypoglycemia",
    "hyperglycaemia": "hyperglycemia", "hypercalcaemia": "hypercalcemia", "hypocalcaemia": "hypocalcemia",
    "sulphonamide": "sulfonamide", "fibre": "fiber", "centre": "center",
}  # fmt: skip
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7", "viii": "8"}
_NUMBERED = frozenset({"type", "grade", "stage", "class", "degree", "phase", "classes", "types"})
_TAIL = re.compile(r"(?::\s|\s[-–—]\s|[-–—](?=(?:The|This|These|Patient|While|Although|Given)\b)).*$", re.S)
_HEDGE = re.compile(r"^\s*(?:possible|probable|suspected|likely|presumed|presumptive|rule out)\s+", re.I)
_PAREN = re.compile(r"\(([^()]*)\)")
_END_PAREN = re.compile(r"\(([^()]*)\)\s*$")


def name_key(text: str) -> str:
    """The normalised key of one diagnosis name (no parenthetical handling, no abbreviation expansion)."""
    tokens = join_prefixes([singular(american(_SPELLING.get(t, t))) for t in match_tokens(text)])
    for i in range(1, len(tokens)):
        if tokens[i] in _ROMAN and tokens[i - 1] in _NUMBERED:
            tokens[i] = _ROMAN[tokens[i]]
    return " ".join(tokens)


def clean_name(text: str) -> str:
    """The name without a trailing explanation and without a leading hedge ("Possible ...")."""
    return _HEDGE.sub("", _TAIL.sub("", text)).strip()


@lru_cache(maxsize=32768)
def name_forms(text: str) -> tuple[str, ...]:
    """The distinct normalised forms of a name, the main form first ("" when the name has none)."""
    from clineval.text.names.compositional import paren_role  # here: compositional imports this module

    cleaned = clean_name(text)
    main = _PAREN.sub(" ", cleaned)
    raw = [main]
    if "/" in main:
        raw += main.split("/")
    end = _END_PAREN.search(cleaned)
    aliases = (
        [] if end is None or paren_role(main, end.group(1)) != "alias" else re.split(r"[,;]", end.group(1))
    )
    forms: list[str] = []
    for item in raw + aliases:
        key = name_key(item)
        if key and key not in forms:
            forms.append(key)
    for key in list(forms):
        stateless = state_free(key)
        if stateless is not None and stateless not in forms:
            forms.append(stateless)
    alias_keys = {name_key(a) for a in aliases} - {forms[0]} if forms else set()
    main_words = set(forms[0].split()) if forms else set()
    for key in list(forms):
        expanded = expand_tokens(key.split())
        if expanded is None or (joined := " ".join(expanded)) in forms:
            continue
        if key in alias_keys and len(main_words) > 1 and not main_words & set(expanded):
            continue  # the inventory sense contradicts the name: "Autism ... (ASD)" is no septal defect
        forms.append(joined)
    return tuple(forms) if forms else ("",)


@dataclass(frozen=True, slots=True)
class _Node:
    """A YAML scalar with its 1-based line."""

    text: str
    line: int


@dataclass
class DiagnosisVocabulary:
    """Synonym groups and hierarchy edges over normalised names; build with ``load_vocabulary``.

    ``version``: the version(s) of the files ("synonyms 1 + hierarchy 1 [+ user]"); ``sha256``: one hash
    over the bytes of every file read, in order, for run provenance; ``files``: (path, version, sha256).
    """

    version: str
    sha256: str
    files: tuple[tuple[str, str, str], ...]
    groups: tuple[tuple[str, ...], ...]
    group_index: dict[str, int]
    ancestors: dict[str, dict[str, int]]
    edge_count: int
    use_terminology: bool = True  # consult the Disease Ontology layer (clineval.text.names.terminology)
    distinct: dict[str, frozenset[str]] = field(default_factory=dict)  # curated: never equivalent
    cache: dict[str, object] = field(default_factory=dict, repr=False, compare=False)

    def group_of(self, key: str) -> int | None:
        """The synonym group of a normalised name, or None."""
        return self.group_index.get(key)

    def node_of(self, key: str) -> str:
        """The hierarchy node of a normalised name: its group ("g:<id>") or the name itself ("n:<key>")."""
        group = self.group_index.get(key)
        return f"g:{group}" if group is not None else f"n:{key}"

    def label(self, node: str) -> str:
        """A readable name of a hierarchy node (a group's first member)."""
        return self.groups[int(node[2:])][0] if node.startswith("g:") else node[2:]

    def members(self) -> Iterator[str]:
        """Every normalised name the vocabulary knows (group members and hierarchy names)."""
        yield from self.group_index
        yield from (n[2:] for n in self.ancestors if n.startswith("n:"))


def _compose(text: str, origin: str) -> yaml.Node | None:
    check_yaml(text, path=origin)  # no aliases, standard tags, bounded depth, no duplicate key: then compose
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise DataFileError(f"invalid YAML: {getattr(exc, 'problem', exc)}", path=origin, line=line) from exc


def _scalar(node: yaml.Node, origin: str, what: str) -> _Node:
    if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
        raise DataFileError(f"{what} must be a non-empty name", path=origin, line=node.start_mark.line + 1)
    return _Node(str(node.value), node.start_mark.line + 1)


def _sequence(node: yaml.Node, origin: str, what: str) -> list[yaml.Node]:
    if not isinstance(node, yaml.SequenceNode):
        raise DataFileError(f"{what} must be a list", path=origin, line=node.start_mark.line + 1)
    return list(node.value)


Parsed = tuple[str, list[list[_Node]], list[tuple[_Node, _Node]], list[tuple[_Node, _Node]]]


def parse_vocabulary_file(text: str, origin: str) -> Parsed:
    """(version, groups, edges (parent, child), distinct pairs) of one vocabulary file's text; errors name
    file and line."""
    root = _compose(text, origin)
    distinct: list[tuple[_Node, _Node]] = []
    if root is None:
        return "0", [], [], distinct
    if not isinstance(root, yaml.MappingNode):
        raise DataFileError("expected a mapping with 'version', 'groups', 'hierarchy'", path=origin, line=1)
    version, groups, edges = "0", [], []
    for key_node, value in root.value:
        key = _scalar(key_node, origin, "a key").text
        if key == "version":
            version = _scalar(value, origin, "version").text
        elif key == "groups":
            for item in _sequence(value, origin, "groups"):
                members = [_scalar(m, origin, "a group member") for m in _sequence(item, origin, "a group")]
                if len(members) < 2:
                    raise DataFileError(
                        "a group needs two names or more",
                        path=origin,
                        line=members[0].line if members else item.start_mark.line + 1,
                    )
                groups.append(members)
        elif key == "hierarchy":
            if not isinstance(value, yaml.MappingNode):
                raise DataFileError(
                    "hierarchy must map a parent to its children", path=origin, line=value.start_mark.line + 1
                )
            for parent_node, children in value.value:
                parent = _scalar(parent_node, origin, "a parent")
                edges += [
                    (parent, _scalar(c, origin, "a child")) for c in _sequence(children, origin, "children")
                ]
        elif key == "distinct":
            for item in _sequence(value, origin, "distinct"):
                pair = [
                    _scalar(m, origin, "a distinct name") for m in _sequence(item, origin, "a distinct pair")
                ]
                if len(pair) != 2:
                    raise DataFileError(
                        "a distinct pair has two names", path=origin, line=item.start_mark.line + 1
                    )
                distinct.append((pair[0], pair[1]))
        elif key != "note":
            raise DataFileError(
                f"unknown key {key!r}",
                path=origin,
                line=key_node.start_mark.line + 1,
                hint="expected version, groups, hierarchy, distinct, note",
            )
    return version, groups, edges, distinct


def _packaged_bytes(name: str) -> bytes:
    return resources.files("clineval.text.names").joinpath("data", name).read_bytes()


def _read(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise DataFileError(f"cannot read vocabulary file: {exc}", path=path) from exc


def diagnosis_vocab_sha256() -> dict[str, str]:
    """sha256 (hex) of the packaged synonyms and hierarchy files, by file name."""
    return {n: hashlib.sha256(_packaged_bytes(n)).hexdigest() for n in (SYNONYMS_FILE, HIERARCHY_FILE)}


def _build(sources: list[tuple[str, bytes]]) -> DiagnosisVocabulary:
    parent: dict[str, str] = {}  # union-find over normalised member names
    shown: dict[str, str] = {}  # normalised -> the spelling first written

    def find(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    versions, files, edges = [], [], []
    distinct: dict[str, set[str]] = {}
    for origin, data in sources:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataFileError(f"not UTF-8: {exc}", path=origin) from exc
        version, file_groups, file_edges, file_distinct = parse_vocabulary_file(text, origin)
        for x, y in file_distinct:
            kx, ky = name_key(x.text), name_key(y.text)
            distinct.setdefault(kx, set()).add(ky)
            distinct.setdefault(ky, set()).add(kx)
        versions.append(f"{Path(origin).name} {version}")
        files.append((origin, version, hashlib.sha256(data).hexdigest()))
        seen_here: dict[str, int] = {}
        for members in file_groups:
            keys = []
            for member in members:
                key = name_key(member.text)
                if not key:
                    raise DataFileError(f"{member.text!r} has no words", path=origin, line=member.line)
                if key in seen_here and seen_here[key] != members[0].line:
                    raise DataFileError(
                        f"{member.text!r} is already in the group at line {seen_here[key]}",
                        path=origin,
                        line=member.line,
                        hint="merge the two groups",
                    )
                seen_here[key] = members[0].line
                shown.setdefault(key, member.text)
                parent.setdefault(key, key)
                keys.append(key)
            for key in keys[1:]:
                parent[find(key)] = find(keys[0])
        edges += [(origin, p, c) for p, c in file_edges]
    roots: dict[str, list[str]] = {}
    for key in parent:
        roots.setdefault(find(key), []).append(key)
    group_list = sorted(roots.values(), key=lambda ks: ks[0])
    group_index = {k: i for i, ks in enumerate(group_list) for k in ks}
    groups = tuple(tuple(shown[k] for k in ks) for ks in group_list)

    def node(key: str) -> str:
        return f"g:{group_index[key]}" if key in group_index else f"n:{key}"

    up: dict[str, set[str]] = {}
    for origin, p, c in edges:
        pn, cn = node(name_key(p.text)), node(name_key(c.text))
        if pn == cn:
            raise DataFileError(
                f"{c.text!r} and {p.text!r} are synonyms, not subtype and type",
                path=origin,
                line=c.line,
                hint="a hierarchy edge is not a synonym",
            )
        up.setdefault(cn, set()).add(pn)
        up.setdefault(pn, set())
    ancestors: dict[str, dict[str, int]] = {}
    for start in up:
        depth: dict[str, int] = {}
        frontier, level = set(up[start]), 1
        while frontier:
            if start in frontier:
                origin, p, c = next(e for e in edges if node(name_key(e[2].text)) == start)
                raise DataFileError(f"hierarchy cycle through {c.text!r}", path=origin, line=c.line)
            new = {n for n in frontier if n not in depth}
            depth.update(dict.fromkeys(new, level))
            frontier = {a for n in new for a in up.get(n, ())}
            level += 1
        ancestors[start] = depth
    combined = hashlib.sha256("".join(f[2] for f in files).encode()).hexdigest()
    return DiagnosisVocabulary(
        version=" + ".join(versions),
        sha256=combined,
        files=tuple(files),
        groups=groups,
        group_index=group_index,
        ancestors=ancestors,
        edge_count=len(edges),
        distinct={k: frozenset(v) for k, v in distinct.items()},
    )


@lru_cache(maxsize=1)
def _packaged() -> DiagnosisVocabulary:
    return _build(
        [(f"clineval/text/names/data/{n}", _packaged_bytes(n)) for n in (SYNONYMS_FILE, HIERARCHY_FILE)]
    )


def load_vocabulary(
    synonyms_path: str | Path | None = None,
    hierarchy_path: str | Path | None = None,
    extra_synonyms: str | Path | None = None,
) -> DiagnosisVocabulary:
    """The packaged vocabulary (built once and cached), or one built from the given files.

    ``synonyms_path`` / ``hierarchy_path`` replace the packaged files; ``extra_synonyms`` is a user file
    (groups and/or hierarchy) read on top. A bad file raises ``DataFileError`` naming the file and line.
    """
    if synonyms_path is None and hierarchy_path is None and extra_synonyms is None:
        return _packaged()
    sources = [
        (str(synonyms_path), _read(synonyms_path))
        if synonyms_path is not None
        else (f"clineval/text/names/data/{SYNONYMS_FILE}", _packaged_bytes(SYNONYMS_FILE)),
        (str(hierarchy_path), _read(hierarchy_path))
        if hierarchy_path is not None
        else (f"clineval/text/names/data/{HIERARCHY_FILE}", _packaged_bytes(HIERARCHY_FILE)),
    ]
    if extra_synonyms is not None:
        sources.append((str(extra_synonyms), _read(extra_synonyms)))
    return _build(sources)
