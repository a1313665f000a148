"""Reading dataset files with errors that name the file and line."""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from clineval.core.errors import DataFileError
from clineval.core.helpers.lines import (
    jsonl_objects,
    parse_json_document,
    stream_jsonl_objects,
    stream_text_lines,
)

T = TypeVar("T")


def resolve(path: str | Path, base_dir: Path) -> Path:
    """A suite's relative path is relative to the suite's folder."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else base_dir / candidate


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataFileError(
            "file not found", path=path, hint="check the path (relative paths are relative to the suite file)"
        ) from None
    except IsADirectoryError:
        raise DataFileError("is a directory, expected a file", path=path) from None
    except OSError as err:
        raise DataFileError(f"cannot read file: {err.strerror}", path=path) from None


def file_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def iter_jsonl(path: Path, data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yields (1-based line number, object) for each non-blank line; a bad line raises DataFileError.

    Lines end at ``\n`` only (a raw U+2028 inside a JSON string is not a line break); a BOM is dropped."""
    return jsonl_objects(data, path)


def stream_jsonl(path: Path, digest: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`iter_jsonl` of a file read as it goes: a bad line stops the load when it is reached, not
    after the whole file is in memory. ``digest`` (``hashlib.sha256()``) receives every byte:
    ``"sha256:" + digest.hexdigest()`` once the rows are consumed is :func:`file_hash` of the file."""
    return stream_jsonl_objects(path, digest=digest)


def csv_lines(path: Path, digest: Any) -> Iterator[str]:
    """A CSV file's lines for ``csv.reader``, read as they are parsed (see :func:`stream_jsonl`)."""
    return stream_text_lines(path, digest=digest)


def csv_checked(rows: Iterator[T], path: Path, line: Callable[[], int]) -> Iterator[T]:
    """``rows`` of a ``csv`` reader, a ``csv.Error`` (a cell over the csv module's 131,072 characters) being
    a DataFileError naming the line ``line()`` gives: the ``csv.reader``'s ``line_num`` (a DictReader's
    own is that of the last row it returned)."""
    try:
        yield from rows
    except csv.Error as err:
        raise DataFileError(f"malformed CSV: {err}", path=path, line=line()) from None


def load_json(path: Path, data: bytes) -> Any:
    """A whole JSON file (depth-limited like a JSON line: ``clineval.core.helpers.lines``)."""
    return parse_json_document(data, path)


def require(obj: dict[str, Any], key: str, path: Path, line: int | None, kind: type = str) -> Any:
    """A required field; missing or of the wrong type is an error, never an empty string."""
    if key not in obj or obj[key] is None:
        raise DataFileError(f"missing field {key!r}", path=path, line=line)
    value = obj[key]
    if not isinstance(value, kind):
        raise DataFileError(
            f"field {key!r} should be {kind.__name__}, got {type(value).__name__}", path=path, line=line
        )
    return value
