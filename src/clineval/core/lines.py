"""Line-oriented input files (JSONL, TREC qrels and runs, topic lists): one reader for every loader.

``str.splitlines()`` also breaks at U+2028, U+2029, U+0085 and a few control characters, which JSON allows
raw inside a string (``json.dumps(ensure_ascii=False)`` writes them as they are), so a valid JSONL record
was cut in two and called malformed, and every later line number was off. Lines here end at ``\\n`` only;
a ``\\r`` before it (Windows files) is dropped. A UTF-8 byte order mark is dropped the same way for every
loader (some accepted it and some refused it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from clineval.core.errors import DataFileError

BOM = "\ufeff"


def decode_text(data: bytes, path: str | Path) -> str:
    """UTF-8 text of a file's bytes, without a leading byte order mark; anything else is a DataFileError."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataFileError(f"not UTF-8 text (byte {err.start})", path=path) from None
    return text.removeprefix(BOM)


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) split at ``\\n`` only, a trailing ``\\r`` removed; a final newline adds
    no empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        yield number, line.removesuffix("\r")


def file_lines(data: bytes, path: str | Path) -> Iterator[tuple[int, str]]:
    """:func:`text_lines` of a file's bytes (UTF-8, BOM dropped)."""
    return text_lines(decode_text(data, path))


def jsonl_values(
    data: bytes, path: str | Path, *, hint: str = "each line must be one JSON object"
) -> Iterator[tuple[int, Any]]:
    """(line number, decoded JSON value) for each non-blank line; a line that is not JSON is an error."""
    for number, line in file_lines(data, path):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataFileError(
                f"malformed JSON: {err.msg} (column {err.colno})", path=path, line=number, hint=hint
            ) from None
        yield number, value


def jsonl_objects(data: bytes, path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`jsonl_values` where every value must be a JSON object."""
    for number, value in jsonl_values(data, path):
        if not isinstance(value, dict):
            raise DataFileError(f"expected a JSON object, got {type(value).__name__}", path=path, line=number)
        yield number, value
