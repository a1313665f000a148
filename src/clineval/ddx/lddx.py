"""``type: lddx``: Local-DDx (LDDx) multi-agent outputs replayed as a system under test.

Options: ``path`` (a folder, a glob, or one file; relative to the suite), ``format`` (``results`` = v8
``ddx_results_Case_*.json``, ``transcript`` = v10 ``ddx_transcript_*.json``, ``auto`` = both, told apart by
content) and ``id_from``:

- ``case_number`` (default): the case id is the Open-XDDx ``index`` LDDx ran (results: ``<N>`` of the file
  name; transcripts: ``case_index``). Verified: each file's case text is the Open-XDDx ``patient_info`` of
  that index (41/41 results, 5/5 transcripts; 4 results files differ by one character: a dropped apostrophe
  or an extra space). Digit-only case ids compare as integers ("007" == "7").
- ``text_match``: the case's vignette (or question) is matched to the file's case text after lower-casing
  and dropping everything but letters and digits (so the one-character differences above still match);
  for datasets whose ids are not Open-XDDx indices.

Each file becomes a SystemOutput (see ``LddxRecord.to_output``): ``structured.differential`` = the final list
(``proposed``) then the cant-miss round's critical diagnoses (``alternative``; v8 only, v10 keeps them as
free text in the transcript); ``transcript`` = every round's responses (``round`` = 1-based position of the
round, ``phase`` = its name, ``subround`` for the debate's inner rounds); ``votes``; ``raw`` = LDDx's own
stored metrics. Two files for the same case is an error (point ``path`` at one version's folder).
"""

from __future__ import annotations

import glob
import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from clineval.core.case import Case
from clineval.core.errors import DataFileError
from clineval.core.output import SystemOutput
from clineval.core.specs import ComponentSpec
from clineval.ddx.lddx_records import LddxRecord, parse_lddx
from clineval.systems._replay import ReplaySystem

PATTERNS: dict[str, tuple[str, ...]] = {
    "results": ("ddx_results_*.json",),
    "transcript": ("ddx_transcript_*.json",),
    "auto": ("ddx_results_*.json", "ddx_transcript_*.json"),
}


class LddxOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    format: Literal["results", "transcript", "auto"] = "auto"
    id_from: Literal["case_number", "text_match"] = "case_number"


def text_key(text: str) -> str:
    """Case text compared without case, spacing or punctuation."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def lddx_files(path: Path, fmt: str) -> list[Path]:
    """The files ``path`` names: a glob, a folder (this format's file patterns) or one file."""
    if any(ch in str(path) for ch in "*?["):
        files = [Path(p) for p in glob.glob(str(path))]
    elif path.is_dir():
        files = [f for pattern in PATTERNS[fmt] for f in path.glob(pattern)]
    elif path.is_file():
        files = [path]
    else:
        raise DataFileError("LDDx path not found", path=path, hint="a folder, a glob or one file")
    files = sorted({f for f in files if f.is_file()})
    if not files:
        raise DataFileError(
            f"no LDDx {fmt} files here", path=path, hint=f"expected {', '.join(PATTERNS[fmt])}"
        )
    return files


class LddxSystem(ReplaySystem):
    """Replays LDDx outputs; never live, never cached (the files are the cache)."""

    def __init__(self, options: LddxOptions, base_dir: Path) -> None:
        self.options = options
        root = Path(options.path).expanduser()
        root = root if root.is_absolute() else base_dir / root
        expected = None if options.format == "auto" else options.format
        digest = hashlib.sha256()
        self.records: dict[str, LddxRecord] = {}
        for file in lddx_files(root, options.format):
            data = file.read_bytes()
            digest.update(file.name.encode() + b"\0" + data + b"\0")
            record = parse_lddx(data, file, expected)
            key = self._record_key(record, file)
            if key in self.records:
                raise DataFileError(
                    f"two LDDx files for case {key}: {Path(self.records[key].path).name} and {file.name}",
                    path=file,
                    hint="point `path` at one version's folder (e.g. results_v8_6)",
                )
            self.records[key] = record
        self._outputs = {key: record.to_output() for key, record in self.records.items()}
        self._used: set[str] = set()
        args = options.model_dump(mode="json")
        self.spec = ComponentSpec(type="lddx", args=args, content_hash=digest.hexdigest())

    def _record_key(self, record: LddxRecord, file: Path) -> str:
        if self.options.id_from == "text_match":
            if not record.case_text:
                raise DataFileError("LDDx file has no case text to match", path=file)
            return text_key(record.case_text)
        if record.case_number is None:
            raise DataFileError(
                "cannot tell the case number", path=file, hint="use id_from: text_match for this file"
            )
        return str(record.case_number)

    def case_key(self, case: Case) -> str:
        if self.options.id_from == "text_match":
            return text_key(case.input.vignette or case.input.question or "")
        text = case.id.strip()
        return str(int(text)) if text.isdigit() else text

    def __len__(self) -> int:
        return len(self.records)

    async def call(self, case: Case) -> SystemOutput:
        key = self.case_key(case)
        output = self._outputs.get(key)
        if output is None:
            how = "case text" if self.options.id_from == "text_match" else "case number"
            return SystemOutput.failure("missing_prediction", f"no LDDx file for case {case.id} (by {how})")
        self._used.add(key)
        return output

    def unused_ids(self) -> list[str]:
        """Files that matched no case so far (by case number, or file name under text matching)."""
        unused = sorted(set(self.records) - self._used)
        if self.options.id_from == "text_match":
            return sorted(Path(self.records[k].path).name for k in unused)
        return unused


def lddx_system(options: Mapping[str, Any], base_dir: Path) -> LddxSystem:
    return LddxSystem(LddxOptions.model_validate(options), base_dir)
