"""Classify every MedQA test and MedMCQA dev question by type; score the classifier on the hand labels.

    .venv/bin/python scripts/classify_datasets.py [--data ../shared/data] [--labels NAME=FILE[,FILE...] ...]
        [--errors] [--rules FILE]

Prints Markdown (docs/mcq/question_types.md, "Classifier", is made of it):

- the type distribution (count, %) of the 1,273 MedQA (USMLE, 4 options) test questions and the 4,183
  MedMCQA dev questions, classified with the gold answer (MedQA ``answer_idx``; MedMCQA ``"ABCD"[cop-1]``)
  and, for comparison, without it; and how long the classification took;
- for each set of hand labels (files of ``id`` = 0-based line of the MedQA test file, ``type``, ``split``):
  the accuracy and the confusion matrix (rows: hand label, columns: classifier), with and without the
  answer. By default ``development`` = ``tests/data/medqa_question_types.jsonl`` (210 labels) +
  ``tests/data/medqa_question_types_heldout2.jsonl`` (120 labels; held out for version 2): the 330 labels
  the version 3 rules were tuned on, and ``heldout3`` = ``tests/data/medqa_question_types_heldout3.jsonl``
  (150 labels of an independent annotator, scored once after version 3's tuning had ended); a file that
  does not exist is skipped.

``--errors`` lists the misclassified labelled questions (with the answer). Deterministic: the same files
give the same output (except the timing line).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from clineval.mcq.question_types import QUESTION_TYPES, Classification, classify_question, load_rules
from clineval.text.stems import split_question

REPO = Path(__file__).resolve().parents[1]
MEDQA = ("medqa_usmle_4opt", "phrases_no_exclude_test.jsonl")
MEDMCQA = ("medmcqa_dev", "dev.json")
DATA = REPO / "tests" / "data"
LABELS = {
    "development": (DATA / "medqa_question_types.jsonl", DATA / "medqa_question_types_heldout2.jsonl"),
    "heldout3": (DATA / "medqa_question_types_heldout3.jsonl",),
}
SHORT = dict(zip(QUESTION_TYPES, "diag treat mech lab pharm epi ethics anat other".split(), strict=True))
Item = tuple[str, dict[str, str], str]  # question, options, gold answer letter


def read_jsonl(path: Path) -> list[dict[str, object]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _mapping(value: object) -> Mapping[object, object]:
    if not isinstance(value, Mapping):
        raise ValueError(f"options must be a mapping, got {value!r}")
    return value


def medqa_items(rows: Iterable[Mapping[str, object]]) -> list[Item]:
    return [
        (
            str(r["question"]),
            {str(k): str(v) for k, v in _mapping(r["options"]).items()},
            str(r["answer_idx"]),
        )
        for r in rows
    ]


def medmcqa_items(rows: Iterable[Mapping[str, object]]) -> list[Item]:
    keys = {"A": "opa", "B": "opb", "C": "opc", "D": "opd"}
    return [
        (str(r["question"]), {k: str(r[v]) for k, v in keys.items()}, "ABCD"[int(str(r["cop"])) - 1])
        for r in rows
    ]


def distribution(title: str, found: list[Classification], blind: list[Classification]) -> list[str]:
    counts, blind_counts = Counter(c.type for c in found), Counter(c.type for c in blind)
    by = Counter(c.matched_on for c in found)
    lines = [
        f"**{title}** (n = {len(found)}; with the answer. Decided on the stem: {by['stem']}, the options' "
        f"vote: {by['options']}, the correct option: {by['answer']}, the whole question (no stem found): "
        f"{by['question']}, default: {by['default']})",
        "",
        "| type | n | % | n without the answer |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name in QUESTION_TYPES:
        lines.append(
            f"| {name} | {counts[name]} | {100 * counts[name] / len(found):.1f} | {blind_counts[name]} |"
        )
    return [*lines, ""]


def confusion(title: str, pairs: list[tuple[str, str]]) -> list[str]:
    correct = sum(gold == pred for gold, pred in pairs)
    lines = [
        f"**{title}**: {correct} / {len(pairs)} correct = {100 * correct / len(pairs):.1f}%",
        "",
        "| label \\ classifier | " + " | ".join(SHORT[t] for t in QUESTION_TYPES) + " | n |",
        "| --- | " + " | ".join("---:" for _ in QUESTION_TYPES) + " | ---: |",
    ]
    table = Counter(pairs)
    for gold in QUESTION_TYPES:
        row = [table[(gold, pred)] for pred in QUESTION_TYPES]
        if sum(row):
            cells = " | ".join(
                f"**{n}**" if pred == gold and n else (str(n) if n else "·")
                for n, pred in zip(row, QUESTION_TYPES, strict=True)
            )
            lines.append(f"| {gold} | {cells} | {sum(row)} |")
    return [*lines, ""]


def label_files(values: list[str] | None) -> dict[str, tuple[Path, ...]]:
    if not values:
        return dict(LABELS)
    files = {}
    for value in values:
        name, sep, paths = value.partition("=")
        if not sep or not paths:
            raise SystemExit(f"--labels takes NAME=FILE[,FILE...], got {value!r}")
        files[name] = tuple(Path(path) for path in paths.split(","))
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument(
        "--labels", action="append", help="NAME=FILE[,FILE...], repeatable (default: development, heldout3)"
    )
    parser.add_argument("--errors", action="store_true", help="list the misclassified labelled questions")
    parser.add_argument("--rules", type=Path, default=None, help="a rules file (default: the packaged one)")
    args = parser.parse_args()

    rules = load_rules(args.rules)
    medqa = medqa_items(read_jsonl(args.data.joinpath(*MEDQA)))
    items = medqa + medmcqa_items(read_jsonl(args.data.joinpath(*MEDMCQA)))
    start, cpu = time.perf_counter(), time.process_time()
    found = [classify_question(q, o, answer=a, rules=rules) for q, o, a in items]
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    blind = [classify_question(q, o, rules=rules) for q, o, _ in items]
    print(f"Rules: version {rules.version}, sha256 {rules.sha256[:16]}..., {len(rules.rules)} rules\n")
    print("\n".join(distribution("MedQA test", found[: len(medqa)], blind[: len(medqa)])))
    print("\n".join(distribution("MedMCQA dev", found[len(medqa) :], blind[len(medqa) :])))
    print(f"Classified {len(items)} questions in {seconds:.2f} s ({cpu:.2f} s CPU, with the answer).\n")

    for name, paths in label_files(args.labels).items():
        missing = [path for path in paths if not path.exists()]
        if missing:
            print(f"({name}: {', '.join(map(str, missing))} not found, skipped)\n")
            continue
        labels = [row for path in paths for row in read_jsonl(path)]
        ids = [int(str(r["id"])) for r in labels]
        files = " + ".join(path.name for path in paths)
        for use, results in (("with the answer", found), ("without the answer", blind)):
            pairs = [(str(r["type"]), results[i].type) for r, i in zip(labels, ids, strict=True)]
            print("\n".join(confusion(f"Hand labels, {name} ({files}), {use}", pairs)))
        if args.errors:
            for r, i in zip(labels, ids, strict=True):
                got = found[i]
                if got.type != r["type"]:
                    stem = split_question(items[i][0]).stem
                    rule = f"{got.rule}/{got.matched_on}"
                    print(f"- {i} ({name}): label {r['type']}, got {got.type} by {rule}: {stem}")
            print()


if __name__ == "__main__":
    main()
