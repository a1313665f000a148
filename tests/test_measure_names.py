"""Retrieval measure names are read without ``ir_measures.parse_measure`` (it uses ``ast.Num``, which
Python 3.14 removes), into the same measure objects ir_measures builds, with the same trec_eval values."""

from __future__ import annotations

import math
import sys
import warnings

import ir_measures
import pytest

from clineval.cds.retrieval.scorer import evaluate, parse_measure

NAMES = [
    "nDCG@10",
    "P@5",
    "Rprec",
    "RR",
    "AP",
    "R@100",
    "P(rel=2)@5",
    "RR(rel=2)",
    'nDCG(dcg="exp-log2")@10',
    "ERR_IA(judged_only=True)@20",
    "Judged@10",
    "SetP(rel=1)",
]


@pytest.mark.parametrize("name", NAMES)
def test_names_build_the_measures_ir_measures_parses(name: str) -> None:
    if sys.version_info >= (3, 14):
        pytest.skip(
            "ir_measures.parse_measure cannot run on Python 3.14 (no ast.Num): nothing to compare with"
        )
    with warnings.catch_warnings():  # its ast.Num and ast.Str are deprecated since Python 3.12
        warnings.simplefilter("ignore", DeprecationWarning)
        reference = ir_measures.parse_measure(name)
    assert parse_measure(name) == reference


def test_names_build_measures_from_the_registry_by_hand() -> None:
    # independent of any parser: the objects ir_measures documents for these names
    m = ir_measures.measures
    assert parse_measure("nDCG@10") == m.nDCG(cutoff=10)
    assert parse_measure("P(rel=2)@5") == m.P(rel=2, cutoff=5)
    assert parse_measure("RR(rel=2)") == m.RR(rel=2)
    assert parse_measure('nDCG(dcg="exp-log2")@10') == m.nDCG(dcg="exp-log2", cutoff=10)
    assert str(parse_measure("P(rel=2)@5")) == "P(rel=2)@5"


def test_the_string_parser_of_ir_measures_is_never_called(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str) -> None:  # what Python 3.14 does to it: AttributeError on ast.Num
        raise AttributeError("module 'ast' has no attribute 'Num'")

    monkeypatch.setattr(ir_measures, "parse_measure", broken)
    monkeypatch.setattr(ir_measures.util, "parse_measure", broken)
    # qrels a:0 b:2 c:1 d:3; ranking a b x c. rel >= 2: {b, d}; top 2 = a, b -> P(rel=2)@2 = 1/2.
    # RR(rel=2): first doc of grade >= 2 is b at rank 2 -> 0.5. P@2 (grade >= 1): b -> 0.5.
    values = evaluate(
        ["P(rel=2)@2", "RR(rel=2)", "P@2"], {"a": 0, "b": 2, "c": 1, "d": 3}, ["a", "b", "x", "c"]
    )
    assert values == {"P(rel=2)@2": 0.5, "RR(rel=2)": 0.5, "P@2": 0.5}
    # nDCG@3: DCG = 2/log2(3) + 0 (x unjudged) ; IDCG = 3 + 2/log2(3) + 1/2
    ndcg = evaluate(["nDCG@3"], {"a": 0, "b": 2, "c": 1, "d": 3}, ["a", "b", "x", "c"])["nDCG@3"]
    assert ndcg == pytest.approx((2 / math.log2(3)) / (3 + 2 / math.log2(3) + 1 / 2))


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("Bogus@3", "measure not found: Bogus"),
        ("nDCG(10)", "parameters must be named"),
        ("P(foo=1)@5", "P has no parameter foo (it has cutoff, rel, judged_only)"),
        ("nDCG@[10]", "values must be numbers"),
        ("x + y", "expected the form Measure(param=value)@cutoff"),
        ("P(rel=2", "was never closed"),
        ("P(rel=__import__('os'))@5", "malformed node"),
    ],
)
def test_bad_names_are_one_clear_value_error(name: str, problem: str) -> None:
    with pytest.raises(ValueError, match="unknown retrieval measure") as err:
        parse_measure(name)
    assert problem in str(err.value)
    assert "e.g. nDCG@10" in str(err.value)
