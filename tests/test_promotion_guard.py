"""A baseline's later versions need a passing gate: a run whose last gate failed, that has none, or that
passed against an older version is refused (exit 2, one line) unless ``--force --reason TEXT``, and the
reason is stored with the version and shown by ``baseline history`` / ``show``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clineval.core.errors import UserInputError
from clineval.releases import gate as releases
from clineval.releases.promotion import promotion_of
from tests.cli_helpers import clineval
from tests.golden_runs import run_golden


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str]]:
    folder = tmp_path_factory.mktemp("promote")
    url = f"sqlite:///{folder / 'store.db'}"
    ids = {
        "baseline": run_golden(folder, url, "baseline", {"pe", "mi"}),
        "mixed": run_golden(folder, url, "mixed", {"copd"}),  # the mean improves, COPD regresses
        "better": run_golden(folder, url, "better", {"mi"}),
    }
    return folder, url, ids


def _cli(golden: tuple[Path, str, dict[str, str]], *args: str) -> tuple[int, str, str]:
    folder, url, _ = golden
    proc = clineval(*args, "--store", url, cwd=folder)
    return proc.returncode, proc.stdout, proc.stderr


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


Golden = tuple[Path, str, dict[str, str]]


def test_refused_promotions_and_a_forced_one_with_its_reason(golden: Golden) -> None:
    _, url, ids = golden
    gate = ("gate", "--baseline", "main", "--allow-tuned-cases")
    code, out, err = _cli(golden, "baseline", "promote", ids["baseline"], "--name", "main")
    assert code == 0, err
    assert "v1 <- run" in out and "first version, no gate" in out

    # no gate decision against an existing baseline
    code, out, err = _cli(golden, "baseline", "promote", ids["mixed"], "--name", "main")
    assert code == 2 and out == ""
    assert _lines(err) == [
        f"error: baseline main not promoted: run {ids['mixed']} has no gate decision against baseline main "
        f"(tenant default), whose latest version is v1 — gate it first (clineval gate {ids['mixed'][:12]} "
        "--baseline main), or promote anyway with --force --reason TEXT"
    ]

    # its last gate failed: COPD regressed (strict rule: every condition)
    assert _cli(golden, gate[0], ids["mixed"], *gate[1:])[0] == 1
    code, _, err = _cli(golden, "baseline", "promote", ids["mixed"], "--name", "main")
    assert code == 2 and len(_lines(err)) == 1
    assert (
        f"error: baseline main not promoted: the last gate of run {ids['mixed']} against baseline main "
        "(tenant default) v1 failed: 1 gating metric(s) regressed: guideline_adherence (condition=copd)"
    ) in err

    # --force alone is refused; --force --reason promotes and keeps the reason
    code, _, err = _cli(golden, "baseline", "promote", ids["mixed"], "--name", "main", "--force")
    assert code == 2 and "--force needs --reason TEXT" in err
    reason = "COPD regression accepted: GOLD 2025 changed the expected action"
    code, out, err = _cli(
        golden, "baseline", "promote", ids["mixed"], "--name", "main", "--force", "--reason", reason
    )
    assert code == 0, err
    assert "v2 <- run" in out and f"FORCED: {reason}" in out
    stored = releases.show_baseline(url, "main", version=2)
    record = promotion_of(stored)
    assert record["forced"] is True and record["reason"] == reason
    assert "v1 failed" in record["refused_because"] and isinstance(record["gate_id"], int)
    assert promotion_of(releases.show_baseline(url, "main", version=1)) == {
        "gate_id": None,
        "forced": False,
        "refused_because": None,
        "reason": None,
    }
    code, out, _ = _cli(golden, "baseline", "history", "main")
    assert code == 0 and "FORCED" in out and "COPD regression accepted" in out.replace("\n", " ")
    code, out, _ = _cli(golden, "baseline", "show", "main", "--json")
    assert json.loads(out)["snapshot"]["promotion"]["reason"] == reason


def test_a_gate_against_an_older_version_does_not_count(golden: tuple[Path, str, dict[str, str]]) -> None:
    _, url, ids = golden
    releases.promote_baseline(url, ids["baseline"], "older")
    assert releases.gate_run(url, ids["better"], "older", allow_tuned_cases=True).passed
    releases.promote_baseline(url, ids["mixed"], "older", force=True, reason="test")  # v2
    with pytest.raises(UserInputError, match=r"against baseline older \(tenant default\) v1, but the latest"):
        releases.promote_baseline(url, ids["better"], "older")
    # better fixes PE but breaks COPD relative to v2 (mixed): its gate against v2 fails, still refused
    assert not releases.gate_run(url, ids["better"], "older", allow_tuned_cases=True).passed
    with pytest.raises(UserInputError, match="v2 failed"):
        releases.promote_baseline(url, ids["better"], "older")


def test_a_passing_gate_promotes(golden: tuple[Path, str, dict[str, str]]) -> None:
    _, url, ids = golden
    releases.promote_baseline(url, ids["baseline"], "ok", tenant="acme")
    decision = releases.gate_run(url, ids["better"], "ok", tenant="acme", allow_tuned_cases=True)
    assert decision.passed
    second = releases.promote_baseline(url, ids["better"], "ok", tenant="acme")
    assert second.version == 2
    record = promotion_of(second)
    assert record["forced"] is False and record["refused_because"] is None
    gates = [g for g in releases.gate_decisions(url, ids["better"]) if g.baseline_name == "ok"]
    assert gates[-1].passed and isinstance(record["gate_id"], int)
    # the same run gated against another tenant's baseline of the same name does not count here
    releases.promote_baseline(url, ids["baseline"], "ok")
    with pytest.raises(UserInputError, match="has no gate decision against baseline ok"):
        releases.promote_baseline(url, ids["better"], "ok")
