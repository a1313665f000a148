"""Reading dataset files with errors that name the file and line."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clineval.core.errors import DataFileError
from clineval.core.lines import jsonl_objects


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


def load_json(path: Path, data: bytes) -> Any:
    try:
        return json.loads(data)
    except json.JSONDecodeError as err:
        raise DataFileError(
            f"malformed JSON: {err.msg} (column {err.colno})", path=path, line=err.lineno
        ) from None
    except UnicodeDecodeError as err:
        raise DataFileError(f"not UTF-8 text (byte {err.start})", path=path) from None


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
