"""The hand-written answer formats of ``tests/data/answer_formats.json``, each read to its expected option.

The file holds >= 60 answers as models write them: LaTeX boxes (reasoning models), choice verbs and
lower-case letters, the forms extraction always read, the real forms of the published MIRAGE outputs
(GPT-4 / GPT-3.5 fields and free-text endings), negations, competing answers that must stay
``unparsed``, and options quoted by their text. Each case names its option set, an optional filler
prepended to make it a long text, the expected letter (or ``unparsed``) and a note saying why.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from clineval.mcq.answer_extraction import extract_choice

DATA = json.loads((Path(__file__).parent / "data" / "answer_formats.json").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = DATA["cases"]


def _text(case: dict[str, Any]) -> str:
    return str(DATA["fillers"][case["prefix"]] if case.get("prefix") else "") + str(case["text"])


@pytest.mark.parametrize("case", CASES, ids=[f"{i:03d}-{c['group']}" for i, c in enumerate(CASES)])
def test_format(case: dict[str, Any]) -> None:
    found = extract_choice(_text(case), DATA["option_sets"][case["options"]])
    assert (found.letter or "unparsed") == case["expected"], case["note"]
    assert (found.method == "unparsed") == (found.letter is None)


def test_the_set_covers_every_kind_of_format() -> None:
    groups = Counter(case["group"] for case in CASES)
    assert len(CASES) >= 60
    assert set(groups) == {
        "boxed", "phrase_new", "old", "mirage", "negation", "competing", "later", "option_text",
    }  # fmt: skip
    assert min(groups.values()) >= 8
    # every case says why, and both outcomes are well represented
    assert all(case["note"] for case in CASES)
    expected = Counter(case["expected"] == "unparsed" for case in CASES)
    assert expected[True] >= 30 and expected[False] >= 60
    assert all(case["options"] in DATA["option_sets"] for case in CASES)


@pytest.mark.parametrize(
    ("text", "method"),
    [
        ("\\boxed{C}", "boxed"),
        ("$\\boxed{\\text{(C)}}$", "boxed"),
        (DATA["fillers"]["reasoning"] + "Therefore, the answer is cisplatin.", "answer_phrase_text"),
        (DATA["fillers"]["reasoning"] + "Therefore, the most likely culprit is cisplatin.", "conclusion"),
        ("I would choose (c).", "answer_phrase"),
        ('{"answer": "\\\\boxed{C}"}', "boxed"),
    ],
)
def test_new_forms_say_how_they_were_read(text: str, method: str) -> None:
    found = extract_choice(text, DATA["option_sets"]["drugs"])
    assert (found.letter, found.method) == ("C", method)
    assert found.span


def test_a_box_and_a_later_different_answer_compete() -> None:
    options = DATA["option_sets"]["drugs"]
    agree = "\\boxed{C}\n\nSo the final answer is C."
    assert extract_choice(agree, options).letter == "C"
    compete = "\\boxed{C}\n\nOn reflection the final answer is B."
    found = extract_choice(compete, options)
    assert (found.letter, found.method, found.span) == (None, "unparsed", "\\boxed{C}")
