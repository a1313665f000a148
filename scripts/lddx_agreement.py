"""How clineval's DDx formulas and classification agree with LDDx's own evaluator on its result files.

Usage: ``python scripts/lddx_agreement.py [DATA_DIR]`` (default ``/work/shared/data/lddx``; reads
``results_v8_5/*.json`` and ``results_v8_6/*.json`` directly).

Part 1 feeds LDDx's stored counts (tp/fp/fn/caa/ae_count, total_gt_diagnoses, caa_weight_applied) into
clineval's formulas (``clineval.ddx.formulas.ddx_scores`` docstring) and counts the files where LDDx's
stored metric equals the formula (|difference| < 1e-9).

Part 2 runs ``classify_differential`` on the same files (differential: ``final_diagnoses`` as ranked
proposed items, then the can't-miss round's ``critical_diagnoses`` as alternatives; transcript: every
response of every round, round = its position, phase = round name; case text: ``case_description``, read
for CAA support and TM-SM indication) and compares it with LDDx's decisions: per ground truth TP (in
``true_positives``), FN (in ``false_negatives``), else AE (LDDx stores no AE list; its ae_count = ground
truth - TP - FN in every file); per final diagnosis TP / FP (clineval: TP / FP / BROADER / DUP). LDDx has no
TM-SM, so every clineval TM-SM is a difference.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clineval.core.output import DifferentialItem, TranscriptTurn
from clineval.ddx.classes import DdxClassification
from clineval.ddx.scorer import classify_differential
from clineval.text.assertion import target_forms
from clineval.text.matching import match_tokens, normalize_for_match
from clineval.text.names.equivalence import equivalent
from clineval.text.stemming import stem

DEFAULT_DIR = Path("/work/shared/data/lddx")
TOL = 1e-9


@dataclass
class LddxFile:
    name: str
    data: dict[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.data[key]


def load(data_dir: Path = DEFAULT_DIR) -> list[LddxFile]:
    files = sorted(data_dir.glob("results_v8_*/ddx_results_*.json"))
    return [
        LddxFile(f"{p.parent.name[-4:]}/{p.stem.split('_')[3]}", json.loads(p.read_text())) for p in files
    ]


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def formulas(f: LddxFile) -> dict[str, tuple[float, float]]:
    """(stored, formula) per LDDx field, from its own counts."""
    tp, fp, fn, caa, ae = (f[k] for k in ("tp_count", "fp_count", "fn_count", "caa_count", "ae_count"))
    gt, w = f["total_gt_diagnoses"], f["caa_weight_applied"]
    return {
        "tp_rate = TP/GT (clineval recall)": (f["tp_rate"], _ratio(tp, gt)),
        "traditional_recall = TP/GT (clineval recall)": (f["traditional_recall"], _ratio(tp, gt)),
        "traditional_recall = TP/(TP+FN)": (f["traditional_recall"], _ratio(tp, tp + fn)),
        "traditional_precision = TP/(TP+FP+CAA)": (f["traditional_precision"], _ratio(tp, tp + fp + caa)),
        "clinical_reasoning_quality = (TP+w*CAA+AE)/(GT+FP+CAA)": (
            f["clinical_reasoning_quality"],
            _ratio(tp + w * caa + ae, gt + fp + caa),
        ),
        "diagnostic_safety = (TP+max(0,w*CAA))/(TP+CAA+FP)": (
            f["diagnostic_safety"],
            _ratio(tp + max(0.0, w * caa), tp + caa + fp),
        ),
        "GT = TP+FN+AE (count identity)": (gt, tp + fn + ae),
        "TP+FP = total_team_diagnoses": (f["total_team_diagnoses"], tp + fp),
    }


def formula_agreement(files: list[LddxFile]) -> dict[str, tuple[int, int, list[str]]]:
    out: dict[str, tuple[int, int, list[str]]] = {}
    for f in files:
        for key, (stored, ours) in formulas(f).items():
            agree, total, bad = out.get(key, (0, 0, []))
            ok = abs(stored - ours) < TOL
            out[key] = (agree + ok, total + 1, bad if ok else [*bad, f"{f.name} {stored:.4g}≠{ours:.4g}"])
    return out


def _clean(name: str) -> str:
    return re.sub(r"\*+", "", name).strip()


def system_output(f: LddxFile) -> tuple[list[DifferentialItem], list[TranscriptTurn]]:
    items = [DifferentialItem(diagnosis=_clean(d)) for d in f["final_diagnoses"]]
    rounds: dict[str, Any] = f["full_transcript"]["rounds"]
    crit = rounds.get("cant_miss", {}).get("metadata", {}).get("critical_diagnoses") or []
    for c in crit:
        items.append(DifferentialItem(diagnosis=_clean(c["diagnosis"]), status="alternative"))
    turns: list[TranscriptTurn] = []
    for number, (phase, rd) in enumerate(rounds.items(), start=1):
        for agent, resp in (rd.get("responses") or {}).items():
            text = resp.get("content", "") if isinstance(resp, dict) else str(resp)
            turns.append(TranscriptTurn(round=number, agent=agent.split("_round")[0], text=text, phase=phase))
    return items, turns


def lddx_decisions(f: LddxFile) -> tuple[dict[str, str], dict[str, str]]:
    """LDDx's class per ground truth (TP/FN/AE) and per final diagnosis (TP/FP)."""
    tp_gt = {p["ground_truth"] for p in f["true_positives"]}
    fn = set(f["false_negatives"])
    gt = {g: "TP" if g in tp_gt else "FN" if g in fn else "AE" for g in f["ground_truth_diagnoses"]}
    tp_sys = {p["system"] for p in f["true_positives"]}
    sys_ = {d: "TP" if d in tp_sys else "FP" for d in f["final_diagnoses"]}
    return gt, sys_


def _mentions(name: str, turns: list[TranscriptTurn]) -> int:
    forms = target_forms(name)
    n = 0
    for t in turns:
        stems = " " + " ".join(stem(w) for w in match_tokens(t.text)) + " "
        n += any(f" {' '.join(form)} " in stems for form in forms)
    return n


def _reason(
    f: LddxFile, gt: str, ours: str, theirs: str, c: DdxClassification, turns: list[TranscriptTurn]
) -> str:
    d = next(x for x in c.decisions if x.ground_truth == gt and x.cls in ("TP", "FN", "AE", "TM-SM"))
    pair = next((p["system"] for p in f["true_positives"] if p["ground_truth"] == gt), None)
    if theirs == "TP" and ours != "TP":
        eq = equivalent(pair or "", gt)
        broader = "; the system name is the broader one: BROADER, no hit" if eq.broader == "a" else ""
        return f"LDDx matched {pair!r}; clineval equivalence: {eq.tier or 'none'} ({eq.explanation}){broader}"
    if ours == "TM-SM":
        e = d.evidence[0]
        return f"treated in round {e.round} ({e.phase}): {e.trigger}: {e.text[:110]!r}"
    if ours == "TP":
        status = "can't-miss alternative" if d.rank is None else f"final rank {d.rank}"
        return f"clineval matched {d.system!r} ({status}) by tier {d.tier}: {d.explanation}"
    if ours == "AE":
        e = d.evidence[0]
        return f"ruled out in round {e.round} ({e.phase}, trigger {e.trigger!r}): {e.text[:110]!r}"
    if d.explanation.startswith("ruled out without support") and d.evidence:
        e = d.evidence[0]
        return (
            f"ruled out in round {e.round} ({e.phase}, trigger {e.trigger!r}) without support (not put "
            f"forward before with a finding of the case, none cited): {e.text[:110]!r}"
        )
    n = _mentions(gt, turns)
    return (
        f"transcript mentions it in {n} turn(s), none in a ruled-out scope"
        if n
        else "never named in the transcript"
    )


@dataclass
class Agreement:
    gt_confusion: Counter[tuple[str, str]]
    sys_confusion: Counter[tuple[str, str]]
    differences: list[str]


def decision_agreement(files: list[LddxFile]) -> Agreement:
    gt_conf: Counter[tuple[str, str]] = Counter()
    sys_conf: Counter[tuple[str, str]] = Counter()
    diffs: list[str] = []
    for f in files:
        items, turns = system_output(f)
        case_text = str(f["full_transcript"].get("case_description") or "")
        c = classify_differential(f["ground_truth_diagnoses"], items, turns, case_text=case_text)
        theirs_gt, theirs_sys = lddx_decisions(f)
        ours_gt: dict[str | None, str] = {
            d.ground_truth: d.cls for d in c.decisions if d.cls in ("TP", "FN", "AE", "TM-SM")
        }
        for gt, theirs in theirs_gt.items():
            ours = ours_gt.get(gt, "FN")
            gt_conf[(theirs, ours)] += 1
            if ours != theirs:
                why = _reason(f, gt, ours, theirs, c, turns)
                diffs.append(f"{f.name} GT {gt!r}: LDDx {theirs}, clineval {ours} - {why}")
        ours_sys: dict[str, str] = {
            normalize_for_match(d.system): d.cls for d in c.decisions if d.system and d.rank is not None
        }
        for name, theirs in theirs_sys.items():
            ours = ours_sys.get(normalize_for_match(_clean(name)), "?")
            sys_conf[(theirs, ours)] += 1
    return Agreement(gt_conf, sys_conf, diffs)


def _table(conf: Counter[tuple[str, str]], rows: list[str], cols: list[str]) -> str:
    lines = ["LDDx \\ clineval | " + " | ".join(cols) + " | total", "---|" + "---|" * len(cols) + "---"]
    for r in rows:
        cells = [conf.get((r, c), 0) for c in cols]
        lines.append(f"{r} | " + " | ".join(map(str, cells)) + f" | {sum(cells)}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    files = load(Path(argv[1]) if len(argv) > 1 else DEFAULT_DIR)
    print(f"# LDDx agreement ({len(files)} result files)\n\n## 1. LDDx's counts through the formulas\n")
    print("formula | files agreeing | disagreements (stored≠formula)\n---|---|---")
    for key, (agree, total, bad) in formula_agreement(files).items():
        shown = "; ".join(bad[:4]) + (f"; ... (+{len(bad) - 4})" if len(bad) > 4 else "")
        print(f"{key} | {agree}/{total} | {shown}")
    a = decision_agreement(files)
    print("\n## 2. clineval's classification vs LDDx's decisions\n\nGround-truth diagnoses:\n")
    print(_table(a.gt_confusion, ["TP", "FN", "AE"], ["TP", "FN", "AE", "TM-SM"]))
    agree = sum(n for (r, c), n in a.gt_confusion.items() if r == c)
    print(f"\nagreement: {agree}/{sum(a.gt_confusion.values())}\n\nFinal diagnoses (system side):\n")
    print(_table(a.sys_confusion, ["TP", "FP"], ["TP", "FP", "BROADER", "DUP", "?"]))
    print("\n### Differences (ground truth)\n")
    for line in a.differences:
        print(f"- {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
