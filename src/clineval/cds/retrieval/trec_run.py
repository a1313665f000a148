"""Replay a TREC run file (``system: {type: trec_run, path: run.txt}``): ranked documents per query.

A run file has 6 whitespace-separated columns per line: ``query Q0 doc_id rank score tag``. Each case
(its id is the query id) gets ``StructuredOutput.retrieved``: the query's documents ranked as trec_eval
ranks them (``order: trec_eval``, the default): by score, highest first, ties broken by doc_id in
*decreasing* string order; the rank column is ignored (trec_eval's ``form_res_rels``). ``order: rank``
sorts by the rank column instead, ``order: file`` keeps the file order. A doc listed twice for a query is
an error (trec_eval rejects it too). A query missing from the run is a recorded ``missing_prediction``
failure, which the retrieval scorer counts as 0 on every measure, like ``trec_eval -c``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from clineval.core.case import Case
from clineval.core.errors import DataFileError
from clineval.core.helpers.lines import file_lines
from clineval.core.output import RetrievedDoc, StructuredOutput, SystemOutput
from clineval.core.specs import ComponentSpec
from clineval.systems._replay import ReplaySystem

RunOrder = Literal["trec_eval", "rank", "file"]


class TrecRunOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    order: RunOrder = "trec_eval"


def parse_run(data: bytes, path: Path, *, order: RunOrder = "trec_eval") -> dict[str, list[RetrievedDoc]]:
    """``{query_id: ranked RetrievedDoc list}`` from run-file bytes; a bad line raises DataFileError."""
    rows: dict[str, list[tuple[str, int, float]]] = {}
    seen: dict[tuple[str, str], int] = {}
    for number, line in file_lines(data, path):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 6:
            raise DataFileError(
                f"expected 6 fields, got {len(fields)}",
                path=path,
                line=number,
                hint="query Q0 doc_id rank score tag",
            )
        query, _, doc, rank, score, _tag = fields
        try:
            row = (doc, int(rank), float(score))
        except ValueError:
            raise DataFileError(f"bad rank {rank!r} or score {score!r}", path=path, line=number) from None
        if (query, doc) in seen:
            problem = f"document {doc!r} listed twice for query {query!r} (first on line {seen[query, doc]})"
            raise DataFileError(problem, path=path, line=number)
        seen[query, doc] = number
        rows.setdefault(query, []).append(row)
    runs: dict[str, list[RetrievedDoc]] = {}
    for query, docs in rows.items():
        if order == "trec_eval":
            docs = sorted(docs, key=lambda r: r[0], reverse=True)  # stable: then by score, descending
            docs = sorted(docs, key=lambda r: r[2], reverse=True)
        elif order == "rank":
            docs = sorted(docs, key=lambda r: r[1])
        runs[query] = [RetrievedDoc(doc_id=doc, score=score) for doc, _, score in docs]
    return runs


class TrecRunSystem(ReplaySystem):
    """Replays a TREC run; never live, never cached."""

    def __init__(self, options: TrecRunOptions, base_dir: Path) -> None:
        self.options = options
        self.path = Path(options.path) if Path(options.path).is_absolute() else base_dir / options.path
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            raise DataFileError(
                "run file not found", path=self.path, hint="relative paths are relative to the suite file"
            ) from None
        except OSError as exc:
            raise DataFileError(f"cannot read run file: {exc.strerror}", path=self.path) from None
        self._runs = parse_run(data, self.path, order=options.order)
        self._used: set[str] = set()
        self.spec = ComponentSpec(
            type="trec_run",
            args=options.model_dump(mode="json"),
            content_hash=hashlib.sha256(data).hexdigest(),
        )

    def __len__(self) -> int:
        return len(self._runs)

    async def call(self, case: Case) -> SystemOutput:
        docs = self._runs.get(case.id)
        if docs is None:
            return SystemOutput.failure(
                "missing_prediction", f"query {case.id} is not in {self.options.path}"
            )
        self._used.add(case.id)
        return SystemOutput(structured=StructuredOutput(retrieved=docs))

    def unused_ids(self) -> list[str]:
        """Queries of the run that matched no case (trec_eval ignores queries without judgments)."""
        return sorted(set(self._runs) - self._used)


def trec_run_system(options: Mapping[str, Any], base_dir: Path) -> TrecRunSystem:
    return TrecRunSystem(TrecRunOptions.model_validate(options), base_dir)
