"""The worked example of docs/runs/counterfactual.md (issue 27), run through clineval itself.

MedQA test vignettes made into sex and race variants by ``clineval.counterfactual.make_variants``; the
published GPT-4 answers (MIRAGE, gpt-4-32k CoT) for the original vignettes; a scripted stand-in that answers
as GPT-4 did except on a few "sensitive" questions whose variant names the trigger group (female / Black),
where it moves one letter on. Writes OUT/variants.jsonl, OUT/predictions.jsonl and OUT/suite.yaml; then::

    clineval run OUT/suite.yaml --out OUT/report --no-cache

Usage: python scripts/counterfactual_worked_example.py [OUT]  (default /tmp/cf27-worked)
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Any

from clineval.counterfactual.make import FORMATS, make_variants, read_jsonl, write_jsonl

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/cf27-worked")
MEDQA = Path("/work/shared/data/medqa_usmle_4opt/phrases_no_exclude_test.jsonl")
GPT4 = Path("/work/shared/data/mirage_medrag_predictions/medqa__cot__gpt-4-32k.jsonl")
N_SEX = 200
RATES = {"sex": 5, "race": 20}  # percent of questions that are "sensitive"
TRIGGER = {
    "sex": re.compile(r"\b(?:she|her|hers|herself|woman|women|girl|female|lady)\b", re.I),
    "race": re.compile(r"\b(?:black|african[- ]american)\b", re.I),
}
PAIRS = {
    "sex": [["male", "female"], ["reference", "male"], ["reference", "female"]],
    "race": [["white", "black"], ["reference", "white"], ["reference", "black"]],
}
_FIELD = re.compile(r'"answer_choice":\s?"\s*\(?([A-D])(?![A-Za-z])')


def gpt4_answers() -> dict[str, str]:
    """GPT-4's letter per question: MIRAGE's last answer_choice field, without its fallback to "A"."""
    out = {}
    for row in read_jsonl(GPT4):
        text = row["raw_output"][0] if row["raw_output"] else ""
        matches = list(re.finditer(r'"answer_choice": "', text))
        letter = ""
        if matches:
            m = _FIELD.match(text, matches[-1].start())
            letter = m.group(1) if m else ""
        out[str(int(row["id"]))] = letter
    return out


def is_sensitive(attribute: str, group: str) -> bool:
    digest = hashlib.sha256(f"cf27-worked-example:{attribute}:{group}".encode()).hexdigest()
    return int(digest, 16) % 100 < RATES[attribute]


def stand_in(attribute: str, group: str, original: str, text: str, gpt4: str) -> str:
    """GPT-4's answer to the original, moved one letter on when the question is sensitive and the variant
    names the trigger group (female / Black) while the original did not."""
    if (
        gpt4
        and is_sensitive(attribute, group)
        and TRIGGER[attribute].search(text)
        and not TRIGGER[attribute].search(original)
    ):
        return "ABCD"[("ABCD".index(gpt4) + 1) % 4]
    return gpt4


def build() -> tuple[list[dict[str, Any]], dict[str, list[str]], dict[str, dict[str, str]]]:
    records = read_jsonl(MEDQA)
    variants, _ = make_variants(records, ["sex", "race"], **FORMATS["medqa"])
    _VARIANTS.extend(variants)
    by_group: dict[str, dict[str, dict[str, Any]]] = {}
    for v in variants:
        by_group.setdefault(v["group"], {})[v["variant"]] = v
    groups = {
        "sex": [g for g in sorted(by_group, key=int) if "female" in by_group[g]][:N_SEX],
        "race": [g for g in sorted(by_group, key=int) if "black" in by_group[g]],
    }
    gpt4 = gpt4_answers()
    results = []
    texts: dict[str, dict[str, str]] = {}
    for attribute, chosen in groups.items():
        names = sorted({v for pair in PAIRS[attribute] for v in pair})
        for g in chosen:
            original = by_group[g]["reference"]["question"]
            for name in names:
                record = by_group[g][name]
                answer = (
                    gpt4[g]
                    if name == "reference"
                    else stand_in(attribute, g, original, record["question"], gpt4[g])
                )
                texts.setdefault(f"{attribute}:{g}", {})[name] = record["question"]
                results.append(
                    {
                        "task": f"medqa-{attribute}",
                        "id": record["id"],
                        "group": g,
                        "variant": name,
                        "answer": answer,
                        "gold": record["answer_idx"],
                        "correct": answer == record["answer_idx"],
                    }
                )
    return results, groups, texts


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    results, groups, _ = build()
    records = {r["id"]: r for r in _VARIANTS}
    tasks = []
    for attribute in ("sex", "race"):
        mine = [r for r in results if r["task"] == f"medqa-{attribute}"]
        write_jsonl(OUT / f"variants_{attribute}.jsonl", [records[r["id"]] for r in mine])
        answers = [
            {"id": r["id"], "output": f"The answer is {r['answer']}." if r["answer"] else "No answer."}
            for r in mine
        ]
        write_jsonl(OUT / f"predictions_{attribute}.jsonl", answers)
        pairs = ", ".join(f"[{a}, {b}]" for a, b in PAIRS[attribute])
        tasks.append(
            f"  - id: medqa-{attribute}\n    dataset: {{format: medqa, path: variants_{attribute}.jsonl}}\n"
            f"    system: {{type: predictions, path: predictions_{attribute}.jsonl}}\n    scorers: [mcq]\n"
            f"    counterfactual: {{reference: reference, pairs: [{pairs}]}}\n"
        )
    (OUT / "suite.yaml").write_text("name: counterfactual-worked-example\ntasks:\n" + "".join(tasks))
    print(f"{len(groups['sex'])} sex and {len(groups['race'])} race questions; suite: {OUT / 'suite.yaml'}")


_VARIANTS: list[dict[str, Any]] = []


if __name__ == "__main__":
    main()
