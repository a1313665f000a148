"""The fast JSON decoder (msgspec, issue 26) reads what ``json.loads`` reads: same values, same errors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from clineval.core.errors import DataFileError
from clineval.core.helpers.lines import loads, parse_json_line
from clineval.store.tables import dumps
from clineval.store.tables import loads as column_loads

SAME = [
    '{"a": 1, "a": 2}',
    "123456789012345678901234567890",  # past 64 bits: an int, as json reads it (orjson gives a float)
    "-18446744073709551617",
    "[0.1, 1.7976931348623157e308, 5e-324, -0.0, 1.5e3]",
    '"\\u00e9 \u2028 \\ud83d\\ude00"',
    '{"nested": [[{"x": null, "y": true}]]}',
    "NaN",  # msgspec refuses these: json's values through the fallback
    "[Infinity, -Infinity]",
    "1e400",
    '"\\ud800"',  # a lone surrogate
]


@pytest.mark.parametrize("text", SAME)
def test_same_values_as_json(text: str) -> None:
    ours, theirs = loads(text), json.loads(text)
    assert type(ours) is type(theirs)
    assert repr(ours) == repr(theirs)  # NaN != NaN; the repr compares it


@pytest.mark.parametrize("text", ["[1,]", '{"a" 1}', "01", '"a\tb"', "nul", ""])
def test_same_errors_as_json(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as ours:
        loads(text)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    assert str(ours.value) == str(theirs.value)


def test_a_bad_line_still_names_its_column() -> None:
    with pytest.raises(DataFileError, match=r"malformed JSON: Expecting value \(column 7\)"):
        parse_json_line('{"a": }', Path("x.jsonl"), 3)


def test_stored_columns_round_trip() -> None:
    value = {"v": math.nan, "big": 2**70, "s": "é"}
    back = column_loads(dumps(value))
    assert math.isnan(back["v"]) and back["big"] == 2**70 and back["s"] == "é"
