"""A small local CDS pipeline server for tests and examples: ``POST /predict {"id", "input"}`` ->
``{"output": <CDS report>}`` (the shape of ``clineval.core.cds_report.CdsReport``).

Reports come from a script (``reports`` by case id) when one is given; otherwise a deterministic
word-overlap *baseline* builds one: options ranked by how many of their content words occur in the
vignette, the ranking reused as differential, next steps and workup, plus a one-line reasoning chain.
A case without options (a differential-diagnosis vignette: Open-XDDx, DDXPlus) gets instead the packaged
disease names (``clineval/text/data/entity_diseases.txt``) ranked the same way, the top ten as its
differential. The baseline is a stand-in for a real pipeline (it has no medical knowledge: its scores are
a floor, and the disease list was built from the DDXPlus and Open-XDDx names, so its vocabulary is theirs),
so that examples and tests exercise the whole path: HTTP, report parsing, type-aware and DDx scoring, the
MCQ selection step. Before, a DDx case got an empty differential: every DDx score 0 and the run degraded.

``--list-all`` (``list_all=True``) is the gaming stand-in: every section lists every option (in the same
word-overlap order), the report a system would return to be "right" wherever the answer is looked for.
Type-aware scoring must not reward it (see ``clineval.mcq.cds_report``: several options named where
the answer belongs is ``ambiguous`` unless the correct one comes first).

    python -m clineval.testing.cds_pipeline --port 8001 [--reports reports.json] [--latency 0.05] [--list-all]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from clineval.testing.openai_server import HOST, serve_until_signal, serving_in_thread

_WORD = re.compile(r"[a-z][a-z0-9-]+")
DIFFERENTIAL_SIZE = 10
DISEASE_NAMES = "entity_diseases.txt"  # clineval.text's packaged disease names
_COMMON = frozenset(
    "the and with for from that this which following most likely patient of in to a an is".split()
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON}


def baseline_report(question: str, options: Mapping[str, str]) -> dict[str, Any]:
    """Options ranked by word overlap with the question (ties: letter order), spread over the sections."""
    vignette = _words(question)
    ranked = sorted(options.values(), key=lambda text: -len(_words(text) & vignette))
    top = ranked[0] if ranked else "no option"
    return {
        "differential": [
            {"diagnosis": text, "reasoning": f"overlaps the vignette on {len(_words(text) & vignette)} terms"}
            for text in ranked
        ],
        "next_steps": ranked[:2],
        "recommendations": [f"Consider {text}" for text in ranked[:1]],
        "recommended_workup": ranked[1:3],
        "reasoning_chain": [f"The findings are most consistent with {top}."],
        "sources": [{"title": "word-overlap baseline (no medical knowledge)"}],
        "conflicts": [],
    }


@cache
def disease_names() -> tuple[tuple[str, frozenset[str]], ...]:
    """The packaged disease names with their content words (names with none left out)."""
    text = (
        resources.files("clineval.text").joinpath("data", "entity_diseases.txt").read_text(encoding="utf-8")
    )
    names = (line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))
    return tuple((name, frozenset(words)) for name in names if (words := _words(name)))


def vignette_report(vignette: str, size: int = DIFFERENTIAL_SIZE) -> dict[str, Any]:
    """A differential for a case without options: the ``size`` disease names sharing the most content
    words with the vignette (then the larger share of the name's own words; ties in list order)."""
    words = _words(vignette)
    ranked = sorted(
        disease_names(), key=lambda item: (-len(item[1] & words), -len(item[1] & words) / len(item[1]))
    )
    top = [name for name, _ in ranked[:size]]
    return {
        "differential": [{"diagnosis": name} for name in top],
        "next_steps": top[:2],
        "reasoning_chain": [f"The findings share the most words with {top[0]}."],
        "sources": [{"title": "word-overlap baseline over a disease-name list (no medical knowledge)"}],
        "conflicts": [],
    }


def list_all_report(question: str, options: Mapping[str, str]) -> dict[str, Any]:
    """Every option in every section, ranked as the baseline ranks them (a report that never chooses)."""
    ranked = [d["diagnosis"] for d in baseline_report(question, options)["differential"]]
    return {
        "differential": [{"diagnosis": text} for text in ranked],
        "next_steps": ranked,
        "recommendations": ranked,
        "recommended_workup": ranked,
        "reasoning_chain": [f"Consider {text}." for text in ranked],
        "sources": [{"title": "list-all-options stand-in (no medical knowledge)"}],
        "conflicts": [],
    }


class PipelineServer:
    def __init__(
        self, reports: Mapping[str, Any] | None = None, latency_s: float = 0.0, list_all: bool = False
    ) -> None:
        self.reports = dict(reports or {})
        self.latency_s = latency_s
        self.build = list_all_report if list_all else baseline_report
        self.calls: Counter[str] = Counter()
        self.app = web.Application()
        self.app.router.add_post("/predict", self._predict)

    async def _predict(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
            case_id, case_input = str(body["id"]), body["input"]
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "expected {'id': ..., 'input': {...}}"}, status=400)
        self.calls[case_id] += 1
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        report = self.reports.get(case_id)
        options = case_input.get("options") or {}
        if report is None and not options:  # a DDx vignette: a differential from the disease names
            text = " ".join(str(case_input.get(k) or "") for k in ("vignette", "question"))
            report = vignette_report(text)
        if report is None:
            report = self.build(str(case_input.get("question") or ""), options)
        return web.json_response({"id": case_id, "output": report})


@contextmanager
def running_pipeline(
    reports: Mapping[str, Any] | None = None, latency_s: float = 0.0, *, list_all: bool = False
) -> Iterator[tuple[str, PipelineServer]]:
    """Serve from a background thread; yields the /predict URL and the server (``calls`` per case id)."""
    server = PipelineServer(reports, latency_s, list_all)
    with serving_in_thread(server.app, "clineval-cds-pipeline") as port:
        yield f"http://{HOST}:{port}/predict", server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Local CDS pipeline server (127.0.0.1) for examples and tests."
    )
    parser.add_argument("--port", type=int, default=8001, help="0 = a free port (printed as 'PORT <n>')")
    parser.add_argument("--reports", type=Path, help="JSON object: case id -> CDS report")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument(
        "--list-all", action="store_true", help="every option in every section (gaming check)"
    )
    args = parser.parse_args(argv)
    reports = json.loads(args.reports.read_text(encoding="utf-8")) if args.reports else None
    server = PipelineServer(reports, args.latency, args.list_all)
    asyncio.run(serve_until_signal(server.app, args.port))


if __name__ == "__main__":
    main()
