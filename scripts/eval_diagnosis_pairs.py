"""Measure ``clineval.text.names.equivalence.equivalent`` against the hand-labelled diagnosis pairs.

    python scripts/eval_diagnosis_pairs.py [--pairs data/diagnosis_pairs/pairs_v1.tsv] [--json]

Agreement per class, as issue 13 defines it:
  same      -> equivalent at tier exact / synonym / overlap (not hierarchy)      target >= 95%
  subtype   -> equivalent at tier hierarchy                                        target >= 80%
  different -> not equivalent                                                      target >= 98%
Prints a confusion table (label x predicted: same-tier / hierarchy / not equivalent) and every disagreement.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from clineval.text.names.equivalence import equivalent

DEFAULT_PAIRS = Path(__file__).resolve().parents[1] / "data" / "diagnosis_pairs" / "pairs_v1.tsv"
COLUMNS = ("id", "name_a", "name_b", "label", "origin", "context", "note")
LABELS = ("same", "subtype", "different")
ORIGINS = ("open_xddx", "lddx", "ddxplus", "medqa", "added")
PREDICTED = ("same-tier", "hierarchy", "not equivalent")
EXPECTED = {"same": "same-tier", "subtype": "hierarchy", "different": "not equivalent"}
TARGETS = {"same": 0.95, "subtype": 0.80, "different": 0.98}


@dataclass(frozen=True)
class Outcome:
    id: str
    name_a: str
    name_b: str
    label: str
    predicted: str
    tier: str | None
    explanation: str

    @property
    def agrees(self) -> bool:
        return EXPECTED[self.label] == self.predicted


def load_pairs(path: Path = DEFAULT_PAIRS) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def predict(a: str, b: str, context: str = "") -> tuple[str, str | None, str]:
    """(predicted class, tier, explanation) for one pair; ``context``: the pair's context column (names
    separated by ";"), read to resolve an ambiguous abbreviation."""
    names = [c.strip() for c in context.split(";") if c.strip()]
    result = equivalent(a, b, context=names)
    if not result.equivalent:
        return "not equivalent", result.tier, result.explanation
    return ("hierarchy" if result.tier == "hierarchy" else "same-tier"), result.tier, result.explanation


def evaluate(rows: list[dict[str, str]]) -> list[Outcome]:
    outcomes = []
    for row in rows:
        predicted, tier, explanation = predict(row["name_a"], row["name_b"], row.get("context") or "")
        outcomes.append(
            Outcome(row["id"], row["name_a"], row["name_b"], row["label"], predicted, tier, explanation)
        )
    return outcomes


def summarise(outcomes: list[Outcome]) -> dict[str, object]:
    confusion = {label: {p: 0 for p in PREDICTED} for label in LABELS}
    for o in outcomes:
        confusion[o.label][o.predicted] += 1
    per_class = {}
    for label in LABELS:
        n = sum(confusion[label].values())
        hit = confusion[label][EXPECTED[label]]
        per_class[label] = {
            "n": n,
            "agree": hit,
            "agreement": hit / n if n else None,
            "target": TARGETS[label],
            "predicted": confusion[label],
        }
    return {
        "n": len(outcomes),
        "labels": dict(Counter(o.label for o in outcomes)),
        "per_class": per_class,
        "confusion": confusion,
        "disagreements": [asdict(o) for o in outcomes if not o.agrees],
    }


def print_report(summary: dict[str, object]) -> None:
    per_class = summary["per_class"]
    confusion = summary["confusion"]
    assert isinstance(per_class, dict) and isinstance(confusion, dict)
    print(f"{summary['n']} pairs")
    print("\nper-class agreement")
    for label, c in per_class.items():
        pct = 100 * c["agreement"] if c["agreement"] is not None else float("nan")
        print(f"  {label:<10} {c['agree']:>4}/{c['n']:<4} {pct:5.1f}%  (target >= {100 * c['target']:.0f}%)")
    print("\nconfusion (rows: label, columns: predicted)")
    print(f"  {'':<10}" + "".join(f"{p:>16}" for p in PREDICTED))
    for label in LABELS:
        print(f"  {label:<10}" + "".join(f"{confusion[label][p]:>16}" for p in PREDICTED))
    disagreements = summary["disagreements"]
    assert isinstance(disagreements, list)
    print(f"\ndisagreements ({len(disagreements)})")
    for d in disagreements:
        names = f"{d['name_a']} <> {d['name_b']}"
        print(f"  {d['id']}\t{d['label']}\t{d['tier'] or '-'}\t{names}\t{d['explanation']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=Path, default=DEFAULT_PAIRS)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)
    summary = summarise(evaluate(load_pairs(args.pairs)))
    if args.json:
        json.dump(summary, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print_report(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
