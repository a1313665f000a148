"""Replay a predictions file: ``{"id": ..., "output": <text or structured object>}`` per JSONL line.

The whole file is read and validated when the system is built, so a bad line stops the run before any
scoring (with its line number), not half way through. A case without a prediction becomes a recorded
``missing_prediction`` failure: it counts against the system instead of silently shrinking the dataset.

Only an index is kept (issue 16: a million predictions as pydantic objects took more than 1 GB): the
file is read once in chunks, each line validated and dropped, keeping the normalised id, byte offset and
line number of each prediction; ``call`` reads its line again. A file changed after it was read (its
size, modification time or inode differ, or the line at the offset no longer holds that id) is a
DataFileError, never a different prediction than the one hashed into the run's spec.
"""

from __future__ import annotations

import hashlib
import os
import time
import weakref
from array import array
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict

from clineval.core.case import Case
from clineval.core.errors import DataFileError
from clineval.core.helpers.id_index import CompactIds, HashIndex
from clineval.core.helpers.lines import READ_BUFFER, file_lines, parse_json_line, read_line_at, stream_lines
from clineval.core.output import SystemOutput
from clineval.core.specs import ComponentSpec
from clineval.systems._outputs import OutputFormat, error_from_value, output_from_value, usage_from_value
from clineval.systems._replay import ReplaySystem

SIGNATURE_EVERY_S = 1.0  # how often a read checks that the file is still the one indexed


class PredictionsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    output_field: str = "output"
    id_field: str = "id"
    numeric_ids: bool = False
    output_format: OutputFormat = "structured"


def normalize_id(value: Any, *, numeric_ids: bool) -> str:
    """Ids compare as strings; with ``numeric_ids`` digit-only ids compare as integers ("0007" == "7")."""
    text = str(value).strip()
    return str(int(text)) if numeric_ids and text.isdigit() else text


def _parse_line(
    raw: Any, *, output_field: str, id_field: str, output_format: OutputFormat = "structured"
) -> tuple[Any, SystemOutput]:
    if not isinstance(raw, dict):
        raise ValueError(f"expected a JSON object, got {type(raw).__name__}")
    if id_field not in raw or raw[id_field] is None:
        raise ValueError(f"missing {id_field!r}")
    has_error = raw.get("error") is not None
    if output_field not in raw and not has_error:
        raise ValueError(f"missing {output_field!r}")
    value = raw.get(output_field)
    output = output_from_value(value, output_format) if output_field in raw else SystemOutput()
    update: dict[str, Any] = {}
    if has_error:
        update["error"] = error_from_value(raw["error"])
    if raw.get("latency_s") is not None:
        latency = raw["latency_s"]
        if isinstance(latency, bool) or not isinstance(latency, int | float):
            raise ValueError(f"latency_s must be a number, got {latency!r}")
        update["latency_s"] = float(latency)
    if raw.get("usage") is not None:
        update["usage"] = usage_from_value(raw["usage"])
    return raw[id_field], output.model_copy(update=update) if update else output


def _not_readable(path: Path, exc: OSError) -> DataFileError:
    if isinstance(exc, FileNotFoundError):
        return DataFileError(
            "predictions file not found",
            path=path,
            hint="check the path (relative paths are relative to the suite file)",
        )
    return DataFileError(f"cannot read predictions file: {exc.strerror}", path=path)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _not_readable(path, exc) from None


def _signature(stat: os.stat_result) -> tuple[int, int, int, int]:
    """What changes when a file is edited or replaced: device, inode, size, modification time."""
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _file_signature(path: Path) -> tuple[int, int, int, int]:
    """The file's signature, opening it as :func:`_read_bytes` would (same errors for a missing file)."""
    try:
        with open(path, "rb") as handle:
            return _signature(os.fstat(handle.fileno()))
    except OSError as exc:
        raise _not_readable(path, exc) from None


class _Fields:
    """How one line of a predictions file is read (the options other than the path)."""

    __slots__ = ("id_field", "numeric_ids", "output_field", "output_format")

    def __init__(
        self, output_field: str, id_field: str, numeric_ids: bool, output_format: OutputFormat
    ) -> None:
        self.output_field = output_field
        self.id_field = id_field
        self.numeric_ids = numeric_ids
        self.output_format: OutputFormat = output_format

    def record(self, line: str, path: Path, number: int) -> tuple[str, SystemOutput]:
        """(normalised id, output) of one non-blank line; anything wrong is a DataFileError naming it."""
        raw = parse_json_line(line, path, number)  # syntax, size and depth
        try:
            raw_id, output = _parse_line(
                raw, output_field=self.output_field, id_field=self.id_field, output_format=self.output_format
            )
        except ValueError as exc:
            raise DataFileError(
                str(exc),
                path=path,
                line=number,
                hint=f'expected {{"{self.id_field}": ..., "{self.output_field}": ...}}',
            ) from None
        return normalize_id(raw_id, numeric_ids=self.numeric_ids), output


class _Index:
    """Where each prediction is: its normalised id, byte offset and line number, by position (compact
    columns: ~30 bytes a prediction, not the ~150 of a dict entry and its string)."""

    __slots__ = ("keys", "numbers", "offsets")

    def __init__(self) -> None:
        self.keys = CompactIds()
        self.offsets = array("q")
        self.numbers = array("q")

    def add(self, key: str, number: int, offset: int) -> None:
        self.keys.append(key)
        self.offsets.append(offset)
        self.numbers.append(number)

    def check_unique(self, path: Path) -> HashIndex:
        """The index of the ids; a second line with an id already seen is an error naming both lines (the
        pair whose second line comes first, where a reader going line by line would have stopped)."""
        index = HashIndex(self.keys)
        found = index.first_duplicate()
        if found is not None:
            first, again = found
            number = self.numbers[again]
            key, line = self.keys[again], self.numbers[first]
            problem = f"duplicate id {key!r} (first on line {line}, again on line {number})"
            raise DataFileError(problem, path=path, line=number, hint="keep one prediction per id")
        return index


def _records(
    lines: Iterable[tuple[int, int, str]], path: Path, fields: _Fields, index: _Index
) -> Iterator[tuple[int, int, str, SystemOutput]]:
    """(line number, byte offset, normalised id, output) of every non-blank line, each added to ``index``.
    Duplicate ids are checked by the caller once all are read (``_Index.check_unique``); a bad line is
    reported after any duplicate before it, as a reader going line by line would."""
    for number, offset, line in lines:
        if not line.strip():
            continue
        try:
            key, output = fields.record(line, path, number)
        except DataFileError:
            index.check_unique(path)
            raise
        index.add(key, number, offset)
        yield number, offset, key, output


def read_predictions(
    path: Path,
    *,
    output_field: str = "output",
    id_field: str = "id",
    numeric_ids: bool = False,
    output_format: OutputFormat = "structured",
) -> dict[str, SystemOutput]:
    """Every prediction of a JSONL file by (normalised) id; a bad line raises DataFileError (line number)."""
    return parse_predictions(
        _read_bytes(path),
        path,
        output_field=output_field,
        id_field=id_field,
        numeric_ids=numeric_ids,
        output_format=output_format,
    )


def parse_predictions(
    data: bytes,
    path: Path,
    *,
    output_field: str = "output",
    id_field: str = "id",
    numeric_ids: bool = False,
    output_format: OutputFormat = "structured",
) -> dict[str, SystemOutput]:
    """:func:`read_predictions` of a file's bytes, all in memory (the system keeps only an index)."""
    fields = _Fields(output_field, id_field, numeric_ids, output_format)
    lines = ((number, 0, line) for number, line in file_lines(data, path))  # at \n only, BOM dropped
    index = _Index()
    outputs = {key: output for _, _, key, output in _records(lines, path, fields, index)}
    index.check_unique(path)
    return outputs


class PredictionsSystem(ReplaySystem):
    """Replays recorded outputs; never live, never cached (the file is the cache)."""

    never_suspends = True  # ``call`` reads a line and returns: the runner arms no timeout for it

    def __init__(self, options: PredictionsOptions, base_dir: Path) -> None:
        self.options = options
        self.path = Path(options.path) if Path(options.path).is_absolute() else base_dir / options.path
        self._fields = _Fields(
            options.output_field, options.id_field, options.numeric_ids, options.output_format
        )
        self._signature = _file_signature(self.path)  # before reading: a change while reading is caught
        digest = hashlib.sha256()
        index = _Index()
        for _ in _records(stream_lines(self.path, digest=digest), self.path, self._fields, index):
            pass  # validated, then dropped: only the index is kept
        self._index = index.check_unique(self.path)
        self._keys = index.keys
        self._offsets = index.offsets
        self._numbers = index.numbers
        self._used = bytearray(len(self._offsets))  # 1 where a case asked for that position
        self._handle: BinaryIO | None = None
        self._checked_at = -SIGNATURE_EVERY_S  # the first read checks the file
        args = options.model_dump(mode="json")
        self.spec = ComponentSpec(type="predictions", args=args, content_hash=digest.hexdigest())

    def __len__(self) -> int:
        return len(self._keys)

    async def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _changed(self, number: int, problem: str) -> DataFileError:
        return DataFileError(
            f"{problem}: the predictions file changed after it was read",
            path=self.path,
            line=number,
            hint="do not edit or replace a predictions file during a run; start the run again",
        )

    def _open(self, number: int) -> BinaryIO:
        if self._handle is None:
            try:
                handle = open(self.path, "rb", buffering=READ_BUFFER)  # noqa: SIM115  # kept open until close() (or collection)
            except OSError as exc:
                raise self._changed(number, f"cannot open it again ({exc.strerror})") from None
            weakref.finalize(self, handle.close)
            self._handle = handle
        now = time.monotonic()
        if now - self._checked_at >= SIGNATURE_EVERY_S:  # an fstat per call cost ~10 % of a replayed run
            self._checked_at = now
            if _signature(os.fstat(self._handle.fileno())) != self._signature:
                raise self._changed(number, "size, modification time or inode differ")
        return self._handle

    def _read(self, key: str, position: int) -> SystemOutput:
        number = self._numbers[position]
        handle = self._open(number)
        try:
            line = read_line_at(handle, self._offsets[position], self.path, number)
            found, output = self._fields.record(line, self.path, number)
        except DataFileError as err:
            raise self._changed(number, err.problem) from None
        except OSError as exc:
            raise self._changed(number, f"cannot read it ({exc.strerror})") from None
        if found != key:
            raise self._changed(number, f"the line holds id {_shown(found)}, not {_shown(key)}")
        return output

    async def call(self, case: Case) -> SystemOutput:
        key = normalize_id(case.id, numeric_ids=self.options.numeric_ids)
        position = self._index.get(key)
        if position is None:
            message = f"no prediction with id {case.id} in {self.options.path}"
            return SystemOutput.failure("missing_prediction", message)
        output = self._read(key, position)
        self._used[position] = 1
        return output

    def mark_used(self, case_ids: Iterable[str]) -> None:
        """Count the predictions these cases ask for as used, as their calls would (a run of workers: the
        calls happened in other processes; ``unused_ids`` then warns for the whole run)."""
        for case_id in case_ids:
            position = self._index.get(normalize_id(case_id, numeric_ids=self.options.numeric_ids))
            if position is not None:
                self._used[position] = 1

    def check_cases(self, cases: Iterable[Case]) -> None:
        """Refuse a file none of whose ids matches a case: that is a wrong file, id field or id format (e.g.
        ``"0007"`` vs ``"7"``), not a system that failed on every case. ``cases`` is iterated once (it may
        be a lazy sequence), and only until the first match."""
        first: str | None = None
        as_numbers: set[str] = set()
        for case in cases:
            if normalize_id(case.id, numeric_ids=self.options.numeric_ids) in self._index:
                return
            first = case.id if first is None else first
            as_numbers.add(normalize_id(case.id, numeric_ids=True))
        if first is None:
            return
        if not self._keys:
            raise DataFileError("the predictions file holds no predictions", path=self.path)
        ours, theirs = _shown(self._keys[0]), _shown(first)
        numeric_helps = not self.options.numeric_ids and any(
            normalize_id(k, numeric_ids=True) in as_numbers for k in self._keys
        )
        hint = (
            "set numeric_ids: true on the system (digit-only ids then compare as numbers)"
            if numeric_helps
            else f"check the system's id_field (now {self.options.id_field!r}), numeric_ids: true for ids "
            "that differ only by leading zeros, and that the file belongs to this dataset"
        )
        raise DataFileError(
            f"none of the {len(self._keys)} predictions matches a case id "
            f"(e.g. prediction id {ours}, case id {theirs})",
            path=self.path,
            hint=hint,
        )

    def unused_ids(self) -> list[str]:
        """Predictions that matched no case so far (the runner warns: often a wrong id field or id format)."""
        return sorted(key for key, used in zip(self._keys, self._used, strict=True) if not used)


def _shown(identifier: str, limit: int = 40) -> str:
    """An id for a message: quoted, cut to ``limit`` characters."""
    text = identifier if len(identifier) <= limit else identifier[: limit - 1] + "…"
    return repr(text)


def predictions_system(options: Mapping[str, Any], base_dir: Path) -> PredictionsSystem:
    return PredictionsSystem(PredictionsOptions.model_validate(options), base_dir)
