"""Process metrics for the LDDx outputs, compared with the numbers LDDx stored in its own files.

    .venv/bin/python scripts/lddx_process_report.py [--data ../shared/data/lddx] [--json OUT.json]

Reads ``results_v8_5/``, ``results_v8_6/`` (``ddx_results_Case_*.json``) and ``transcripts_v10/`` directly,
turns every response into a ``TranscriptTurn`` (phase = the round's name; LDDx's refinement responses
``Name_roundN`` become turns of agent ``Name``) and prints Markdown tables:

1. TempoScore per round: ours (definition of the guide, diagnoses parsed from the text, ``count=unique``)
   and LDDx-compatible (the ``structured_data`` LDDx kept, ``count=total``) against the stored
   ``round_completion.tempo_scores``; ``debate_quality`` against the stored one.
2. Credibility per agent: ours (``per_round`` over every phase, text-parsed) and LDDx-compatible
   (v8: ``per_round`` with LDDx's ``structured_data``, refinement excluded; v10: ``pooled`` with its
   ``structured_data``) against the stored ``credibility_scores``.
3. Consensus: unweighted Borda and credibility-weighted (our credibility) against ``final_diagnoses``.

Deterministic. ``--json`` writes every per-file figure.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from clineval.core import TranscriptTurn
from clineval.ddx.process.consensus import consensus
from clineval.ddx.process.credibility import credibility_scores
from clineval.ddx.process.scorer import DEBATE_PHASES, INDEPENDENT_PHASES, tempo_scores
from clineval.ddx.process.transcript import normalize_diagnosis

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "lddx"
_SUBROUND = re.compile(r"^(?P<agent>.+)_round(?P<n>\d+)$")
TOL = 1e-6


def _turn(agent: str, phase: str, index: int, resp: Mapping[str, Any], *, stored: bool) -> TranscriptTurn:
    extra = {"structured_data": resp.get("structured_data")} if stored else {}
    return TranscriptTurn(round=index, agent=agent, text=str(resp.get("content") or ""), phase=phase, **extra)


def v8_turns(data: Mapping[str, Any], *, stored: bool) -> list[TranscriptTurn]:
    turns = []
    for index, (phase, rnd) in enumerate(data["full_transcript"]["rounds"].items(), start=1):
        for key, resp in rnd.get("responses", {}).items():
            match = _SUBROUND.match(key)
            agent = match["agent"] if match else key
            turns.append(_turn(agent, phase, index, resp, stored=stored))
    return turns


def v10_turns(data: Mapping[str, Any], *, stored: bool) -> list[TranscriptTurn]:
    turns = []
    for index, (phase, rnd) in enumerate(data["results"]["rounds"].items(), start=1):
        for resp in rnd.get("responses", []):
            turns.append(_turn(str(resp["agent_name"]), phase, index, resp, stored=stored))
    return turns


def _vote_ranking(text: str) -> list[str] | None:
    """The ``"vote_ranking": [...]`` list of a voting response's JSON, if it has one."""
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = json.JSONDecoder().raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("vote_ranking"), list):
            return [str(x) for x in obj["vote_ranking"]]
    return None


def v8_votes(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each agent's ranking: the JSON ``vote_ranking`` of its response, else LDDx's parsed ``all_rankings``
    (LDDx's parser cuts names at the first hyphen: "**Drug" for "Drug-Induced Vasculitis")."""
    voting = data["full_transcript"]["rounds"].get("post_debate_voting", {})
    rankings = dict(voting.get("metadata", {}).get("all_rankings", {}))
    for agent, resp in voting.get("responses", {}).items():
        parsed = _vote_ranking(str(resp.get("content") or ""))
        if parsed:
            rankings[agent] = parsed
    return [
        {"agent": agent, "diagnosis": dx, "rank": i}
        for agent, ranking in rankings.items()
        for i, dx in enumerate(ranking, start=1)
        if normalize_diagnosis(dx)
    ]


def v10_votes(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    votes = []
    for resp in data["results"]["rounds"].get("voting", {}).get("responses", []):
        ranking = (resp.get("structured_data") or {}).get("rankings") or []
        for i, dx in enumerate(ranking[:3], start=1):
            votes.append({"agent": resp["agent_name"], "diagnosis": dx, "rank": i, "points": 4 - i})
    return votes


def _same(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) < TOL


def analyse_v8(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    text_turns, stored_turns = v8_turns(data, stored=False), v8_turns(data, stored=True)
    stored_tempo: dict[str, float] = data["round_completion"]["tempo_scores"]
    ours = tempo_scores(text_turns)
    compat = tempo_scores(stored_turns, count="total")
    cred_ours = credibility_scores(text_turns, independent_phases=INDEPENDENT_PHASES)
    cred_compat = credibility_scores(
        stored_turns, independent_phases=INDEPENDENT_PHASES, exclude_phases=DEBATE_PHASES
    )
    votes = v8_votes(data)
    return {
        "file": f"{path.parent.name}/{path.name}",
        "tempo_stored": stored_tempo,
        "tempo_ours": ours,
        "tempo_compat": compat,
        "debate_quality_stored": data["round_completion"].get("debate_quality"),
        "independent_metadata_total": data["full_transcript"]["rounds"]
        .get("team_independent_differentials", {})
        .get("metadata", {})
        .get("total_diagnoses"),
        "cred_stored": data["credibility_scores"],
        "cred_ours": cred_ours,
        "cred_compat": cred_compat,
        "final_diagnoses": data.get("final_diagnoses", []),
        "consensus_unweighted": [i.diagnosis for i in consensus(votes)],
        "consensus_weighted": [i.diagnosis for i in consensus(votes, cred_ours)],
        "consensus_weighted_compat": [i.diagnosis for i in consensus(votes, cred_compat)],
    }


def analyse_v10(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    text_turns, stored_turns = v10_turns(data, stored=False), v10_turns(data, stored=True)
    stored_cred = {a: v["final_score"] for a, v in data["results"]["credibility_scores"].items()}
    cred_ours = credibility_scores(text_turns, independent_phases=INDEPENDENT_PHASES)
    cred_compat = credibility_scores(stored_turns, scheme="pooled")
    votes = v10_votes(data)
    stored_ranked = data["results"]["voting_result"]["ranked"]
    weighted_compat = consensus(votes, stored_cred)
    return {
        "file": f"{path.parent.name}/{path.name}",
        "tempo_stored": {},
        "tempo_ours": tempo_scores(text_turns),
        "tempo_compat": tempo_scores(stored_turns, count="total"),
        "cred_stored": stored_cred,
        "cred_ours": cred_ours,
        "cred_compat": cred_compat,
        "final_diagnoses": data["results"].get("final_diagnoses", []),
        "voting_stored": stored_ranked,
        "voting_scores_reproduced": len(weighted_compat) == len(stored_ranked)
        and all(_same(i.score, s) for i, (_, s) in zip(weighted_compat, stored_ranked, strict=False)),
        "consensus_unweighted": [i.diagnosis for i in consensus(votes)],
        "consensus_weighted": [i.diagnosis for i in consensus(votes, cred_ours)],
        "consensus_weighted_compat": [i.diagnosis for i in weighted_compat],
    }


def load_all(root: Path) -> list[dict[str, Any]]:
    rows = [
        analyse_v8(p) for sub in ("results_v8_5", "results_v8_6") for p in sorted((root / sub).glob("*.json"))
    ]
    return rows + [analyse_v10(p) for p in sorted((root / "transcripts_v10").glob("*.json"))]


def agreement(rows: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per round name: ``n`` stored values, ``ours`` / ``compat`` exact agreements; ``credibility`` too."""
    out: dict[str, Counter[str]] = {}
    for row in rows:
        for phase, value in row["tempo_stored"].items():
            c = out.setdefault(phase, Counter())
            c["n"] += 1
            c["ours"] += _same(row["tempo_ours"].get(phase), value)
            c["compat"] += _same(row["tempo_compat"].get(phase), value)
        if "debate_quality_stored" in row:
            c = out.setdefault("debate_quality", Counter())
            c["n"] += 1
            c["ours"] += _same(
                row["tempo_ours"].get("refinement_and_justification"), row["debate_quality_stored"]
            )
            c["compat"] += _same(
                row["tempo_compat"].get("refinement_and_justification"), row["debate_quality_stored"]
            )
        version = "credibility_v10" if row["file"].startswith("transcripts_v10") else "credibility_v8"
        c = out.setdefault(version, Counter())
        for agent, value in row["cred_stored"].items():
            c["n"] += 1
            c["ours"] += _same(row["cred_ours"].get(agent), value)
            c["compat"] += _same(row["cred_compat"].get(agent), value)
    return out


def _top1(names: list[str]) -> str | None:
    return normalize_diagnosis(names[0]) if names else None


def print_report(rows: list[dict[str, Any]]) -> None:
    print(f"# LDDx process metrics: {len(rows)} files\n")
    print("## Exact agreement with the values stored by LDDx (|diff| < 1e-6)\n")
    print("| round / figure | stored values | ours | LDDx-compatible |\n| --- | ---: | ---: | ---: |")
    for key, c in agreement(rows).items():
        print(f"| {key} | {c['n']} | {c['ours']} | {c['compat']} |")
    print("\n## Independent-differentials TempoScore per file\n")
    print("| file | stored | LDDx total_diagnoses | ours (unique, text) | compatible (total) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        phase = next((p for p in row["tempo_ours"] if p in INDEPENDENT_PHASES), None)
        if phase is None:
            continue
        stored = row["tempo_stored"].get(phase)
        print(
            f"| {row['file']} | {'-' if stored is None else f'{stored:.1f}'} | "
            f"{row.get('independent_metadata_total', '-')} | {row['tempo_ours'][phase]:.1f} | "
            f"{row['tempo_compat'][phase]:.1f} |"
        )
    print(
        "\n## Debate TempoScore (ours) per file\n\n"
        "| file | debate phase | ours | stored |\n| --- | --- | ---: | ---: |"
    )
    for row in rows:
        for phase, value in row["tempo_ours"].items():
            if phase in DEBATE_PHASES:
                stored = row["tempo_stored"].get(phase)
                print(f"| {row['file']} | {phase} | {value:.3f} | {'-' if stored is None else stored} |")
    print("\n## Consensus: top-1 of each list against LDDx's final_diagnoses[0]\n")
    print(
        "| file | final[0] | unweighted | weighted (ours) | weighted (compat) |\n"
        "| --- | --- | --- | --- | --- |"
    )
    same = Counter[str]()
    for row in rows:
        final = _top1(row["final_diagnoses"])
        cells = [row["consensus_unweighted"], row["consensus_weighted"], row["consensus_weighted_compat"]]
        for name, cell in zip(("unweighted", "weighted", "compat"), cells, strict=True):
            same[name] += _top1(cell) == final
        same["weighted_vs_unweighted"] += _top1(cells[0]) == _top1(cells[1])
        shown = " | ".join(c[0] if c else "-" for c in cells)
        print(f"| {row['file']} | {row['final_diagnoses'][0] if row['final_diagnoses'] else '-'} | {shown} |")
    print(f"\nTop-1 equal to final[0]: {dict(same)} of {len(rows)} files.")
    v10 = [r for r in rows if "voting_scores_reproduced" in r]
    print(
        "v10 weighted Borda scores reproduced exactly: "
        f"{sum(r['voting_scores_reproduced'] for r in v10)}/{len(v10)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = load_all(args.data)
    print_report(rows)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1, sort_keys=True), encoding="utf-8")


if __name__ == "__main__":
    main()
