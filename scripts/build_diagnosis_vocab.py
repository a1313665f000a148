"""Help curate the diagnosis vocabulary (synonym groups and hierarchy edges) from the DDx data sets.

Not a generator: the YAML files in ``src/clineval/text/names/data/`` are written by hand. This script gathers
every diagnosis name of Open-XDDx, DDXPlus and the LDDx outputs, and prints what a curator needs:

    python scripts/build_diagnosis_vocab.py names        # every distinct name, with its sources and count
    python scripts/build_diagnosis_vocab.py candidates   # names that normalise alike / share a head noun
    python scripts/build_diagnosis_vocab.py check        # vocabulary coverage + LDDx TP-pair agreement
    python scripts/build_diagnosis_vocab.py unknown      # vocabulary members found in no data set
    python scripts/build_diagnosis_vocab.py coverage     # names that resolve: curated / ontology / lay layer
    python scripts/build_diagnosis_vocab.py overmerge    # Open-XDDx within-case ground-truth pairs merged

``--data DIR`` points at the shared data folder (default: ../shared/data next to the repository).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

from clineval.text.names.diagnosis_vocab import load_vocabulary, name_forms, name_key
from clineval.text.names.equivalence import TIERS, equivalent
from clineval.text.names.features import analyse

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def gather(data: Path) -> dict[str, Counter[str]]:
    """name -> Counter of sources ("open_xddx", "ddxplus", "lddx_gt", "lddx_system")."""
    found: dict[str, Counter[str]] = defaultdict(Counter)
    with (data / "open_xddx" / "open_xddx.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            for name in json.loads(line)["ground_truth"]:
                found[name]["open_xddx"] += 1
    conditions = json.loads((data / "ddxplus" / "release_conditions.json").read_text(encoding="utf-8"))
    for cond in conditions.values():
        found[cond["cond-name-eng"]]["ddxplus"] += 1
    sample = data / "ddxplus" / "test_patients_sample_first1000.csv"
    if sample.exists():
        with sample.open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                found[row["diagnosis"]]["ddxplus_test"] += 1
    for path in sorted((data / "lddx").glob("results_v8_*/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for name in doc["ground_truth_diagnoses"]:
            found[name]["lddx_gt"] += 1
        for name in doc["final_diagnoses"]:
            found[name]["lddx_system"] += 1
    for path in sorted((data / "lddx").glob("transcripts_v10/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for name in doc["ground_truth"]:
            found[name]["lddx_gt"] += 1
        for name in doc["results"]["final_diagnoses"]:
            found[name]["lddx_system"] += 1
    return found


def tp_pairs(data: Path) -> Iterator[tuple[str, str, str]]:
    """(file, ground truth, system name) of every LDDx true-positive pair."""
    for path in sorted((data / "lddx").glob("results_v8_*/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        for pair in doc["true_positives"]:
            yield path.parent.name + "/" + path.name, pair["ground_truth"], pair["system"]


def cmd_names(data: Path) -> None:
    for name, sources in sorted(gather(data).items(), key=lambda kv: kv[0].lower()):
        print(f"{name}\t{sum(sources.values())}\t{','.join(sorted(sources))}")


def cmd_candidates(data: Path) -> None:
    names = [n for n in gather(data) if len(n) <= 80]
    by_key: dict[str, list[str]] = defaultdict(list)
    by_head: dict[str, list[str]] = defaultdict(list)
    for name in names:
        by_key[name_key(name)].append(name)
        head = analyse(name).head
        if head:
            by_head[head].append(name)
    print("# names with the same normalised key (exact tier)")
    for key, group in sorted(by_key.items()):
        if len(group) > 1:
            print(f"{key}: {' | '.join(sorted(group))}")
    print("\n# names sharing a head noun (synonym / hierarchy candidates)")
    for head, group in sorted(by_head.items()):
        if len(set(map(name_key, group))) > 1:
            print(f"{head}: {' | '.join(sorted(set(group)))}")


def cmd_check(data: Path) -> None:
    vocab = load_vocabulary()
    names = gather(data)
    known = sum(
        1
        for n in names
        if any(vocab.group_of(f) is not None or vocab.node_of(f) in vocab.ancestors for f in name_forms(n))
    )
    print(
        f"vocabulary {vocab.version} sha256 {vocab.sha256[:12]}: {len(vocab.groups)} groups, "
        f"{vocab.edge_count} hierarchy edges; {known}/{len(names)} data names are vocabulary members"
    )
    tiers: Counter[str] = Counter()
    misses: list[tuple[str, str, str]] = []
    for where, gt, system in tp_pairs(data):
        result = equivalent(gt, system, vocab=vocab)
        tiers[result.tier or "none"] += 1
        if not result.equivalent:
            misses.append((where, gt, system))
    total = sum(tiers.values())
    print(f"LDDx TP pairs: {total}; " + ", ".join(f"{t}: {tiers[t]}" for t in (*TIERS, "none")))
    for where, gt, system in misses:
        print(f"  not equivalent: {gt!r} vs {system[:90]!r} ({where})")


def cmd_unknown(data: Path) -> None:
    vocab = load_vocabulary()
    keys = {name_key(n) for n in gather(data)}
    for member in sorted(vocab.members()):
        if member not in keys:
            print(member)


def cmd_coverage(data: Path) -> None:
    from clineval.text.names.resolution import resolve

    vocab = load_vocabulary()
    names = gather(data)
    layers: Counter[str] = Counter()
    for n in names:
        r = resolve(n, vocab)
        hit = {"curated": bool(r.groups or r.nodes), "ontology": bool(r.concepts.exact)}
        hit["NCIt"] = "NCIt" in r.concepts.ontologies
        hit["lay/drug/qualifier rewrite"] = bool(r.rewrites)
        layers.update(k for k, v in hit.items() if v)
        layers["any"] += hit["curated"] or hit["ontology"]
    print(f"{len(names)} names; " + ", ".join(f"{k}: {v}" for k, v in sorted(layers.items())))


def cmd_overmerge(data: Path) -> None:
    vocab = load_vocabulary()
    tiers: Counter[str] = Counter()
    merged: list[tuple[str, str, str]] = []
    with (data / "open_xddx" / "open_xddx.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            truth = list(json.loads(line)["ground_truth"])
            for i, a in enumerate(truth):
                for b in truth[i + 1 :]:
                    result = equivalent(a, b, vocab=vocab)
                    tiers[result.tier or "none"] += 1
                    if result.tier in ("exact", "synonym", "overlap"):
                        merged.append((a, b, result.explanation))
    print(
        f"within-case pairs: {sum(tiers.values())}; "
        + ", ".join(f"{t}: {tiers[t]}" for t in (*TIERS, "none"))
    )
    for a, b, why in merged:
        print(f"  same-tier: {a!r} ~ {b!r}: {why[:140]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "command", choices=["names", "candidates", "check", "unknown", "coverage", "overmerge"]
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    commands = {"names": cmd_names, "candidates": cmd_candidates, "check": cmd_check, "unknown": cmd_unknown}
    commands |= {"coverage": cmd_coverage, "overmerge": cmd_overmerge}
    commands[args.command](args.data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
