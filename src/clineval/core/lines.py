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


def stream_lines(path: str | Path, *, digest: Any = None) -> Iterator[tuple[int, int, str]]:
    """(1-based line number, byte offset, line) of a file read in buffered chunks, never whole: the same
    lines as :func:`file_lines` (split at ``\\n`` only, ``\\r`` and a leading BOM dropped), each decoded
    alone (a line that is not UTF-8 is a DataFileError naming it). ``digest`` (a hashlib object) is updated
    with every byte, so the file's hash costs no second read."""
    try:
        handle = open(path, "rb")  # noqa: SIM115  # closed below, also when the caller stops early
    except FileNotFoundError:
        raise DataFileError(
            "file not found", path=path, hint="check the path (relative paths are relative to the suite file)"
        ) from None
    except OSError as err:
        raise DataFileError(f"cannot read file: {err.strerror}", path=path) from None
    with handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            if digest is not None:
                digest.update(raw)
            start = offset
            offset += len(raw)
            body = raw[:-1] if raw.endswith(b"\n") else raw
            body = body[:-1] if body.endswith(b"\r") else body
            if number == 1 and body.startswith(b"\xef\xbb\xbf"):
                body, start = body[3:], start + 3
            try:
                yield number, start, body.decode("utf-8")
            except UnicodeDecodeError as err:
                raise DataFileError(f"not UTF-8 text (byte {err.start})", path=path, line=number) from None


# Buffer of a file whose lines are read by offset as a run goes: a seek inside the buffer costs nothing,
# and each refill is a system call that gives up the GIL (then waits to take it back from the store's
# writer thread): 8 kB refilled every ~15 lines cost ~17 us a line in a replayed run.
READ_BUFFER = 1 << 20


def read_line_at(handle: Any, offset: int, path: str | Path, number: int) -> str:
    """The line starting at byte ``offset`` of an open binary file (see :func:`stream_lines`)."""
    handle.seek(offset)
    raw = handle.readline()
    body = raw[:-1] if raw.endswith(b"\n") else raw
    body = body[:-1] if body.endswith(b"\r") else body
    try:
        return str(body.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise DataFileError(f"not UTF-8 text (byte {err.start})", path=path, line=number) from None


def parse_json_line(
    line: str, path: str | Path, number: int, hint: str = "each line must be one JSON object"
) -> Any:
    """The JSON value of one line (a line that is not JSON is a DataFileError naming it)."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as err:
        raise DataFileError(
            f"malformed JSON: {err.msg} (column {err.colno})", path=path, line=number, hint=hint
        ) from None
