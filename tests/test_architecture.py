"""The pure layers never import the edge layers (ARCHITECTURE.md, 'dependencies point inward only')."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "clineval"

ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "text": {"core", "text"},
    "mcq": {"core", "text", "metrics", "mcq"},
    "ddx": {"core", "text", "metrics", "datasets", "systems", "ddx"},
    # Departure from ARCHITECTURE.md: a scorer declares how its scores aggregate (inspect_ai's
    # @scorer(metrics=[...])), so scoring imports metrics; metrics imports only core, so there is no cycle.
    "scoring": {"core", "text", "metrics", "scoring"},
    "cds": {"core", "text", "metrics", "datasets", "systems", "cds"},
    "judging": {"core", "text", "metrics", "datasets", "systems", "judging"},
    "quality": {"core", "text", "metrics", "quality"},
    "metrics": {"core", "metrics"},
    "analysis": {"core", "metrics", "analysis"},
    # counterfactual fairness (issue 27): statistics and rule-based rewriting, at the analysis level
    "counterfactual": {"core", "text", "metrics", "analysis", "counterfactual"},
    "runner": {"core", "text", "scoring", "metrics", "analysis", "runner"},
    "systems": {"core", "systems"},
    "datasets": {"core", "datasets"},
    "store": {"core", "store"},
    "report": {"core", "report"},
    "runs": {
        "core",
        "text",
        "metrics",
        "analysis",
        "config",
        "datasets",
        "systems",
        "runner",
        "store",
        "report",
        "scoring",
        "counterfactual",
        "runs",
        "",
    },
    "releases": {"core", "metrics", "analysis", "store", "runs", "releases"},
}


def _clineval_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names = (
            [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else ([node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        )
        for name in names:
            parts = name.split(".")
            if parts[0] == "clineval":
                found.add(parts[1] if len(parts) > 1 else "")
    return found


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_inward(layer: str) -> None:
    folder = SRC / layer
    assert folder.is_dir(), f"layer {layer} is missing"
    for path in folder.rglob("*.py"):
        bad = _clineval_imports(path) - ALLOWED[layer]
        assert not bad, f"{path.relative_to(SRC)} imports clineval.{sorted(bad)} (layer {layer})"


def test_only_cli_exits() -> None:
    for path in SRC.rglob("*.py"):
        if path.parent.name == "cli" or path.parent.name == "testing":
            continue
        text = path.read_text(encoding="utf-8")
        assert "sys.exit" not in text, f"{path.relative_to(SRC)} calls sys.exit (only cli/ may)"
