"""The measured agreement of clineval's DDx formulas and classification with LDDx's stored results."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.helpers import SHARED_DATA

DATA = SHARED_DATA / "lddx"
SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "lddx_agreement.py"

pytestmark = pytest.mark.skipif(not (DATA / "results_v8_5").is_dir(), reason="LDDx result files not present")


@pytest.fixture(scope="module")
def mod() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lddx_agreement", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["lddx_agreement"] = module
    spec.loader.exec_module(module)
    return module


def test_formula_agreement(mod: ModuleType) -> None:
    files = mod.load(DATA)
    assert len(files) == 41  # 11 (v8_5) + 30 (v8_6; Case 24 is absent upstream)
    got = {k: (a, n) for k, (a, n, _) in mod.formula_agreement(files).items()}
    assert got["tp_rate = TP/GT (clineval recall)"] == (41, 41)
    assert got["traditional_recall = TP/GT (clineval recall)"] == (7, 41)  # exactly the 7 files with AE = 0
    assert got["traditional_recall = TP/(TP+FN)"] == (41, 41)
    assert got["traditional_precision = TP/(TP+FP+CAA)"] == (41, 41)
    assert got["clinical_reasoning_quality = (TP+w*CAA+AE)/(GT+FP+CAA)"] == (41, 41)
    assert got["diagnostic_safety = (TP+max(0,w*CAA))/(TP+CAA+FP)"] == (41, 41)
    assert got["GT = TP+FN+AE (count identity)"] == (41, 41)


def test_decision_agreement(mod: ModuleType) -> None:
    a = mod.decision_agreement(mod.load(DATA))
    gt = dict(a.gt_confusion)
    assert sum(gt.values()) == 199
    # issue 22 (ancestors are not hits, CAA needs can't-miss support, TM-SM needs a treatment): 148 -> 147 of
    # 199. PNH (generic 'Hemolytic Anemia') and type 2 diabetes ('Diabetes mellitus') are no longer TP and now
    # agree with LDDx's FN; 'Major Depressive Disorder' and 'Pneumonia' are broader than their ground truths
    # (LDDx TP); dehydration is TM-SM twice (IV fluids in the symptom-management round; LDDx has no TM-SM).
    # docs/ddx/lddx_agreement.md judges every difference.
    # Then an exclusion in the transcript needs support (the audit's all_excluded turns): the diagnosis
    # put forward citing a finding of the case before it is ruled out, or the ruling-out sentence citing one.
    # Of the 38 transcript AE decisions 34 keep it; myasthenia gravis and bipolar disorder (LDDx AE),
    # exogenous insulin and TTP (LDDx FN) become FN: 147 of 199 still.
    # Issue 25: NCIt's is_a makes three LDDx AE ground truths hits of narrower names (hyperthyroidism by
    # neonatal thyrotoxicosis, 'infection' by neonatal sepsis twice: AE/AE 23 -> 20, AE/TP 7 -> 10), and the
    # truncated final name 'Guillain' now reads as Guillain-Barre syndrome, as LDDx has it (TP/AE 5 -> 4,
    # TP/TP 69 -> 70): 145 of 199. docs/ddx/lddx_agreement.md ("Issue 25") judges each: clineval right in
    # the three AE cases.
    assert {k: v for k, v in gt.items() if k[0] == k[1]} == {
        ("TP", "TP"): 70,
        ("FN", "FN"): 55,
        ("AE", "AE"): 20,
    }
    assert gt[("TP", "FN")] == 8 and gt[("TP", "AE")] == 4
    assert gt[("AE", "FN")] == 22 and gt[("AE", "TP")] == 10 and gt[("AE", "TM-SM")] == 1
    assert gt[("FN", "AE")] == 6 and gt[("FN", "TP")] == 2 and gt[("FN", "TM-SM")] == 1
    sys_ = dict(a.sys_confusion)
    assert sys_[("TP", "TP")] == 74 and sys_[("FP", "FP")] == 63
    assert sys_[("TP", "BROADER")] == 2 and sys_[("FP", "BROADER")] == 1
    assert len(a.differences) == 199 - 145
    assert any("'Gout'" in d and "pseudogout" in d for d in a.differences)
    unsupported = sorted(d.split(" - ")[0] for d in a.differences if "without support" in d)
    assert unsupported == [
        "v8_6/16 GT 'Bipolar disorder': LDDx AE, clineval FN",
        "v8_6/19 GT 'myasthenia gravis': LDDx AE, clineval FN",
    ]
    treated = [d for d in a.differences if "clineval TM-SM" in d]
    assert len(treated) == 2 and all("IV fluids (iv_fluids) treats 'dehydration'" in d for d in treated)
