"""A JSONL dataset's cases, read from the file when they are used instead of held in memory.

Loading reads the file once, in chunks: every line is parsed and made into a case (so a bad record is a
one-line DataFileError naming its line before any run starts, as for an in-memory dataset), then only the
case's id, its line's byte offset and its line number are kept: ~80 bytes a case instead of ~2 kB. Reading
the cases parses their lines again. The file's hash is computed in the same pass; a file changed after
loading is caught when a line no longer gives the case id it gave (a DataFileError, never another case).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, overload

from clineval.core import Case
from clineval.core.errors import DataFileError
from clineval.core.helpers.id_index import CompactIds, HashIndex
from clineval.core.helpers.lines import READ_BUFFER, parse_json_line, read_line_at, stream_lines

MakeCase = Callable[[dict[str, Any], int], Case]


def _record(line: str, path: Path, number: int) -> dict[str, Any]:
    value = parse_json_line(line, path, number)
    if not isinstance(value, dict):
        raise DataFileError(f"expected a JSON object, got {type(value).__name__}", path=path, line=number)
    return value


class JsonlCases(Sequence[Case]):
    """The cases of a JSONL file (``load``), or of a subset of its lines (``subset``), in file order."""

    def __init__(
        self, path: Path, make_case: MakeCase, ids: CompactIds, offsets: array[int], numbers: array[int]
    ) -> None:
        self.path = path
        self._make_case = make_case
        self.ids = ids  # the case ids, without parsing (sampling, sharding and resume need only these)
        self._offsets = offsets
        self._numbers = numbers

    @classmethod
    def load(cls, path: Path, make_case: MakeCase) -> tuple[JsonlCases, str]:
        """The cases of ``path`` and the file's ``sha256:`` hash; every record is checked on the way."""
        if path.is_dir():
            raise DataFileError("is a directory, expected a file", path=path)
        digest = hashlib.sha256()
        ids = CompactIds()
        offsets, numbers = array("q"), array("q")
        for number, offset, line in stream_lines(path, digest=digest):
            if not line.strip():
                continue
            try:
                case_id = make_case(_record(line, path, number), number).id
            except DataFileError:
                _check_unique(ids, path)  # a duplicate before the bad line is what a reader meets first
                raise
            ids.append(case_id)
            offsets.append(offset)
            numbers.append(number)
        _check_unique(ids, path)
        return cls(path, make_case, ids, offsets, numbers), "sha256:" + digest.hexdigest()

    def __len__(self) -> int:
        return len(self.ids)

    def _read(self, handle: BinaryIO, index: int) -> Case:
        number = self._numbers[index]
        line = read_line_at(handle, self._offsets[index], self.path, number)
        case = self._make_case(_record(line, self.path, number), number)
        if case.id != self.ids[index]:
            raise DataFileError(
                f"the file changed while in use: line {number} is now case {case.id!r}, "
                f"not {self.ids[index]!r}",
                path=self.path,
                line=number,
                hint="do not edit a dataset while a run reads it; run again",
            )
        return case

    def __iter__(self) -> Iterator[Case]:
        with self.path.open("rb", buffering=READ_BUFFER) as handle:
            for index in range(len(self.ids)):
                yield self._read(handle, index)

    @overload
    def __getitem__(self, index: int) -> Case: ...
    @overload
    def __getitem__(self, index: slice) -> JsonlCases: ...
    def __getitem__(self, index: int | slice) -> Case | JsonlCases:
        if isinstance(index, slice):
            return self.subset(range(len(self.ids))[index])
        with self.path.open("rb", buffering=READ_BUFFER) as handle:
            return self._read(handle, range(len(self.ids))[index])

    def subset(self, positions: Iterable[int]) -> JsonlCases:
        """The cases at ``positions`` (in the order given), still read from the file."""
        chosen = list(positions)
        return JsonlCases(
            self.path,
            self._make_case,
            self.ids.take(chosen),
            array("q", (self._offsets[i] for i in chosen)),
            array("q", (self._numbers[i] for i in chosen)),
        )

    def where_id(self, keep: Callable[[str], bool]) -> JsonlCases:
        """The cases whose id ``keep`` accepts, decided on the ids alone (nothing is parsed)."""
        return self.subset(i for i, case_id in enumerate(self.ids) if keep(case_id))

    def __repr__(self) -> str:
        return f"JsonlCases({str(self.path)!r}, n={len(self.ids)})"


def _check_unique(ids: CompactIds, path: Path) -> None:
    """A case id given twice is an error naming both records (the pair a reader meets first)."""
    found = HashIndex(ids).first_duplicate()
    if found is not None:
        first, again = found
        raise DataFileError(
            f"duplicate case id {ids[again]!r} (records {first + 1} and {again + 1})",
            path=path,
            hint="case ids must be unique",
        )


def case_ids(cases: Sequence[Case]) -> Sequence[str]:
    """The ids of ``cases``: without parsing anything when they are read from a file."""
    return cases.ids if isinstance(cases, JsonlCases) else [c.id for c in cases]


def where_id(cases: Sequence[Case], keep: Callable[[str], bool]) -> Sequence[Case]:
    """The cases whose id ``keep`` accepts; a file-backed sequence stays file-backed."""
    if isinstance(cases, JsonlCases):
        return cases.where_id(keep)
    return [c for c in cases if keep(c.id)]
