"""What a run records about where it came from: versions, spec hashes, sampling, platform.

Packaged data is hashed only when the suite uses it (the question-type rules: by the ``question_type``
annotator or the ``cds_report`` scorer), from the file's bytes, cached by (path, mtime, size): provenance
never parses a rules file (that cost half a second on every run).
"""

from __future__ import annotations

import hashlib
import platform
import sys
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from clineval.core import SuiteSpec
from clineval.text.abbreviations import ABBREVIATIONS_SHA256, ABBREVIATIONS_VERSION

_PACKAGES = ("clineval", "pydantic", "aiohttp", "SQLAlchemy", "scipy", "numpy", "rapidfuzz", "PyStemmer")


def _version(name: str) -> str | None:
    """``metadata.version(name)``, read from the header block of the distribution's metadata file only:
    ``version`` parses the whole file as an e-mail message (numpy's and scipy's carry their long
    descriptions), 13 ms of every run's start for these eight packages; this reads them in ~3 ms."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    for line in text.partition("\n\n")[0].splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == "version":
            return value.strip()
    return dist.version  # no Version header in the first block: whatever the parser makes of the file


# Components (kind, type) that classify questions with the packaged question-type rules.
_USES_QUESTION_RULES = {("annotator", "question_type"), ("scorer", "cds_report")}
_HASHES: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """sha256 (hex) of a file's bytes, remembered per (path, mtime, size) for the life of the process."""
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _HASHES:
        _HASHES[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return _HASHES[key]


def _packaged_rules_sha256() -> str:
    return _packaged_sha256("clineval.mcq", "data/question_type_rules.yaml")


def uses_question_rules(spec: SuiteSpec) -> bool:
    """Whether any task classifies questions (and so depends on the packaged question-type rules)."""
    parts = [("annotator", a.type) for t in spec.tasks for a in t.annotators]
    parts += [("scorer", s.type) for t in spec.tasks for s in t.scorers]
    return not _USES_QUESTION_RULES.isdisjoint(parts)


# Scorer type -> the packaged data files its decisions read beyond its options (package, path in it).
_SCORER_DATA: dict[str, tuple[tuple[str, str], ...]] = {
    "ddx": (
        ("clineval.ddx", "data/tm_sm_actions.yaml"),  # TM-SM: action -> condition/finding map
        ("clineval.text.names", "data/finding_names.tsv"),  # symptoms never resolved to a disease concept
        ("clineval.text.names", "data/terminology/disease_terminology.tsv.gz"),  # DO + NCIt (issue 25)
        ("clineval.text.names", "data/lay_names.tsv"),  # cited lay names
        ("clineval.text.names", "data/drug_names.tsv"),  # INN / BAN / USAN drug names
    ),
}


def _packaged_sha256(package: str, path: str) -> str:
    ref = resources.files(package).joinpath(*path.split("/"))
    if isinstance(ref, Path):
        return file_sha256(ref)
    return hashlib.sha256(ref.read_bytes()).hexdigest()  # a zipped install: no mtime to key a cache on


def vocabularies(spec: SuiteSpec | None = None) -> dict[str, str]:
    """Hashes of the packaged data that matching and classification depend on (for ``spec``: only what
    its tasks use; ``None``: all of it)."""
    found = {"abbreviations": f"v{ABBREVIATIONS_VERSION}:{ABBREVIATIONS_SHA256}"}
    if spec is None or uses_question_rules(spec):
        found["question_type_rules"] = _packaged_rules_sha256()
    used = {s.type for t in spec.tasks for s in t.scorers} if spec is not None else set(_SCORER_DATA)
    for scorer in sorted(used & set(_SCORER_DATA)):
        for package, path in _SCORER_DATA[scorer]:
            found[path.rsplit("/", 1)[-1]] = _packaged_sha256(package, path)
    return found


def effective_options(scorer: object) -> dict[str, Any]:
    """A scorer's options with defaults filled in (e.g. which interval ``accuracy_ci`` is)."""
    options = getattr(scorer, "options", None)
    return options.model_dump(mode="json") if isinstance(options, BaseModel) else {}


def provenance(
    spec: SuiteSpec, task_sizes: dict[str, int], scorer_options: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    return {
        "suite_hash": spec.spec_hash,
        "suite_source": spec.source,
        "limit": spec.limit,
        "seed": spec.seed,
        "task_sizes": task_sizes,
        "tasks": {
            t.id: {
                "task_hash": t.spec_hash,
                "dataset": {"format": t.dataset.type, "content_hash": t.dataset.content_hash},
                "system": {
                    "type": t.system.type,
                    "spec_hash": t.system.spec_hash,
                    "content_hash": t.system.content_hash,
                },
                "annotators": [a.model_dump(mode="json") for a in t.annotators],
                "selection": t.selection.model_dump(mode="json") if t.selection else None,
                "judge": t.judge.model_dump(mode="json") if t.judge else None,
                "scorers": [
                    {"type": s.type, "options": opts}
                    for s, opts in zip(t.scorers, scorer_options.get(t.id, []), strict=False)
                ],
            }
            for t in spec.tasks
        },
        "vocabularies": vocabularies(spec),
        "versions": {name: _version(name) for name in _PACKAGES},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }
