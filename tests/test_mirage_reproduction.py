"""Reproduce MIRAGE's published accuracies (Xiong et al., Findings of ACL 2024) from their per-question
outputs, and pin down exactly how clineval's MCQ scorer differs from MIRAGE's answer-parsing rule.

MIRAGE's rule (``src/utils.py::locate_answer`` at commit 224ebe9a, described in the data's SOURCE.md) is
re-implemented here independently of clineval: take the text after the last ``"answer_choice": "``, try
ten regexes in order, and fall back to "A" when none matches. In the evaluate.py that produced the
published table an empty output silently got the previous question's parsed answer ("legacy").

clineval never falls back: such outputs are ``unparsed`` (0 points, counted in ``unparsed_rate``), and an
empty output is a ``failed`` system call. For every file the test asserts:

1. the reference rule reproduces the reported accuracy exactly;
2. where MIRAGE's regex matched (no fallback) and clineval parsed an answer, the letters agree, except the
   listed cases (each justified in ``DISAGREEMENTS``);
3. where MIRAGE's regex matched but clineval is unparsed, the answer names several options ("A/B",
   "A. x, C. y") or is otherwise not a single option (listed in ``MIRAGE_MATCHED_UNPARSED_OTHER``);
4. reported_correct - our_correct = (MIRAGE right, we not) - (we right, MIRAGE not), with each side split
   into fallback / legacy / multi-answer / disagreement and every count asserted;
5. our unparsed and failed counts (checked by reading the outputs; see ``EXPECTED``).
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from clineval.core import Case, CaseInput, Reference, ScoringContext, SystemOutput
from clineval.mcq.scorer import MCQScorer
from tests.helpers import SHARED_DATA

DATA = SHARED_DATA
PRED = DATA / "mirage_medrag_predictions"

pytestmark = pytest.mark.skipif(not PRED.is_dir(), reason="shared MIRAGE data not available")

# ---- MIRAGE's published rule (independent re-implementation) -------------------------------------------
_MIRAGE_PATTERNS = [
    re.compile(p)
    for p in (
        r"^\s*(A|B|C|D)$", r"^\s*(A|B|C|D) or", r"^\s*(A|B|C|D) and", r"^\s*(A|B|C|D)/",
        r"^\s*(A|B|C|D),", r"[Oo]ption (A|B|C|D)", r":\s*(A|B|C|D)", r"^\s*(A|B|C|D)\.",
        r'^\s*(A|B|C|D)"', r"^\s*(A|B|C|D):",
    )
]  # fmt: skip


def mirage_locate(text: str) -> tuple[str, bool]:
    """(letter, matched): MIRAGE's answer and whether a regex matched (False = silent fallback to "A")."""
    tail = text.split('"answer_choice": "')[-1].strip()
    for pattern in _MIRAGE_PATTERNS:
        if m := pattern.search(tail):
            return m.group(1), True
    return "A", False


# ---- gold answers, loaded here from the original dataset files ----------------------------------------
@dataclass(frozen=True)
class Gold:
    answer: str
    options: dict[str, str]
    question: str


def _medqa() -> dict[str, Gold]:
    gold = {}
    path = DATA / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"
    with path.open(encoding="utf-8") as fh:
        for index, line in enumerate(fh):
            row = json.loads(line)
            gold[f"{index:04d}"] = Gold(row["answer_idx"], row["options"], row["question"])
    return gold


def _medmcqa() -> dict[str, Gold]:
    gold = {}
    with (DATA / "medmcqa_dev" / "dev.json").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            options = {"A": row["opa"], "B": row["opb"], "C": row["opc"], "D": row["opd"]}
            gold[row["id"]] = Gold("ABCD"[row["cop"] - 1], options, row["question"])
    return gold


def _pubmedqa() -> dict[str, Gold]:
    truth = json.loads((DATA / "pubmedqa" / "test_ground_truth.json").read_text(encoding="utf-8"))
    questions = json.loads((DATA / "pubmedqa" / "ori_pqal.json").read_text(encoding="utf-8"))
    options = {"A": "yes", "B": "no", "C": "maybe"}
    letter = {"yes": "A", "no": "B", "maybe": "C"}
    return {pmid: Gold(letter[label], options, questions[pmid]["QUESTION"]) for pmid, label in truth.items()}


_GOLD_LOADERS = {"medqa": _medqa, "medmcqa": _medmcqa, "pubmedqa": _pubmedqa}
_GOLD_CACHE: dict[str, dict[str, Gold]] = {}


def gold_for(dataset: str) -> dict[str, Gold]:
    if dataset not in _GOLD_CACHE:
        _GOLD_CACHE[dataset] = _GOLD_LOADERS[dataset]()
    return _GOLD_CACHE[dataset]


def reported() -> dict[str, tuple[int, float]]:
    with (PRED / "reported_accuracy.csv").open(encoding="utf-8") as fh:
        return {
            f"{r['dataset']}__{r['setting']}__{r['model']}": (int(r["n"]), float(r["reported_accuracy_pct"]))
            for r in csv.DictReader(fh)
        }


def predictions(name: str) -> Iterator[tuple[str, str | None]]:
    """(id, text or None for an empty output) in sorted id order, as MIRAGE's evaluate.py iterates."""
    rows = [json.loads(line) for line in (PRED / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in sorted(rows, key=lambda r: r["id"]):
        yield row["id"], (row["raw_output"][0] if row["raw_output"] else None)


# ---- the comparison ------------------------------------------------------------------------------------
_LETTER_TOKEN = re.compile(r"(?<![A-Za-z])([A-E])(?![a-z])")


def names_several_letters(text: str) -> bool:
    """Does MIRAGE's answer tail name two or more different option letters ("A/B", "A. x or C. y")?"""
    tail = text.split('"answer_choice": "')[-1].split('"}')[0].replace("\\n", "\n")
    return len(set(_LETTER_TOKEN.findall(tail))) >= 2


@dataclass
class Comparison:
    n: int = 0
    mirage_correct_legacy: int = 0  # empty output = previous question's answer (the published table)
    mirage_correct_current: int = 0  # empty output = wrong (MIRAGE code since 2024-07-22)
    ours_correct: int = 0
    ours_unparsed: int = 0
    ours_failed: int = 0
    mirage_fallbacks: int = 0
    mirage_only: dict[str, int] = field(default_factory=dict)  # MIRAGE right, we not: by reason
    ours_only: dict[str, int] = field(default_factory=dict)  # we right, MIRAGE not: by reason
    disagreements: list[tuple[str, str, str | None]] = field(default_factory=list)  # id, MIRAGE, ours
    matched_but_unparsed: list[str] = field(default_factory=list)  # not explained by several letters


def _bump(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def compare(name: str) -> Comparison:
    dataset = name.split("__")[0]
    golds = gold_for(dataset)
    scorer = MCQScorer()
    result = Comparison()
    previous = "A"
    for case_id, text in predictions(name):
        gold = golds[case_id]
        result.n += 1
        if text is None:
            mirage, matched, reason = previous, False, "legacy"
            output = SystemOutput.failure("empty_output", "MIRAGE raw_output is an empty list")
        else:
            mirage, matched = mirage_locate(text)
            reason = "matched" if matched else "fallback"
            output = SystemOutput(text=text)
            previous = mirage
        result.mirage_fallbacks += reason == "fallback"
        case = Case(
            id=case_id,
            input=CaseInput(question=gold.question, options=gold.options),
            reference=Reference(answer=gold.answer),
        )
        score = scorer(ScoringContext(case=case, output=output, task_id=name))
        ours = score.breakdown["extracted"]
        result.ours_correct += score.label == "correct"
        result.ours_unparsed += score.label == "unparsed"
        result.ours_failed += score.label == "failed"
        mirage_right = mirage == gold.answer
        result.mirage_correct_legacy += mirage_right
        result.mirage_correct_current += mirage_right and text is not None
        if text is not None and matched and ours is None and not names_several_letters(text):
            result.matched_but_unparsed.append(case_id)
        if matched and ours is not None and ours != mirage:
            result.disagreements.append((case_id, mirage, ours))
        if mirage_right and score.label != "correct":
            if reason == "matched":
                reason = "disagreement" if ours is not None else "several_letters"
                if ours is None and case_id in result.matched_but_unparsed:
                    reason = "other_unparsed"
            _bump(result.mirage_only, reason)
        elif score.label == "correct" and not mirage_right:
            _bump(result.ours_only, "disagreement" if matched else reason)
    return result


def _debug_dump() -> None:  # pragma: no cover - used to fill EXPECTED by hand, after reading the outputs
    for name in sorted(reported()):
        print(name, compare(name))


# ---- expected numbers (every unparsed / disagreeing output was read by hand) ----------------------------
# ours: (correct, unparsed, failed); mirage_only / ours_only: reason -> count.
# Unparsed outputs are: "None of the above" (252 in all files), "N/A", "Cannot be determined", "Unable to
# answer ...", several letters ("A/B", "A, B, C, D", "A. x or C. y"), a letter that is not an option
# ("E", "E. Lymph node biopsy"), Azure content-filter messages, the literal "'content'", connection
# errors / timeouts, and empty "answer_choice" fields after truncated reasoning.
EXPECTED: dict[str, dict[str, object]] = {
    "medqa__cot__gpt-4-32k": {
        "ours": (1055, 28, 0), "mirage_only": {"fallback": 13, "several_letters": 1}, "ours_only": {},
    },
    "medqa__rag_32__gpt-4-32k": {
        "ours": (1042, 36, 0), "mirage_only": {"fallback": 11, "several_letters": 1}, "ours_only": {},
    },
    "medqa__cot__gpt-35-turbo-16k": {
        "ours": (819, 27, 6), "mirage_only": {"fallback": 4, "several_letters": 3, "legacy": 2},
        "ours_only": {},
    },
    "medqa__rag_32__gpt-35-turbo-16k": {
        "ours": (834, 37, 0), "mirage_only": {"fallback": 13, "several_letters": 1}, "ours_only": {},
    },
    "medmcqa__cot__gpt-4-32k": {
        "ours": (2844, 217, 0), "mirage_only": {"fallback": 61, "several_letters": 17, "other_unparsed": 1},
        "ours_only": {},
    },
    "medmcqa__cot__gpt-35-turbo-16k": {
        "ours": (2206, 268, 27), "mirage_only": {"fallback": 66, "several_letters": 34, "legacy": 5},
        "ours_only": {},
    },
    "pubmedqa__cot__gpt-4-32k": {"ours": (198, 0, 0), "mirage_only": {}, "ours_only": {}},
    "pubmedqa__rag_32__gpt-4-32k": {"ours": (352, 1, 0), "mirage_only": {"fallback": 1}, "ours_only": {}},
    "pubmedqa__cot__gpt-35-turbo-16k": {"ours": (181, 0, 0), "mirage_only": {}, "ours_only": {"fallback": 1}},
    "pubmedqa__rag_32__gpt-35-turbo-16k": {
        "ours": (336, 1, 0), "mirage_only": {"several_letters": 1}, "ours_only": {},
    },
}  # fmt: skip

# Both parsed, different letters. medmcqa 796d7b5d (GPT-3.5) has no "answer_choice" field; MIRAGE's
# `[Oo]ption (A|B|C|D)` hits "Option A states HM 1 and 2" at the start of the reasoning, while the
# output ends "Therefore, the answer choice is: C. HM 2 and 4." (gold D: both wrong).
DISAGREEMENTS = {
    "medmcqa__cot__gpt-35-turbo-16k": [("796d7b5d-f79d-4c6a-860c-198e9404ea07", "A", "C")],
}
# MIRAGE's regex matched, we are unparsed, and the answer does not name several letters:
# - medmcqa 0447b9a2 (GPT-4): "Error: All options are identical"; MIRAGE's `:\s*(A|B|C|D)` reads the
#   "A" of "All".
# - medqa 0709 (GPT-3.5 CoT): options are graph labels {"A": "B", "B": "C", "C": "D", "D": "E"} and the
#   answer is "C" after "the ratio is highest at point C": option C or the option whose text is "C"
#   (B)? Ambiguous, so unparsed. The GPT-3.5 RAG answer "B" is ambiguous the same way. (Gold is A, so
#   neither changes a count.)
MIRAGE_MATCHED_UNPARSED_OTHER = {
    "medmcqa__cot__gpt-4-32k": ["0447b9a2-22ec-449c-8a23-a52c28ac6b34"],
    "medqa__cot__gpt-35-turbo-16k": ["0709"],
    "medqa__rag_32__gpt-35-turbo-16k": ["0709"],
}
FILES = sorted(EXPECTED)


@pytest.fixture(scope="module")
def comparisons() -> dict[str, Comparison]:
    return {name: compare(name) for name in FILES}


def test_all_ten_files_are_covered() -> None:
    assert sorted(reported()) == FILES
    assert len(FILES) == 10


@pytest.mark.parametrize("name", FILES)
def test_mirage_rule_reproduces_reported_accuracy(name: str, comparisons: dict[str, Comparison]) -> None:
    n, pct = reported()[name]
    result = comparisons[name]
    assert result.n == n
    assert round(100 * result.mirage_correct_legacy / n, 2) == pct
    # reported ± is the binomial standard error of that accuracy
    with (PRED / "reported_accuracy.csv").open(encoding="utf-8") as fh:
        row = next(r for r in csv.DictReader(fh) if f"{r['dataset']}__{r['setting']}__{r['model']}" == name)
    p = result.mirage_correct_legacy / n
    assert round(100 * (p * (1 - p) / n) ** 0.5, 2) == float(row["reported_std_pct"])


@pytest.mark.parametrize("name", FILES)
def test_our_scores_and_their_relation_to_mirage(name: str, comparisons: dict[str, Comparison]) -> None:
    result = comparisons[name]
    expected = EXPECTED[name]
    assert (result.ours_correct, result.ours_unparsed, result.ours_failed) == expected["ours"]
    assert result.disagreements == DISAGREEMENTS.get(name, [])
    assert result.matched_but_unparsed == MIRAGE_MATCHED_UNPARSED_OTHER.get(name, [])
    assert result.mirage_only == expected["mirage_only"]
    assert result.ours_only == expected["ours_only"]
    # every point of difference is accounted for by the reasons above
    diff = result.mirage_correct_legacy - result.ours_correct
    assert diff == sum(result.mirage_only.values()) - sum(result.ours_only.values())
    # our failures are exactly the empty outputs, and the legacy empty-output rule accounts for the whole
    # gap between the published table and MIRAGE's current code (empty = wrong)
    assert result.ours_failed == sum(1 for _, text in predictions(name) if text is None)
    legacy_right = result.mirage_correct_legacy - result.mirage_correct_current
    assert legacy_right == result.mirage_only.get("legacy", 0)


def test_example_suite_end_to_end_gives_the_same_counts(tmp_path: Path) -> None:
    """examples/mirage_published.yaml, run like `clineval run`, reproduces the per-file counts above."""
    from clineval.runs import run as api

    suite = Path(__file__).resolve().parents[1] / "examples" / "mirage_published.yaml"
    run = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None)
    )
    assert run.info.status == "finished"
    for task_id, aggregate in run.aggregates.items():
        dataset, setting, model = task_id.split("-", 2)
        correct, unparsed, failed = EXPECTED[f"{dataset}__{setting}__{model}"]["ours"]
        scores = aggregate.scores
        n = scores["n"]
        assert isinstance(n, int) and isinstance(scores["accuracy"], float)
        assert (round(scores["accuracy"] * n), scores["n_failed"]) == (correct, failed)
        assert round(float(scores["unparsed_rate"]) * n) == unparsed  # type: ignore[arg-type]


# ---- free text: the reasoning alone, read against the model's own answer field ---------------------------
# Each output's "answer_choice" field is removed and the step-by-step reasoning before it is read as free
# text; the field's letter is the reference. This measures reading of GPT-4 / GPT-3.5 free-text answers
# ("Therefore, the answer is C.", "... is A. Preterm labor.", "Therefore, the most likely diagnosis is
# <option text>."). Most reasoning never states the answer, so "unparsed" is the usual, honest result;
# what matters is that a letter, when read, is the model's own. Before issue 23 (commit e43d8b7):
# agree 3138, unparsed 11650, disagree 17.
_FIELD_AT_END = re.compile(r'"answer_choice"\s*:\s*"(?:[^"\\]|\\.)*"?\s*\}?\s*$')
FREE_TEXT_EXPECTED = {  # (agree, unparsed, disagree) per file
    "medmcqa__cot__gpt-35-turbo-16k": (2526, 1360, 1),
    "medmcqa__cot__gpt-4-32k": (297, 3665, 2),
    "medqa__cot__gpt-35-turbo-16k": (629, 611, 0),
    "medqa__cot__gpt-4-32k": (130, 1115, 0),
    "medqa__rag_32__gpt-35-turbo-16k": (569, 666, 1),
    "medqa__rag_32__gpt-4-32k": (234, 1003, 0),
    "pubmedqa__cot__gpt-35-turbo-16k": (192, 306, 0),
    "pubmedqa__cot__gpt-4-32k": (13, 487, 0),
    "pubmedqa__rag_32__gpt-35-turbo-16k": (316, 183, 0),
    "pubmedqa__rag_32__gpt-4-32k": (59, 440, 0),
}
# The four disagreements, read by hand: medmcqa 2d1e9927 (GPT-3.5) ends "the correct answer is D.
# antagonist." and option B's text is "D, antagonist" (a typo for D2): read as B, the field says D.
# medqa 1162 (GPT-3.5 RAG) ends with option B's text word for word, the field says D. medmcqa 018e350b
# and 436d7d2f (GPT-4) judge statements one by one ("so option d) is correct") in questions whose answer
# is a combination ("C. bd") or the one false statement.
FREE_TEXT_DISAGREEMENTS = {
    "medmcqa__cot__gpt-35-turbo-16k": [("2d1e9927-b2bc-469b-a26f-49ff06d91fda", "D", "B")],
    "medmcqa__cot__gpt-4-32k": [
        ("018e350b-8675-4b2d-99a2-eba98fe07f31", "C", "D"),
        ("436d7d2f-93e5-4a85-84b5-f4c701863126", "D", "C"),
    ],
    "medqa__rag_32__gpt-35-turbo-16k": [("1162", "D", "B")],
}


def free_text_reading(name: str) -> tuple[tuple[int, int, int], list[tuple[str, str, str]]]:
    """((agree, unparsed, disagree), [(id, field letter, free-text letter)]) for one file."""
    from clineval.mcq.answer_extraction import extract_choice

    golds = gold_for(name.split("__")[0])
    counts = [0, 0, 0]
    disagreements = []
    for case_id, text in predictions(name):
        options = golds[case_id].options
        if text is None or (m := _FIELD_AT_END.search(text)) is None:
            continue
        read = extract_choice(text, options)
        if read.method != "answer_field_letter":
            continue
        field = read.letter
        thinking = text[: m.start()].split('"step_by_step_thinking":', 1)[-1].strip().strip('",')
        ours = extract_choice(thinking.replace("\\n", "\n"), options).letter
        index = 1 if ours is None else (0 if ours == field else 2)
        counts[index] += 1
        if index == 2:
            disagreements.append((case_id, str(field), str(ours)))
    return (counts[0], counts[1], counts[2]), disagreements


@pytest.mark.parametrize("name", FILES)
def test_free_text_reasoning_is_read_as_the_model_answered(name: str) -> None:
    counts, disagreements = free_text_reading(name)
    assert counts == FREE_TEXT_EXPECTED[name]
    assert disagreements == FREE_TEXT_DISAGREEMENTS.get(name, [])
