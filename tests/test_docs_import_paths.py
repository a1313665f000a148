"""Every import path the README and docs/ write resolves (issue 24 item 4): ``from clineval.x import y`` and
dotted names such as ``clineval.cds.guard.check``. Old paths kept for one release resolve through their alias
(``clineval.core.helpers.moved``); the docs themselves name the new paths, so none of them warns."""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "clineval"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FROM_IMPORT = re.compile(r"from (clineval(?:\.\w+)*) import \(?([\w, ]+)\)?")
DOTTED = re.compile(r"\bclineval(?:\.[A-Za-z_]\w*)+")
TOP = {p.stem for p in SRC.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}


def _references() -> list[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        where = str(page.relative_to(ROOT))
        for m in FROM_IMPORT.finditer(text):
            found.update((f"{m.group(1)}:{name}", where) for name in re.split(r"[,\s]+", m.group(2)) if name)
        for m in DOTTED.finditer(text):
            if m.group(0).split(".")[1] in TOP:  # not a file name such as clineval.db
                found.add((m.group(0), where))
    return sorted(found)


def _resolve(reference: str) -> object:
    if ":" in reference:  # from MODULE import NAME: an attribute, else a submodule
        module_name, name = reference.split(":")
        module = importlib.import_module(module_name)
        try:
            return getattr(module, name)
        except AttributeError:
            return importlib.import_module(f"{module_name}.{name}")
    parts = reference.split(".")
    for i in range(len(parts), 1, -1):  # the longest importable prefix, then attributes
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = (
                getattr(obj, attr)
                if not isinstance(obj, ModuleType) or hasattr(obj, attr)
                else (importlib.import_module(f"{obj.__name__}.{attr}"))
            )
        return obj
    raise ModuleNotFoundError(reference)


REFERENCES = _references()


def test_the_docs_name_import_paths() -> None:
    assert len(REFERENCES) > 100  # the scan finds the docs' paths (a broken pattern would find none)


@pytest.mark.parametrize(("reference", "page"), REFERENCES)
def test_a_documented_path_resolves_without_warning(reference: str, page: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        assert _resolve(reference) is not None, f"{page}: {reference}"
