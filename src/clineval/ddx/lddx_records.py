"""Reading Local-DDx (LDDx) output files into one record type (``load_lddx_file``).

Two formats (GitHub ``Baglecake/Local-DDx``):

- ``results``: v8 ``ddx_results_Case_<N>_<timestamp>.json``: ``final_diagnoses``, LDDx's own evaluation
  (``tp/fp/fn/caa/ae_count``, ``true_positives`` pairs, ``tp_rate``, ``traditional_recall``,
  ``clinical_reasoning_quality``, ``diagnostic_safety``, ``credibility_scores``, ``round_completion``...) and
  ``full_transcript`` (case text, agents, rounds keyed by name, each with ``responses`` {agent: {content}}
  and ``metadata``: the voting round's ``all_rankings``, the cant-miss round's ``critical_diagnoses``).
  ``<N>`` is the 1-based Open-XDDx ``index`` (checked against the case text for all 41 files; the file's own
  ``case_id`` is wrong once: ``ddx_results_Case_27_*`` says "Case 26"), so ``case_number`` comes from the
  file name, falling back to ``case_id``.
- ``transcript``: v10 ``ddx_transcript_<name>.json``: ``case_index`` (the Open-XDDx index), ``case``,
  ``ground_truth``, ``specialists``, ``results.rounds`` {name: {responses: [{agent_name, specialty,
  content, structured_data}], duration}}, ``results.final_diagnoses``, ``voting_result``,
  ``credibility_scores`` (final/base/valence per specialist).

Each transcript turn keeps the response's ``structured_data`` (what LDDx's own parser read; ``None`` when
it read nothing) as an extra field, for the process metrics (``clineval.ddx.process.transcript``).

Votes are each agent's ballot as LDDx recorded it (v8: the voting round's ``all_rankings``; v10: each voting
response's ``structured_data.rankings``), one line per ranked diagnosis with ``rank`` (1 = first choice) and
Borda ``points`` (ballot length - rank + 1, LDDx v8's scheme; v10 weights ballots by credibility, kept in
``metrics["voting_result"]``). Names are stripped of Markdown ``*``; LDDx's own truncations ("Drug") stay.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from clineval.core.errors import DataFileError
from clineval.core.helpers.lines import parse_json_document
from clineval.core.output import DifferentialItem, StructuredOutput, SystemOutput, TranscriptTurn

LddxFormat = Literal["results", "transcript"]

RESULT_METRICS = (
    "evaluation_method",
    "tp_count",
    "fp_count",
    "fn_count",
    "caa_count",
    "ae_count",
    "total_gt_diagnoses",
    "total_team_diagnoses",
    "tp_rate",
    "caa_weight_applied",
    "traditional_precision",
    "traditional_recall",
    "clinical_reasoning_quality",
    "diagnostic_safety",
    "true_positives",
    "false_positives",
    "false_negatives",
    "credibility_scores",
    "weighting_tier",
    "round_completion",
)
_SUBROUND = re.compile(r"^(.*)_round(\d+)$")
_CASE_IN_NAME = re.compile(r"Case_(\d+)_")
_CASE_IN_ID = re.compile(r"(\d+)\s*$")


class LddxRecord(BaseModel):
    """One LDDx case output. ``metrics`` holds what LDDx computed itself (for comparison, never trusted)."""

    model_config = ConfigDict(frozen=True)

    path: str
    format: LddxFormat
    case_number: int | None
    recorded_case_id: str | None
    case_text: str
    final_diagnoses: list[str]
    alternatives: list[DifferentialItem] = Field(default_factory=list)
    ground_truth: list[str] = Field(default_factory=list)
    ground_truth_findings: dict[str, list[str]] = Field(default_factory=dict)
    transcript: list[TranscriptTurn] = Field(default_factory=list)
    votes: list[dict[str, Any]] = Field(default_factory=list)
    round_durations_s: dict[str, float] = Field(default_factory=dict)
    duration_s: float | None = None
    metrics: dict[str, Any] = Field(default_factory=dict)

    def to_output(self) -> SystemOutput:
        """The SystemOutput: final list (``proposed``) then the cant-miss items (``alternative``)."""
        items = [DifferentialItem(diagnosis=name) for name in self.final_diagnoses]
        structured = StructuredOutput(
            differential=items + list(self.alternatives),
            transcript=list(self.transcript) or None,
            votes=list(self.votes) or None,
        )
        raw = {
            "lddx_file": Path(self.path).name,
            "lddx_format": self.format,
            "lddx_case_id": self.recorded_case_id,
            "case_number": self.case_number,
            **self.metrics,
        }
        return SystemOutput(
            structured=structured,
            latency_s=self.duration_s,
            stage_latency_s=dict(self.round_durations_s),
            raw=raw,
        )


def clean_name(name: Any) -> str:
    return str(name).strip().strip("*").strip()


def _ballots(rankings: dict[str, list[Any]]) -> list[dict[str, Any]]:
    votes = []
    for agent, ranking in rankings.items():
        names = [clean_name(n) for n in ranking if clean_name(n)]
        for rank, name in enumerate(names, start=1):
            votes.append({"agent": agent, "diagnosis": name, "rank": rank, "points": len(names) - rank + 1})
    return votes


def _need(obj: Any, key: str, kind: type, path: Path) -> Any:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind):
        raise DataFileError(f"LDDx file: field {key!r} missing or not a {kind.__name__}", path=path)
    return value


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _parse_results(obj: dict[str, Any], path: Path) -> LddxRecord:
    full = _need(obj, "full_transcript", dict, path)
    rounds = _need(full, "rounds", dict, path)
    specialty = {a.get("name"): a.get("specialty") for a in full.get("agents") or [] if isinstance(a, dict)}
    turns: list[TranscriptTurn] = []
    durations: dict[str, float] = {}
    votes: list[dict[str, Any]] = []
    alternatives: list[DifferentialItem] = []
    final = [clean_name(n) for n in _need(obj, "final_diagnoses", list, path)]
    seen = {n.lower() for n in final}
    for index, (name, rnd) in enumerate(rounds.items(), start=1):
        if not isinstance(rnd, dict):
            raise DataFileError(f"LDDx file: round {name!r} is not an object", path=path)
        phase = str(rnd.get("round_type") or name)
        for key, response in (rnd.get("responses") or {}).items():
            match = _SUBROUND.match(key)
            agent = match.group(1) if match else key
            text = response.get("content") if isinstance(response, dict) else response
            extra: dict[str, Any] = {"subround": int(match.group(2))} if match else {}
            if isinstance(response, dict) and "structured_data" in response:
                extra["structured_data"] = response["structured_data"]
            turns.append(
                TranscriptTurn(
                    round=index,
                    agent=agent,
                    specialty=specialty.get(agent),
                    text=str(text or ""),
                    phase=phase,
                    **extra,
                )
            )
        if (seconds := _number(rnd.get("execution_time"))) is not None:
            durations[name] = seconds
        meta = rnd.get("metadata") or {}
        if "voting" in phase and isinstance(meta.get("all_rankings"), dict):
            votes = _ballots(meta["all_rankings"])
        if phase == "cant_miss":
            for item in meta.get("critical_diagnoses") or []:
                label = clean_name(item.get("diagnosis", "")) if isinstance(item, dict) else ""
                if label and label.lower() not in seen:
                    seen.add(label.lower())
                    reasons = [str(r) for r in item.get("all_reasons") or []]
                    alternatives.append(
                        DifferentialItem(
                            diagnosis=label,
                            status="alternative",
                            reasoning=" ".join(reasons) or None,
                            urgency=item.get("consensus_risk"),
                        )
                    )
    metrics = {key: obj[key] for key in RESULT_METRICS if key in obj}
    # LDDx's own parse of each round's diagnoses (its TempoScore counts these, not ``structured_data``)
    metrics["round_diagnoses"] = {
        name: rnd["metadata"]["all_diagnoses"]
        for name, rnd in rounds.items()
        if isinstance(rnd, dict) and isinstance((rnd.get("metadata") or {}).get("all_diagnoses"), list)
    }
    completion = obj.get("round_completion") or {}
    metrics["tempo_scores"] = completion.get("tempo_scores")
    metrics["debate_quality"] = completion.get("debate_quality")
    metrics["ground_truth_diagnoses"] = obj.get("ground_truth_diagnoses")
    vote_meta = next(
        (r.get("metadata") or {} for r in rounds.values() if "voting" in str(r.get("round_type"))), {}
    )
    metrics["voting_result"] = {"winner": vote_meta.get("winner"), "ranked": vote_meta.get("ranked_results")}
    name_match = _CASE_IN_NAME.search(path.name)
    recorded = obj.get("case_id")
    id_match = _CASE_IN_ID.search(str(recorded or ""))
    number = int(name_match.group(1)) if name_match else int(id_match.group(1)) if id_match else None
    return LddxRecord(
        path=str(path),
        format="results",
        case_number=number,
        recorded_case_id=str(recorded) if recorded is not None else None,
        case_text=str(full.get("case_description") or "").strip(),
        final_diagnoses=final,
        alternatives=alternatives,
        ground_truth=[str(g) for g in obj.get("ground_truth_diagnoses") or []],
        transcript=turns,
        votes=votes,
        round_durations_s=durations,
        duration_s=_number((full.get("sequence_metadata") or {}).get("total_execution_time")),
        metrics=metrics,
    )


def _parse_transcript(obj: dict[str, Any], path: Path) -> LddxRecord:
    results = _need(obj, "results", dict, path)
    rounds = _need(results, "rounds", dict, path)
    n_agents = len(obj.get("specialists") or []) or None
    turns: list[TranscriptTurn] = []
    durations: dict[str, float] = {}
    votes: list[dict[str, Any]] = []
    for index, (name, rnd) in enumerate(rounds.items(), start=1):
        responses = rnd.get("responses") or [] if isinstance(rnd, dict) else []
        split = n_agents is not None and len(responses) > n_agents and len(responses) % n_agents == 0
        rankings: dict[str, list[Any]] = {}
        for position, response in enumerate(responses):
            agent = str(response.get("agent_name") or f"agent {position + 1}")
            extra: dict[str, Any] = {"subround": position // n_agents + 1} if split and n_agents else {}
            if "structured_data" in response:
                extra["structured_data"] = response["structured_data"]
            turns.append(
                TranscriptTurn(
                    round=index,
                    agent=agent,
                    specialty=response.get("specialty"),
                    text=str(response.get("content") or ""),
                    phase=name,
                    **extra,
                )
            )
            data = response.get("structured_data")
            if name == "voting" and isinstance(data, dict) and isinstance(data.get("rankings"), list):
                rankings[agent] = data["rankings"]
        if rankings:
            votes = _ballots(rankings)
        if isinstance(rnd, dict) and (seconds := _number(rnd.get("duration"))) is not None:
            durations[name] = seconds
    case = obj.get("case") or {}
    full_case = results.get("case") or {}
    ground = obj.get("ground_truth") or {}
    findings = {str(k): [str(x) for x in v] for k, v in ground.items() if isinstance(v, list)}
    index_value = obj.get("case_index")
    metrics = {
        "credibility_scores": results.get("credibility_scores"),
        "voting_result": results.get("voting_result"),
        "config": obj.get("config"),
        "ground_truth_diagnoses": list(ground),
    }
    return LddxRecord(
        path=str(path),
        format="transcript",
        case_number=index_value if isinstance(index_value, int) else None,
        recorded_case_id=str(case.get("name")) if case.get("name") is not None else None,
        case_text=str(full_case.get("description") or case.get("description") or "").strip(),
        final_diagnoses=[clean_name(n) for n in _need(results, "final_diagnoses", list, path)],
        ground_truth=list(ground),
        ground_truth_findings=findings,
        transcript=turns,
        votes=votes,
        round_durations_s=durations,
        duration_s=_number(obj.get("duration_seconds")),
        metrics=metrics,
    )


def detect_format(obj: Any) -> LddxFormat | None:
    if isinstance(obj, dict) and "full_transcript" in obj:
        return "results"
    if isinstance(obj, dict) and isinstance(obj.get("results"), dict) and "rounds" in obj["results"]:
        return "transcript"
    return None


def parse_lddx(data: bytes, path: Path, expected: LddxFormat | None = None) -> LddxRecord:
    """An LDDx file's bytes -> LddxRecord; ``expected`` None = detect the format from the content."""
    obj = parse_json_document(data, path)  # syntax, UTF-8 and nesting depth (clineval.core.helpers.lines)
    kind = detect_format(obj)
    if kind is None or (expected is not None and kind != expected):
        wanted = expected or "results or transcript"
        raise DataFileError(
            f"not an LDDx {wanted} file",
            path=path,
            hint="results files have `full_transcript`; v10 transcripts have `results.rounds`",
        )
    return _parse_results(obj, path) if kind == "results" else _parse_transcript(obj, path)


def load_lddx_file(path: str | Path, expected: LddxFormat | None = None) -> LddxRecord:
    """Read one LDDx results or transcript file (for analysis scripts)."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as err:
        raise DataFileError(f"cannot read LDDx file: {err.strerror}", path=file) from None
    return parse_lddx(data, file, expected)
