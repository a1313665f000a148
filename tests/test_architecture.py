"""The architecture of ARCHITECTURE.md, checked: import-linter's contracts (``[tool.importlinter]`` in
pyproject.toml: layers, independent domains, an engine that knows nothing clinical, reports that only render,
a runtime guard that stands alone, a run lifecycle that reads top-down), the rule that only ``cli/`` exits,
and the sizes that keep the tree readable (a folder past ~15 modules splits by concept)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "clineval"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
MAX_MODULES_PER_FOLDER = 15
MAX_LINES_PER_MODULE = 400


def _lint_imports(src: Path, config: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src), "NO_COLOR": "1"}  # src first: the copy, not the install
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(config), "--no-cache"],
        cwd=src,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_import_contracts_hold() -> None:
    done = _lint_imports(ROOT / "src", ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " 0 broken" in done.stdout


def test_a_domain_importing_another_breaks_a_contract(tmp_path: Path) -> None:
    """The contracts are not vacuous: one import from DDx into tier 1 of CDS, in a copy of the tree, breaks
    the layers (same layer) and the independence of the domains, and the output names the import."""
    shutil.copytree(SRC, tmp_path / "clineval", ignore=shutil.ignore_patterns("__pycache__", "data"))
    formulas = tmp_path / "clineval" / "ddx" / "formulas.py"
    formulas.write_text(formulas.read_text(encoding="utf-8") + "\nimport clineval.cds.guard.checks\n")
    done = _lint_imports(tmp_path, ROOT / "pyproject.toml")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "clineval.ddx.formulas -> clineval.cds.guard.checks" in done.stdout
    assert "Domains are independent" in done.stdout and "BROKEN" in done.stdout


def test_every_package_is_placed_in_a_layer() -> None:
    """``exhaustive = true`` in the layers contract: a new top-level package must be placed in a layer."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    layers = text.split('id = "layers"', 1)[1].split("[[tool.importlinter.contracts]]", 1)[0]
    assert "exhaustive = true" in layers
    packages = {p.name for p in SRC.iterdir() if (p / "__init__.py").exists()}
    named = {part.strip().strip('",') for line in layers.splitlines() for part in line.split("|")}
    assert packages - named == set()


def test_only_cli_exits() -> None:
    for path in SRC.rglob("*.py"):
        if "cli" in path.relative_to(SRC).parts or path.parent.name == "testing":
            continue
        text = path.read_text(encoding="utf-8")
        assert "sys.exit" not in text, f"{path.relative_to(SRC)} calls sys.exit (only cli/ may)"


def test_no_folder_past_fifteen_modules_and_no_module_past_four_hundred_lines() -> None:
    too_many = {
        str(folder.relative_to(SRC)): n
        for folder in [SRC, *(p for p in SRC.rglob("*") if p.is_dir())]
        if (n := sum(1 for m in folder.glob("*.py") if m.name != "__init__.py")) > MAX_MODULES_PER_FOLDER
    }
    assert too_many == {}
    too_long = {
        str(path.relative_to(SRC)): n
        for path in SRC.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES_PER_MODULE
    }
    assert too_long == {}
