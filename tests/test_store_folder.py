"""A ``--store`` whose folder does not exist is an error naming it, unless ``--create-store``: a mistyped
``sqlite:////nonexistent/dir/x.db`` silently created the whole tree (and the run went there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clineval.cli.store_folder import check_store_folder, missing_folder
from clineval.core.errors import UserInputError
from tests.cli_helpers import clineval, write_small_suite


def test_write_commands_refuse_a_missing_store_folder_unless_asked(tmp_path: Path) -> None:
    write_small_suite(tmp_path, predictions=['{"id": "0", "output": "A"}'])
    missing = tmp_path / "typo" / "dir"
    store = f"sqlite:///{missing}/x.db"
    line = (
        f"error: --store {store}: the folder {missing} does not exist (nothing was run or stored) — "
        "check the path, or pass --create-store to create it"
    )
    for args in (
        ["run", "suite.yaml", "--out", "o"],
        ["demo", "--out", "o"],
        ["db", "upgrade"],
        ["eval", "medqa", "--model", "vllm/m", "--limit", "2", "--out", "o", "--no-preflight"],
        ["pipeline", "nightly", str(Path(__file__).parents[1] / "examples" / "pipelines" / "pipeline.yaml")],
    ):
        done = clineval(*args, "--store", store, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.strip().splitlines() == [line], args
        assert not (tmp_path / "typo").exists() and not (tmp_path / "o").exists(), args
    created = clineval(
        "run", "suite.yaml", "--store", store, "--create-store", "--allow-degraded", cwd=tmp_path
    )
    assert created.returncode == 0, created.stderr
    assert (missing / "x.db").is_file()


def test_the_default_store_folder_and_other_stores_are_not_refused(tmp_path: Path) -> None:
    write_small_suite(tmp_path, predictions=['{"id": "0", "output": "A"}'])
    done = clineval("run", "suite.yaml", "--allow-degraded", cwd=tmp_path)  # .clineval/: clineval's own
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".clineval" / "clineval.db").is_file()
    assert missing_folder(f"sqlite:///{tmp_path}/x.db") is None  # an existing folder
    assert missing_folder("sqlite://") is None and missing_folder("postgresql+psycopg://u@h/db") is None
    with pytest.raises(UserInputError, match="does not exist"):
        check_store_folder(f"sqlite:///{tmp_path}/a/b.db", create_store=False)
    check_store_folder(f"sqlite:///{tmp_path}/a/b.db", create_store=True)  # asked for: no error
