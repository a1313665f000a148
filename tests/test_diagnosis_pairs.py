"""Integrity of the hand-labelled diagnosis pairs and a smoke run of their measurement script.

No agreement thresholds are asserted here: the equivalence code is being changed; the script reports them.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAIRS_DIR = ROOT / "data" / "diagnosis_pairs"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "eval_diagnosis_pairs", ROOT / "scripts" / "eval_diagnosis_pairs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


script = _load_script()


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    loaded: list[dict[str, str]] = script.load_pairs(PAIRS_DIR / "pairs_v1.tsv")
    return loaded


def test_columns_and_values(rows: list[dict[str, str]]) -> None:
    header = (PAIRS_DIR / "pairs_v1.tsv").read_text(encoding="utf-8").splitlines()[0].split("\t")
    assert tuple(header) == script.COLUMNS
    assert len(rows) >= 400
    for row in rows:
        assert None not in row and all(row[c] is not None for c in script.COLUMNS), row
        assert row["label"] in script.LABELS, row
        assert row["origin"] in script.ORIGINS, row
        assert row["name_a"].strip() and row["name_b"].strip(), row


def test_ids_unique_no_duplicates_no_identical(rows: list[dict[str, str]]) -> None:
    assert len({r["id"] for r in rows}) == len(rows)
    pairs = [frozenset((r["name_a"], r["name_b"])) for r in rows]
    assert all(len(p) == 2 for p in pairs), "a pair of identical strings"
    duplicates = [p for p, n in Counter(pairs).items() if n > 1]
    assert not duplicates


def test_added_share_and_docs(rows: list[dict[str, str]]) -> None:
    assert sum(r["origin"] == "added" for r in rows) <= 0.15 * len(rows)
    assert (PAIRS_DIR / "LABELLING_GUIDE.md").is_file()
    assert (PAIRS_DIR / "SOURCE.md").is_file()


def test_eval_counts_add_up(rows: list[dict[str, str]]) -> None:
    summary = script.summarise(script.evaluate(rows))
    assert summary["n"] == len(rows)
    labels = Counter(r["label"] for r in rows)
    for label in script.LABELS:
        cls = summary["per_class"][label]
        assert cls["n"] == labels[label]
        assert sum(cls["predicted"].values()) == labels[label]
        assert 0 <= cls["agree"] <= cls["n"]
    wrong = sum(c["n"] - c["agree"] for c in summary["per_class"].values())
    assert len(summary["disagreements"]) == wrong


def test_main_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert script.main(["--json"]) == 0
    assert '"per_class"' in capsys.readouterr().out
