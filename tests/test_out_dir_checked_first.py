"""An unusable ``--out`` is one line and exit code 2 before anything runs: no call made, no run stored (it
was found only once the whole run was done, its reports then lost)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clineval.cli.out_dir import check_out_dir
from clineval.core.errors import UserInputError
from clineval.testing import Script
from tests.cli_helpers import clineval
from tests.conftest import StartServer
from tests.test_cli_bad_input import assert_one_line_error
from tests.test_live_run import write_live_suite

HINT = "name a folder clineval can create and write (nothing was run)"


def _bad_out(tmp_path: Path, kind: str) -> tuple[Path, str]:
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder\n")
    if kind == "file":
        return blocker, f"--out {blocker} is a file, not a folder — {HINT}"
    if kind == "under a file":
        return (
            blocker / "reports",
            f"--out {blocker / 'reports'} cannot be written (Not a directory) — {HINT}",
        )
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    return locked / "reports", f"--out {locked / 'reports'} cannot be written (Permission denied) — {HINT}"


KINDS = [
    "file",
    "under a file",
    pytest.param(
        "unwritable",
        marks=pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder"),
    ),
]


@pytest.mark.parametrize("kind", KINDS)
def test_run_refuses_a_bad_out_before_any_call(tmp_path: Path, start_server: StartServer, kind: str) -> None:
    server = start_server(Script(latency_s=0.0))
    write_live_suite(tmp_path, server.base_url, 5)
    out, message = _bad_out(tmp_path, kind)
    db = tmp_path / "store.db"
    result = clineval("run", "suite.yaml", "--store", f"sqlite:///{db}", "--out", str(out), cwd=tmp_path)
    assert_one_line_error(result, message)
    assert result.stderr.strip() == f"error: {message}"
    assert server.stats["total"] == 0  # nothing run
    assert not db.exists()  # nothing stored


@pytest.mark.parametrize("kind", ["file", "under a file"])
def test_eval_refuses_a_bad_out_before_writing_its_suite(
    tmp_path: Path, start_server: StartServer, kind: str
) -> None:
    server = start_server(Script(latency_s=0.0))
    out, message = _bad_out(tmp_path, kind)
    db = tmp_path / "store.db"
    args = ["eval", "medqa", "--model", "vllm/scripted-model", "--base-url", server.base_url]
    result = clineval(*args, "--store", f"sqlite:///{db}", "--out", str(out), cwd=tmp_path)
    assert_one_line_error(result, message)
    assert server.stats["total"] == 0 and not db.exists()
    assert not (tmp_path / ".clineval").exists()  # no suite written anywhere


def test_a_good_out_is_created_and_left_with_the_reports_only(tmp_path: Path) -> None:
    out = tmp_path / "new" / "reports"
    check_out_dir(out)
    assert out.is_dir() and list(out.iterdir()) == []  # the write check leaves nothing behind
    check_out_dir(None)  # no --out: nothing to check
    with pytest.raises(UserInputError, match="is a file, not a folder"):
        check_out_dir(Path(__file__))
