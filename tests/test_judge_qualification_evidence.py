"""scripts/judge_qualification_evidence.py (the figures of the judge-qualification docs) at a small size:
its ``worked`` subcommand runs from the repository and prints the verdicts the docs cite, checked here
against figures computed directly from the simulated world."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "judge_qualification_evidence.py"
CASES = 12


@pytest.fixture(scope="module")
def mod() -> ModuleType:
    spec = importlib.util.spec_from_file_location("judge_qualification_evidence", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["judge_qualification_evidence"] = module
    spec.loader.exec_module(module)
    return module


def test_worked_oracle_qualifies_and_constant_fails_on_kappa(mod: ModuleType) -> None:
    items = mod.worked_items(CASES)
    assert len(items) == CASES * (4 + 3)  # 4 dimensions and 3 rubric criteria per case
    results = mod.worked_results(cases=CASES)
    oracle, const = results["oracle"], results["constant"]
    assert oracle.qualified and oracle.exit_code == 0
    assert [g.figures.agreement.kappa.kappa for g in oracle.groups] == [1.0] * 5
    assert not const.qualified and const.exit_code == 1
    for g in const.groups:
        assert g.figures.agreement.kappa.kappa == 0.0 and g.figures.agreement.kappa.interval is None
        assert list(g.reasons) == ["kappa 0.000 < 0.6"]
        # bias = mean(judge - clinician), the constant judge answering 3 (met: True = 1)
        truths = [
            int(i.truth)
            for i in items
            if (i.key[1][1] if i.key[0] == "grade" else "rubric") == g.figures.group
        ]
        answer = 3 if g.figures.group != "rubric" else 1
        assert g.figures.agreement.bias.value == pytest.approx(sum(answer - t for t in truths) / len(truths))


def test_worked_subcommand_prints_each_judge(mod: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    mod.main(["worked", "--cases", str(CASES)])
    out = capsys.readouterr().out
    assert out.count("| group | n | κ [95%]") == 5
    assert "**oracle**: qualified (exit 0)" in out and "**constant**: not qualified (exit 1)" in out
    assert f"| rubric | {3 * CASES} | 0.000 none |" in out
    assert "NOT: order sensitivity" in out and "NOT: flip rate" in out
