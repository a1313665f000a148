"""Line-oriented input files (JSONL, CSV, TREC qrels and runs, topic lists): one reader for every loader.

``str.splitlines()`` also breaks at U+2028, U+2029, U+0085 and a few control characters, which JSON allows
raw inside a string (``json.dumps(ensure_ascii=False)`` writes them as they are), so a valid JSONL record
was cut in two and called malformed, and every later line number was off. Lines here end at ``\\n`` only;
a ``\\r`` before it (Windows files) is dropped. A UTF-8 byte order mark is dropped the same way for every
loader (some accepted it and some refused it).

Limits, the same for every reader: a line may hold at most ``MAX_LINE_BYTES`` (64 MiB; a streamed file is
never read past that much of one line), and a JSON value may nest at most ``MAX_JSON_DEPTH`` (200) arrays
and objects. Past either the line is a one-line DataFileError naming it: ``[[[[...]]]]`` 10,000 deep was a
RecursionError traceback. The depth is checked before parsing, so the parser never recurses that far: a
line with at most 200 brackets cannot be deeper (two ``str.count`` calls: ~1 us on a 400-character line,
~12% of its ``json.loads`` and ~4% of loading a 100k-line JSONL dataset); only a line with more has its
brackets outside strings counted level by level.

Parsing: :func:`loads` is ``json.loads`` made ~3x faster on a dataset or prediction line by msgspec's
decoder, which reads exactly what ``json`` reads to the same values (integers of any size included, where
orjson turns those past 64 bits into floats); what msgspec refuses (``NaN``, ``Infinity``, numbers past the
float range, lone surrogate escapes, malformed JSON) goes to ``json.loads``, so such values and every
error message stay ``json``'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any

import msgspec

from clineval.core.errors import DataFileError

BOM = "\ufeff"
MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_JSON_DEPTH = 200
LINE_HINT = "each line must be one JSON object"
_TOO_LONG = f"line longer than {MAX_LINE_BYTES >> 20} MiB"
_LONG_HINT = f"clineval reads lines of at most {MAX_LINE_BYTES >> 20} MiB: one record per line"
_DEEP_HINT = f"flatten the record: clineval reads JSON nesting at most {MAX_JSON_DEPTH} arrays and objects"

# A JSON string, escapes included; one left open runs to the end of the text (so no input makes this
# regex backtrack), which only a malformed line has, and the parser then names it.
_STRING = re.compile(r'"(?:[^"\\]++|\\.?)*+(?:"|\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]++")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_DECODE = msgspec.json.Decoder().decode


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, through msgspec when it can (see the module docstring)."""
    try:
        return _DECODE(text)
    except msgspec.DecodeError:
        return json.loads(text)


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text nests more than ``limit`` arrays and objects (brackets inside strings do not
    count). Cheap for the usual line: one with at most ``limit`` opening brackets is never too deep."""
    if len(text) <= limit or text.count("[") + text.count("{") <= limit:
        return False
    # Outside the strings: every other piece between quotes, unless a quote is escaped somewhere.
    outside = _STRING.sub("", text) if '\\"' in text else "".join(text.split('"')[::2])
    brackets = _NOT_BRACKET.sub("", outside)
    return len(brackets) > limit and max(accumulate(map(_STEP.__getitem__, brackets))) > limit


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


def jsonl_values(data: bytes, path: str | Path, *, hint: str = LINE_HINT) -> Iterator[tuple[int, Any]]:
    """(line number, decoded JSON value) for each non-blank line; a line that is not JSON is an error."""
    for number, line in file_lines(data, path):
        if line.strip():
            yield number, parse_json_line(line, path, number, hint)


def jsonl_objects(data: bytes, path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`jsonl_values` where every value must be a JSON object."""
    for number, value in jsonl_values(data, path):
        yield number, _object(value, path, number)


def stream_jsonl_objects(path: str | Path, *, digest: Any = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`jsonl_objects` of a file read as it goes (:func:`stream_lines`): a bad line is reported
    when it is reached, before the rest of the file is read. ``digest`` as for :func:`stream_lines`."""
    for number, _, line in stream_lines(path, digest=digest):
        if line.strip():
            yield number, _object(parse_json_line(line, path, number), path, number)


def _object(value: Any, path: str | Path, number: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataFileError(f"expected a JSON object, got {type(value).__name__}", path=path, line=number)
    return value


def _open(path: str | Path) -> Any:
    try:
        return open(path, "rb")  # the caller closes it
    except FileNotFoundError:
        raise DataFileError(
            "file not found", path=path, hint="check the path (relative paths are relative to the suite file)"
        ) from None
    except IsADirectoryError:
        raise DataFileError("is a directory, expected a file", path=path) from None
    except OSError as err:
        raise DataFileError(f"cannot read file: {err.strerror}", path=path) from None


def raw_lines(path: str | Path, *, digest: Any = None) -> Iterator[tuple[int, int, bytes]]:
    """(1-based line number, byte offset, the line's bytes with its line end) of a file read in buffered
    chunks, never whole, and never more than ``MAX_LINE_BYTES`` of one line (a longer line is a
    DataFileError naming it). ``digest`` (a hashlib object) is updated with every byte, so the file's
    hash costs no second read."""
    with _open(path) as handle:
        read = handle.readline
        offset = 0
        number = 0
        while raw := read(_READ_LIMIT):
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                _check_length(raw, path, number)
            if digest is not None:
                digest.update(raw)
            yield number, offset, raw
            offset += len(raw)


_READ_LIMIT = MAX_LINE_BYTES + 3  # the limit, a "\r\n", and one byte to see it passed


def _check_length(raw: bytes, path: str | Path, number: int) -> None:
    if len(raw.removesuffix(b"\n").removesuffix(b"\r")) > MAX_LINE_BYTES:
        raise DataFileError(_TOO_LONG, path=path, line=number, hint=_LONG_HINT)


def stream_lines(path: str | Path, *, digest: Any = None) -> Iterator[tuple[int, int, str]]:
    """(1-based line number, byte offset, line) of :func:`raw_lines`: the same lines as :func:`file_lines`
    (split at ``\\n`` only, ``\\r`` and a leading BOM dropped), each decoded alone (a line that is not
    UTF-8 is a DataFileError naming it). One loop, not a generator over :func:`raw_lines`: this is the
    hot path of every JSONL dataset and predictions file."""
    with _open(path) as handle:
        read = handle.readline
        offset = 0
        number = 0
        while raw := read(_READ_LIMIT):
            number += 1
            if len(raw) > MAX_LINE_BYTES:
                _check_length(raw, path, number)
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


def stream_text_lines(path: str | Path, *, digest: Any = None) -> Iterator[str]:
    """The decoded lines of :func:`raw_lines` with their line ends (what ``csv.reader`` reads: a quoted
    cell may hold a line break); a leading BOM dropped."""
    for number, _, raw in raw_lines(path, digest=digest):
        text = _decode(raw, path, number)
        yield text.removeprefix(BOM) if number == 1 else text


def _decode(body: bytes, path: str | Path, number: int) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataFileError(f"not UTF-8 text (byte {err.start})", path=path, line=number) from None


# Buffer of a file whose lines are read by offset as a run goes: a seek inside the buffer costs nothing,
# and each refill is a system call that gives up the GIL (then waits to take it back from the store's
# writer thread): 8 kB refilled every ~15 lines cost ~17 us a line in a replayed run.
READ_BUFFER = 1 << 20


def read_line_at(handle: Any, offset: int, path: str | Path, number: int) -> str:
    """The line starting at byte ``offset`` of an open binary file (see :func:`stream_lines`)."""
    handle.seek(offset)
    raw = handle.readline(MAX_LINE_BYTES + 3)  # a line grown past the limit since: refused when parsed
    body = raw[:-1] if raw.endswith(b"\n") else raw
    body = body[:-1] if body.endswith(b"\r") else body
    return _decode(body, path, number)


def parse_json_line(line: str, path: str | Path, number: int, hint: str = LINE_HINT) -> Any:
    """The JSON value of one line; a line that is not JSON, longer than ``MAX_LINE_BYTES`` or nested
    deeper than ``MAX_JSON_DEPTH`` is a DataFileError naming it."""
    if len(line) > MAX_LINE_BYTES:
        raise DataFileError(_TOO_LONG, path=path, line=number, hint=_LONG_HINT)
    # json_too_deep's first test, inline: a call per line costs more than the test (a hot path)
    if line.count("[") + line.count("{") > MAX_JSON_DEPTH and json_too_deep(line):
        raise _too_deep(path, number)
    try:
        return loads(line)
    except json.JSONDecodeError as err:
        raise DataFileError(
            f"malformed JSON: {err.msg} (column {err.colno})", path=path, line=number, hint=hint
        ) from None
    except RecursionError:  # a safety net: json_too_deep refuses far shallower values first
        raise _too_deep(path, number) from None


def parse_json_document(data: bytes, path: str | Path) -> Any:
    """The JSON value of a whole file (not JSON lines): a syntax error names its line; nesting deeper
    than ``MAX_JSON_DEPTH`` is refused like a line's."""
    text = decode_text(data, path)
    if json_too_deep(text):
        raise _too_deep(path, None)
    try:
        return loads(text)
    except json.JSONDecodeError as err:
        raise DataFileError(
            f"malformed JSON: {err.msg} (column {err.colno})", path=path, line=err.lineno
        ) from None
    except RecursionError:  # a safety net, as above
        raise _too_deep(path, None) from None


def _too_deep(path: str | Path, number: int | None) -> DataFileError:
    return DataFileError(
        f"JSON nested deeper than {MAX_JSON_DEPTH} levels", path=path, line=number, hint=_DEEP_HINT
    )
