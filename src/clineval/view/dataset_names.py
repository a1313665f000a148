"""What to call a task's dataset on the leaderboard: its catalogue title, else its format and file stem.

A dataset spec is the packaged benchmark ``entry`` of the catalogue (``clineval.catalogue.entries``) when
its format is the entry's, its ``path`` ends with the entry's path (wherever the data folder is), its other
file options end with the entry's files, and it sets every option the entry sets (``contexts: false`` for
PubMedQA*); or, for a Hugging Face source, when ``hf``, ``name`` and ``split`` are the entry's. The entry
setting the most options wins (PubMedQA* over PubMedQA for ``contexts: false``).

Otherwise: ``<format>: <file stem>`` (``medqa: medqa_test_first200``), with the split when the spec names one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from clineval.catalogue.entries import CATALOGUE, CatalogueEntry
from clineval.core import ComponentSpec


def _ends_with(value: Any, relative: str) -> bool:
    if not isinstance(value, str) or not value:
        return False
    tail = PurePath(relative).parts
    return PurePath(value.replace("\\", "/")).parts[-len(tail) :] == tail


def _matches(entry: CatalogueEntry, args: Mapping[str, Any]) -> bool:
    if any(args.get(k, _MISSING) != v for k, v in entry.dataset_options.items()):
        return False
    if entry.paths and isinstance(args.get("path"), str):
        return all(_ends_with(args.get(k), rel) for k, rel in entry.paths.items() if k in args or k == "path")
    hf = entry.hf or {}
    return bool(hf) and all(args.get(k) == v for k, v in hf.items())


_MISSING = object()


def catalogue_entry(spec: ComponentSpec) -> CatalogueEntry | None:
    """The catalogue entry the dataset spec loads (see the module docstring), or None."""
    found = [e for e in CATALOGUE.values() if e.dataset_format == spec.type and _matches(e, spec.args)]
    return max(found, key=lambda e: len(e.dataset_options), default=None)


def dataset_name(spec: ComponentSpec) -> str:
    """The catalogue title, else ``<format>: <file stem>`` (plus ``, <split>`` when the spec has one)."""
    entry = catalogue_entry(spec)
    if entry is not None:
        return entry.title
    path = spec.args.get("path")
    source = spec.args.get("hf") or spec.args.get("name")
    stem = PurePath(path).stem if isinstance(path, str) and path else str(source or "")
    split = spec.args.get("split")
    name = f"{spec.type}: {stem}" if stem else spec.type
    return f"{name}, {split}" if isinstance(split, str) and split else name
