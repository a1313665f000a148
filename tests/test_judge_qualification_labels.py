"""The labels file: the three formats, reviewers, and one-line errors naming file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clineval.judging.qualification import LabelsError, read_labels
from clineval.judging.qualification.labels import parse_labels

GOOD = "\n".join(
    [
        '{"case_id": "gs2-mi-01", "dimension": "coherence", "grade": 4, "reviewer": "dr_a"}',
        '{"case_id": "gs2-mi-01", "dimension": "coherence", "grade": 3, "reviewer": "dr_b", "comment": "ok"}',
        "",
        '{"case_id": 17, "criterion": "Advises urgent review", "met": true}',
        '{"a": "MI", "b": "myocardial infarction", "same": true}',
        '{"case_id": "gs2-mi-02", "dimension": "coherence", "grade": 5.0}',
    ]
)


def test_the_three_formats_and_reviewers(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(GOOD, encoding="utf-8")
    labels = read_labels(path)
    assert labels.kinds == ["grade", "met", "same"]
    assert labels.of_kind("grade") == {
        ("gs2-mi-01", "coherence"): {"dr_a": 4, "dr_b": 3},
        ("gs2-mi-02", "coherence"): {"": 5},
    }
    assert labels.of_kind("met") == {("17", "Advises urgent review"): {"": True}}
    assert labels.of_kind("same") == {("MI", "myocardial infarction"): {"": True}}
    assert [lab.line for lab in labels.labels] == [1, 2, 4, 5, 6]


def test_the_labels_hash_ignores_order_comments_and_spacing_but_not_a_label() -> None:
    base = parse_labels(GOOD, path="a").labels_hash
    lines = [line for line in GOOD.splitlines() if line]
    shuffled = "\n\n".join(
        json.dumps({k: v for k, v in json.loads(x).items() if k != "comment"}) for x in reversed(lines)
    )
    assert parse_labels(shuffled, path="b").labels_hash == base
    assert parse_labels(GOOD.replace('"grade": 4', '"grade": 2'), path="a").labels_hash != base


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", r"labels\.jsonl:2: not valid JSON \(Expecting value at column 1\)"),
        ("[1, 2]", r"labels\.jsonl:2: a label is a JSON object, got list"),
        (
            '{"case_id": "x", "dimension": "coherence"}',
            r":2: a label has exactly one of 'grade', 'met', 'same'$",
        ),
        (
            '{"case_id": "x", "criterion": "c", "met": true, "grade": 3}',
            r":2: .*exactly one.*got \['grade', 'met'\]",
        ),
        ('{"dimension": "coherence", "grade": 3}', r":2: missing 'case_id'"),
        (
            '{"case_id": "", "dimension": "coherence", "grade": 3}',
            r":2: 'case_id' must be a non-empty string, got ''",
        ),
        (
            '{"case_id": "x", "dimension": "coherence", "grade": 6}',
            r":2: 'grade' must be an integer 1-5, got 6",
        ),
        ('{"case_id": "x", "dimension": "coherence", "grade": 3.5}', r"got 3\.5"),
        ('{"case_id": "x", "dimension": "coherence", "grade": "4"}', r"got '4'"),
        ('{"case_id": "x", "dimension": "coherence", "grade": true}', r"got True"),
        (
            '{"case_id": "x", "criterion": "c", "met": "yes"}',
            r":2: 'met' must be a JSON boolean \(true or false\), got 'yes'",
        ),
        ('{"a": "x", "b": "y", "same": 1}', r"'same' must be a JSON boolean"),
        ('{"case_id": "x", "dimension": "coherence", "grades": 3}', r"exactly one"),
        (
            '{"case_id": "x", "dimension": "coherence", "grade": 3, "reviwer": "a"}',
            r":2: unknown key\(s\) 'reviwer'",
        ),
        (
            '{"case_id": "x", "dimension": "coherence", "grade": 3, "reviewer": " "}',
            r"'reviewer' must be a non-empty",
        ),
        (
            '{"case_id": "x", "dimension": "coherence", "grade": 3, "comment": 5}',
            r"'comment' must be a string",
        ),
        ('{"case_id": "x", "dimension": "coherense", "grade": 3}', r":2: unknown dimension 'coherense'"),
    ],
)
def test_bad_lines_are_one_line_errors_naming_file_and_line(line: str, message: str) -> None:
    text = '{"case_id": "ok", "dimension": "coherence", "grade": 3}\n' + line
    with pytest.raises(LabelsError, match=message) as err:
        parse_labels(text, path="labels.jsonl", dimensions=("coherence", "completeness"))
    assert "\n" not in str(err.value) and str(err.value).startswith("labels.jsonl:2: ")
    assert err.value.line == 2 and err.value.path == "labels.jsonl"


def test_duplicates_for_the_same_reviewer_name_both_lines() -> None:
    text = "\n".join(
        [
            '{"case_id": "x", "dimension": "coherence", "grade": 3, "reviewer": "dr_a"}',
            '{"case_id": "x", "dimension": "coherence", "grade": 3, "reviewer": "dr_b"}',
            '{"case_id": "x", "dimension": "coherence", "grade": 4, "reviewer": "dr_a"}',
        ]
    )
    with pytest.raises(
        LabelsError, match=r"^l\.jsonl:3: grade of 'x' / 'coherence' by reviewer 'dr_a' is already on line 1$"
    ):
        parse_labels(text, path="l.jsonl")
    unnamed = '{"a": "x", "b": "y", "same": true}\n{"a": "x", "b": "y", "same": true}'
    with pytest.raises(
        LabelsError, match=r":2: same of 'x' / 'y' by the unnamed reviewer is already on line 1"
    ):
        parse_labels(unnamed, path="l.jsonl")
    # the other order is another question (the judge is asked about an ordered pair)
    assert (
        len(
            parse_labels(
                '{"a": "x", "b": "y", "same": true}\n{"a": "y", "b": "x", "same": true}', path="l"
            ).labels
        )
        == 2
    )


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(LabelsError, match=r"missing\.jsonl: no such labels file$"):
        read_labels(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n \n", encoding="utf-8")
    with pytest.raises(LabelsError, match=r"empty\.jsonl: the labels file holds no label"):
        read_labels(empty)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"a": "caf\xe9", "b": "x", "same": true}'.encode("latin-1"))
    with pytest.raises(LabelsError, match=r"latin\.jsonl: not UTF-8 text \(byte 10\)"):
        read_labels(latin)
