"""The leaderboard ranks like with like (issue 22 item 8): a column is one set of cases (dataset, sample seed,
n), a system is ranked only on columns it shares with another system, headers are unique, systems are named
by model and datasets by their catalogue name. Values and ranks below are counted by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from clineval.core import ComponentSpec, SuiteSpec, TaskSpec
from clineval.view.dataset_names import dataset_name
from clineval.view.queries import RunRow
from clineval.view.renderers.board import build_board

MEDQA = "/data/medqa_usmle_4opt/phrases_no_exclude_test.jsonl"


def task(
    tid: str, system: dict[str, Any], path: str = MEDQA, digest: str = "sha256:aaaa", **ds: Any
) -> TaskSpec:
    return TaskSpec(
        id=tid,
        dataset=ComponentSpec(type=ds.pop("fmt", "medqa"), args={"path": path, **ds}, content_hash=digest),
        system=ComponentSpec(type=system.pop("type"), args=system),
        scorers=[ComponentSpec(type="mcq")],
    )


def run(
    rid: str, tasks: list[tuple[TaskSpec, float, int]], limit: int | None = None, seed: int = 0
) -> RunRow:
    suite = SuiteSpec(name=rid, tasks=[t for t, _, _ in tasks], limit=limit, seed=seed)
    aggregates = {
        t.id: {"scores": {"accuracy": v, "accuracy_ci": [v - 0.05, v + 0.05], "n": n}} for t, v, n in tasks
    }
    return RunRow(
        rid, suite, "finished", datetime(2026, 12, 1, tzinfo=UTC), "default", "adhoc", {}, {}, aggregates
    )


def gpt(model: str) -> dict[str, Any]:
    return {"type": "openai", "model": model, "prompt": "mcq_cot_v1"}


def test_only_shared_columns_rank_and_a_lone_system_is_unranked() -> None:
    runs = [
        run("r1", [(task("a", gpt("gpt-4o")), 0.80, 1273), (task("b", gpt("gpt-4o-mini")), 0.70, 1273)]),
        run("r2", [(task("c", gpt("llama-3-8b")), 0.70, 1273)]),
        # alone on MedMCQA: the highest value on the board, but nothing to be ranked against
        run(
            "r3",
            [
                (
                    task(
                        "d",
                        {"type": "callable", "target": "standins:always_a"},
                        "/d/medmcqa_dev/dev.json",
                        fmt="medmcqa",
                    ),
                    0.99,
                    100,
                )
            ],
        ),
        # a DDx stand-in alone with its own dataset
        run(
            "r4",
            [
                (
                    task(
                        "e",
                        {"type": "http", "url": "http://127.0.0.1:8002/predict"},
                        "/x/open_xddx/open_xddx.jsonl",
                        fmt="open_xddx",
                    ),
                    0.0,
                    100,
                )
            ],
        ),
    ]
    board = build_board(runs)
    ranked = {r.system: (r.mean_rank, r.win_rate, r.n_ranked) for r in board.ranked}
    # one shared column: 0.80 > 0.70 = 0.70 -> ranks 1, 2.5, 2.5 (ties share the mean of ranks 2 and 3)
    # win rate: gpt-4o beats both (2/2); each 0.70 loses to 0.80 and ties the other 0.70: (0 + 0.5)/2
    assert ranked == {
        "gpt-4o": (1.0, 1.0, 1),
        "gpt-4o-mini": (2.5, 0.25, 1),
        "llama-3-8b": (2.5, 0.25, 1),
    }
    assert [r.system for r in board.unranked] == ["127.0.0.1:8002/predict", "standins:always_a"]  # by name
    assert [c.shared for c in board.columns] == [True, False, False]
    names = [c.name for c in board.columns]
    assert names == [
        "MedQA (USMLE, US, 4 options), test",
        "MedMCQA, dev",
        "Open-XDDx (570 vignettes), differential diagnosis",
    ]


def test_a_sample_and_a_full_run_are_two_columns_with_n_and_seed_in_their_headers() -> None:
    runs = [
        run("full", [(task("a", gpt("gpt-4o")), 0.80, 1273), (task("b", gpt("gpt-4o-mini")), 0.70, 1273)]),
        run("s50", [(task("c", gpt("llama-3-8b")), 0.90, 50)], limit=50, seed=7),
    ]
    board = build_board(runs)
    details = [c.detail for c in board.columns]
    assert details == ["n = 1273 · accuracy", "n = 50 · seed 7 · accuracy"]
    assert [(c.n, c.seed) for c in board.columns] == [(1273, None), (50, 7)]
    # the 50-case sample is not ranked against the full runs, though its 90% is higher
    assert [r.system for r in board.unranked] == ["llama-3-8b"]
    assert board.ranked[0].system == "gpt-4o"


def test_two_systems_on_the_same_seeded_sample_share_a_column() -> None:
    runs = [
        run("s1", [(task("a", gpt("gpt-4o")), 0.82, 50)], limit=50, seed=7),
        run("s2", [(task("b", gpt("llama-3-8b")), 0.60, 50)], limit=50, seed=7),
        run("s3", [(task("c", gpt("mistral-7b")), 0.95, 50)], limit=50, seed=8),  # another sample
    ]
    board = build_board(runs)
    assert len(board.columns) == 2 and board.columns[0].shared and not board.columns[1].shared
    assert [r.system for r in board.ranked] == ["gpt-4o", "llama-3-8b"]
    assert [r.system for r in board.unranked] == ["mistral-7b"]


def test_headers_are_unique_when_two_datasets_read_alike() -> None:
    # two different files with the same stem and n (content hashes differ): two columns, two headers
    runs = [
        run("r1", [(task("a", gpt("gpt-4o"), "/one/test.jsonl", "sha256:1111aaaa"), 0.8, 200)]),
        run("r2", [(task("b", gpt("gpt-4o"), "/two/test.jsonl", "sha256:2222bbbb"), 0.7, 200)]),
    ]
    board = build_board(runs)
    headers = [(c.name, c.detail) for c in board.columns]
    assert len(set(headers)) == 2
    assert headers == [
        ("medqa: test", "n = 200 · accuracy · data 1111aaaa"),
        ("medqa: test", "n = 200 · accuracy · data 2222bbbb"),
    ]


def test_one_system_in_two_runs_is_not_ranked_against_itself() -> None:
    runs = [
        run("r1", [(task("a", gpt("gpt-4o")), 0.80, 1273)]),
        run("r2", [(task("a", gpt("gpt-4o")), 0.78, 1273)]),
    ]
    board = build_board(runs)
    assert not board.columns[0].shared and board.ranked == [] and len(board.unranked) == 2


def test_same_model_under_two_prompts_is_two_systems_named_apart() -> None:
    runs = [
        run(
            "r1",
            [
                (task("a", {"type": "openai", "model": "gpt-4o", "prompt": "mcq_cot_v1"}), 0.80, 1273),
                (task("b", {"type": "openai", "model": "gpt-4o", "prompt": "mcq_direct_v1"}), 0.75, 1273),
            ],
        )
    ]
    board = build_board(runs)
    assert [r.system for r in board.ranked] == ["gpt-4o (mcq_cot_v1)", "gpt-4o (mcq_direct_v1)"]
    assert [r.win_rate for r in board.ranked] == [1.0, 0.0]


@pytest.mark.parametrize(
    ("fmt", "args", "name"),
    [
        (
            "medqa",
            {"path": "../../shared/data/medqa_usmle_4opt/phrases_no_exclude_test.jsonl"},
            "MedQA (USMLE, US, 4 options), test",
        ),
        ("medmcqa", {"path": "/srv/data/medmcqa_dev/dev.json"}, "MedMCQA, dev"),
        (
            "pubmedqa",
            {"path": "d/pubmedqa/ori_pqal.json", "ground_truth": "d/pubmedqa/test_ground_truth.json"},
            "PubMedQA PQA-L test (500), with contexts",
        ),
        (
            "pubmedqa",
            {
                "path": "d/pubmedqa/ori_pqal.json",
                "ground_truth": "d/pubmedqa/test_ground_truth.json",
                "contexts": False,
            },
            "PubMedQA* PQA-L test (500), no contexts (MIRAGE)",
        ),
        ("mmlu", {"hf": "cais/mmlu", "name": "anatomy", "split": "test"}, "MMLU anatomy, test"),
        ("medqa", {"path": "demo/data/medqa_test_first200.jsonl"}, "medqa: medqa_test_first200"),
        ("medqa", {"path": "elsewhere/phrases_no_exclude_test.jsonl"}, "medqa: phrases_no_exclude_test"),
        ("jsonl", {"path": "cases.jsonl", "split": "dev"}, "jsonl: cases, dev"),
    ],
)
def test_dataset_names(fmt: str, args: dict[str, Any], name: str) -> None:
    assert dataset_name(ComponentSpec(type=fmt, args=args)) == name


def test_one_system_in_two_runs_counts_once_in_a_shared_column() -> None:
    # the same predictions file under two paths (relative, absolute): one system, by its content hash
    def replay(tid: str, path: str) -> TaskSpec:
        system = ComponentSpec(type="predictions", args={"path": path}, content_hash="c0ffee")
        return task(tid, {"type": "openai", "model": "x"}).model_copy(update={"system": system})

    runs = [
        run("r1", [(replay("a", "data/gpt4.jsonl"), 0.83, 200), (task("b", gpt("gpt-3.5")), 0.705, 200)]),
        run("r2", [(replay("a", "/abs/demo/data/gpt4.jsonl"), 0.83, 200)]),
    ]
    board = build_board(runs)
    # GPT-4 (two runs, one system) beats GPT-3.5: GPT-3.5 ranks 2 among two systems, not 3 among three rows
    assert [(r.system, r.run_id, r.mean_rank, r.win_rate) for r in board.rows] == [
        ("gpt4", "r1", 1.0, 1.0),
        ("gpt4", "r2", 1.0, 1.0),
        ("gpt-3.5", "r1", 2.0, 0.0),
    ]
