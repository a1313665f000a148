"""Hostile and mistyped YAML: one ``file:line`` error, never a hang, a RecursionError or a silent default.

Suites and pipeline files refuse anchors and aliases (they need none, and the located builder would expand
every one), tags other than YAML's standard ones, nesting deeper than 64 and duplicate keys; every other
YAML file a user may hand us (guideline rules, question-type rules, vocabularies, categories, guard terms)
goes through the same checks (question-type rules keep aliases, with their expansion bounded).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from clineval.cds.guard.scope import Scope
from clineval.cds.rules.model import parse_rules as parse_guideline_rules
from clineval.config import load_suite
from clineval.core.errors import DataFileError, SuiteError
from clineval.core.helpers.safe_yaml import MAX_EXPANDED
from clineval.mcq.question_rules import load_rules as load_question_rules
from clineval.metrics.combined import load_categories
from clineval.pipelines import load_pipeline_config
from clineval.text.names.diagnosis_vocab import load_vocabulary
from tests.cli_helpers import clineval, write_small_suite

PREDICTIONS = ['{"id": "0", "output": "A"}', '{"id": "1", "output": "B"}', '{"id": "2", "output": "C"}']


def alias_bomb(depth: int) -> str:
    """``a0`` is 10 values; each next anchor is 10 aliases of the previous one: 10**(depth+1) expanded."""
    lines = ["name: bomb", "lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}'] * 10)}]" for i in range(1, depth + 1)]
    return "\n".join(lines) + f"\ntasks: *lol{depth}\n"


def _suite_error(tmp_path: Path, text: str) -> SuiteError:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    assert info.value.path == str(path)
    return info.value


@pytest.mark.parametrize("depth", [6, 8, 40])
def test_alias_bomb_is_refused_at_the_first_alias(tmp_path: Path, depth: int) -> None:
    text = alias_bomb(depth)
    if depth == 8:
        assert 600 <= len(text.encode()) <= 800  # the issue's ~700-byte bomb: 10**9 values
    err = _suite_error(tmp_path, text)
    assert err.line == 3  # "a1: &a1 [*a0, ...": the first alias
    assert err.problem == "YAML alias *lol0 is not allowed"


def test_anchor_without_alias_is_refused_at_the_anchor(tmp_path: Path) -> None:
    err = _suite_error(tmp_path, "name: x\ndescription: &d hello\ntasks: []\n")
    assert (err.line, err.problem) == (2, "YAML anchor &d is not allowed")


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("!!python/name:os.system x", "'!!python/name:os.system'"),
        ("!!python/object/apply:os.system [ls]", "'!!python/object/apply:os.system'"),
        ("!custom 1", "'!custom'"),
        ("!!binary aGk=", "'!!binary'"),
    ],
)
def test_non_standard_tags_are_refused_with_their_line(tmp_path: Path, value: str, shown: str) -> None:
    err = _suite_error(tmp_path, f"name: x\ntasks:\n  - id: {value}\n")
    assert (err.line, err.problem) == (3, f"YAML tag {shown} is not allowed")


def test_standard_tags_still_work(tmp_path: Path) -> None:
    # !!str keeps "1" a string: the task id is then the string "1", so the suite gets past the YAML checks.
    err = _suite_error(tmp_path, "name: !!str 1\ntasks: !!seq []\n")
    assert err.problem == "tasks: List should have at least 1 item after validation, not 0"


@pytest.mark.parametrize("depth", [3_000, 100_000])
@pytest.mark.parametrize("style", ["flow", "block", "flow-map"])
def test_deep_nesting_is_refused_without_recursion_error(tmp_path: Path, depth: int, style: str) -> None:
    body = {
        "flow": "[" * depth + "]" * depth,
        "block": "- " * depth + "x",  # compact nested block sequences, one per "- "
        "flow-map": "{a: " * depth + "1" + "}" * depth,
    }[style]
    err = _suite_error(tmp_path, f"name: deep\ntasks:\n  {body}\n")
    assert err.line == 3
    assert "nested deeper than 64 levels" in err.problem or "maximum nesting depth" in err.problem


def test_deep_block_mappings_name_the_line_of_level_65(tmp_path: Path) -> None:
    text = "".join(" " * i + f"k{i}:\n" for i in range(3_000)) + " " * 3_000 + "v: 1\n"
    err = _suite_error(tmp_path, text)
    # the mapping holding k{i} starts at line i+1 and is level i+1: level 65 is k64's, on line 65
    assert (err.line, err.problem) == (65, "YAML nested deeper than 64 levels")


def test_sixty_four_levels_are_fine(tmp_path: Path) -> None:
    inner = "[" * 62 + "]" * 62  # document mapping + tasks list + 62 = 64 levels
    err = _suite_error(tmp_path, f"name: x\ntasks: [{inner}]\n")
    assert "nested" not in err.problem and "YAML" not in err.problem


@pytest.mark.parametrize(
    ("text", "key", "first", "again"),
    [
        ("name: a\ntasks: []\nname: b\n", "name", 1, 3),
        (
            "name: a\ntasks:\n  - id: t\n    dataset: {format: medqa, path: q.jsonl, path: r.jsonl}\n",
            "path",
            4,
            4,
        ),
        ("name: a\ntasks:\n  - id: t\n    scorers: [mcq]\n\n    scorers: [ddx]\n", "scorers", 4, 6),
    ],
)
def test_duplicate_keys_name_both_lines(tmp_path: Path, text: str, key: str, first: int, again: int) -> None:
    err = _suite_error(tmp_path, text)
    assert err.line == again
    assert err.problem == f"duplicate key {key!r} (first on line {first}, again on line {again})"


@pytest.mark.parametrize(
    ("old", "new", "line", "expected"),
    [
        (
            "    dataset:\n",
            "    datset:\n",
            4,
            "tasks[0]: missing required key 'dataset' — found 'datset' (line 4): did you mean 'dataset'?",
        ),
        (
            "    scorers: [mcq]\n",
            "    scorer: [mcq]\n",
            10,
            "tasks[0]: missing required key 'scorers' — found 'scorer' (line 10): did you mean 'scorers'?",
        ),
        (
            "name: small\n",
            "nmae: small\n",
            1,
            "missing required key 'name' — found 'nmae' (line 1): did you mean 'name'?",
        ),
        (
            "      format: medqa\n",
            "      fromat: medqa\n",
            5,
            "tasks[0].dataset: missing required key 'format' — found 'fromat' (line 5): "
            "did you mean 'format'?",
        ),
    ],
)
def test_misspelt_required_key_says_did_you_mean(
    tmp_path: Path, old: str, new: str, line: int, expected: str
) -> None:
    suite = write_small_suite(tmp_path, predictions=PREDICTIONS)
    text = suite.read_text(encoding="utf-8")
    assert old in text
    err = _suite_error(tmp_path, text.replace(old, new))
    assert err.line == line
    assert str(err) == f"{suite}:{line}: {expected}"


def test_missing_key_without_near_miss_names_the_mapping(tmp_path: Path) -> None:
    text = write_small_suite(tmp_path, predictions=PREDICTIONS).read_text(encoding="utf-8")
    err = _suite_error(tmp_path, text.replace("    scorers: [mcq]\n", ""))
    assert (err.line, err.problem, err.hint) == (3, "tasks[0]: missing required key 'scorers'", None)


@pytest.mark.parametrize(
    ("old", "new", "line", "key", "where", "allowed"),
    [
        # the medqa loader's own options (``format`` is the suite's key, checked before the loader runs)
        (
            "      path: q.jsonl\n",
            "      path: q.jsonl\n      xyzzy: 1\n",
            7,
            "xyzzy",
            "tasks[0].dataset",
            "hf, name, path, revision, split",  # a local file, or a Hugging Face dataset (issue 15)
        ),
        (
            "    scorers: [mcq]\n",
            "    scorers: [{mcq: {zzz: 1}}]\n",
            10,
            "zzz",
            "tasks[0].scorers[0].mcq",
            "ci, confidence, n_resamples, seed",
        ),
        (
            "      path: p.jsonl\n",
            "      path: p.jsonl\n      qqq: 1\n",
            10,
            "qqq",
            "tasks[0].system",
            "id_field, numeric_ids, output_field, output_format, path",
        ),
    ],
)
def test_unknown_nested_option_lists_the_allowed_keys(
    tmp_path: Path, old: str, new: str, line: int, key: str, where: str, allowed: str
) -> None:
    text = write_small_suite(tmp_path, predictions=PREDICTIONS).read_text(encoding="utf-8")
    err = _suite_error(tmp_path, text.replace(old, new))
    assert (err.line, err.problem) == (line, f"unknown key {key!r} in {where}")
    assert err.hint == f"allowed keys: {allowed}"


def test_cli_prints_one_line_for_a_hostile_suite(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(alias_bomb(8), encoding="utf-8")
    result = clineval("run", "suite.yaml", "--store", f"sqlite:///{tmp_path}/s.db", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "suite.yaml:3: YAML alias *lol0 is not allowed" in lines[0], result.stderr
    assert "Traceback" not in result.stderr


# --- every other YAML file a user can give -------------------------------------------------------------


def test_pipeline_config_refuses_aliases_and_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "pipeline.yaml"
    path.write_text("name: p\ntenant: &t acme\nowner: *t\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="alias \\*t is not allowed") as info:
        load_pipeline_config(path)
    assert info.value.line == 3
    path.write_text("name: p\nname: q\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="duplicate key 'name'") as info:
        load_pipeline_config(path)
    assert info.value.line == 2


def test_guideline_rules_refuse_tags_and_duplicates() -> None:
    with pytest.raises(DataFileError, match=r"YAML tag '!!python/name:os\.system'") as info:
        parse_guideline_rules(b"version: 1\nlabs: !!python/name:os.system x\n", "g.yaml")
    assert (info.value.path, info.value.line) == ("g.yaml", 2)
    with pytest.raises(DataFileError, match="duplicate key 'version'"):
        parse_guideline_rules(b"version: 1\nversion: 2\n", "g.yaml")


def test_question_rules_keep_aliases_but_bound_their_expansion(tmp_path: Path) -> None:
    assert load_question_rules().rules  # the packaged rules use anchors and aliases: still load
    bomb = tmp_path / "rules.yaml"
    bomb.write_text(alias_bomb(8).replace("name: bomb", "version: x"), encoding="utf-8")
    with pytest.raises(ValueError, match=f"expand to more than {MAX_EXPANDED:,} values"):
        load_question_rules(bomb)


def test_vocabulary_categories_and_guard_files_use_the_safe_loader(tmp_path: Path) -> None:
    vocab = tmp_path / "vocab.yaml"
    vocab.write_text("version: 1\ngroups:\n  - &g [a b, c d]\n  - *g\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="alias \\*g is not allowed") as info:
        load_vocabulary(extra_synonyms=vocab)
    assert info.value.line == 4
    cats = tmp_path / "categories.yaml"
    cats.write_text("categories:\n  accuracy: diagnostics\n  accuracy: safety\n", encoding="utf-8")
    with pytest.raises(
        DataFileError, match="duplicate key 'accuracy' \\(first on line 2, again on line 3\\)"
    ):
        load_categories(cats)
    scope = tmp_path / "scope.yaml"
    scope.write_text("terms: " + "[" * 100 + "]" * 100 + "\n", encoding="utf-8")
    with pytest.raises(DataFileError, match="deeper than 64"):
        Scope.load(scope)
