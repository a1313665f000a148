"""Safe YAML for every file a user hands us: checked on the event stream before anything is built.

``yaml.safe_load`` already refuses Python objects, but it still builds whatever the text describes:
an alias bomb (a few hundred bytes whose aliases expand to billions of values) is fine for PyYAML, which
shares the objects, and fatal for any code that walks the result; a document nested thousands deep
overflows the recursive composer (RecursionError); a duplicate key silently keeps the last value. So
:func:`check_yaml` reads the parser's events (no node, no value is built) and refuses, with file:line:

- tags other than YAML's standard ones (``!!python/...``, custom ``!tag``);
- nesting deeper than :data:`MAX_DEPTH`;
- a key given twice in one mapping (both lines named), and a list or mapping used as a key;
- aliases: refused outright where a file needs none (suites, pipelines), else counted as the values they
  stand for, so a file whose aliases expand past :data:`MAX_EXPANDED` is refused before it is expanded.

It stops at the first problem, so a hostile file costs no more than reading up to that problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clineval.core.errors import DataFileError, UserInputError

MAX_DEPTH = 64  # a suite is ~6 deep; far below Python's recursion limit for whatever walks the result
MAX_EXPANDED = 1_000_000  # values a file may stand for once its aliases are expanded
_STANDARD = "tag:yaml.org,2002:"
STANDARD_TAGS = frozenset(
    {None, "!", *(_STANDARD + t for t in ("str", "int", "float", "bool", "null", "seq", "map", "timestamp"))}
)
_Loader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when installed: faster


@dataclass
class _Frame:
    """One open list or mapping: its expanded size so far and, for a mapping, its keys' lines."""

    anchor: str | None
    is_map: bool
    size: int = 1
    keys: dict[str, int] = field(default_factory=dict)
    expect_key: bool = True


def _line(event: yaml.Event) -> int:
    mark = event.start_mark
    return int(mark.line) + 1 if mark is not None else 0


def _tag_name(tag: str) -> str:
    return "!!" + tag.removeprefix(_STANDARD) if tag.startswith(_STANDARD) else tag


def _short(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


class _Checker:
    def __init__(self, path: str | Path | None, error: type[UserInputError], allow_aliases: bool) -> None:
        self.path, self.error, self.allow_aliases = path, error, allow_aliases
        self.stack: list[_Frame] = []
        self.sizes: dict[str, int] = {}  # anchor -> expanded size (a finished node)
        self.first_anchor: tuple[str, int] | None = None
        self.expanded = 0

    def fail(self, problem: str, line: int | None, hint: str | None = None) -> UserInputError:
        return self.error(problem, path=self.path, line=line, hint=hint)

    def event(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.AliasEvent):
            self.alias(event)
        elif isinstance(event, yaml.ScalarEvent | yaml.SequenceStartEvent | yaml.MappingStartEvent):
            self.node_start(event)
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            self.node_end(self.stack.pop())

    def alias(self, event: yaml.AliasEvent) -> None:
        name = str(event.anchor)
        if not self.allow_aliases:
            raise self.fail(
                f"YAML alias *{name} is not allowed",
                _line(event),
                "write the value out in full (this file needs no anchors or aliases)",
            )
        if name not in self.sizes:  # PyYAML's own message for an alias inside its anchor, or none
            raise self.fail(f"YAML alias *{name} refers to no finished anchor", _line(event))
        self.key_or_value(event, None)
        self.add(self.sizes[name], event)

    def node_start(self, event: yaml.NodeEvent) -> None:
        tag = getattr(event, "tag", None)
        if tag not in STANDARD_TAGS:
            raise self.fail(
                f"YAML tag {_short(_tag_name(str(tag)))} is not allowed",
                _line(event),
                "only plain values, lists and mappings (YAML's standard tags such as !!str)",
            )
        if event.anchor is not None and self.first_anchor is None:
            self.first_anchor = (str(event.anchor), _line(event))
        self.key_or_value(event, event.value if isinstance(event, yaml.ScalarEvent) else None)
        if isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                self.sizes[str(event.anchor)] = 1
            self.add(1, event)
            return
        if len(self.stack) >= MAX_DEPTH:
            raise self.fail(
                f"YAML nested deeper than {MAX_DEPTH} levels",
                _line(event),
                "a configuration file needs a handful of levels",
            )
        self.expanded += 1  # its contents count as they come; its parent adds its size when it ends
        self.stack.append(_Frame(event.anchor, isinstance(event, yaml.MappingStartEvent)))

    def key_or_value(self, event: yaml.Event, scalar: str | None) -> None:
        """In a mapping, every other node is a key: it must be a scalar, and new to that mapping."""
        if not self.stack or not self.stack[-1].is_map:
            return
        frame = self.stack[-1]
        frame.expect_key = not frame.expect_key
        if frame.expect_key:  # this node was a value
            return
        if scalar is None:
            raise self.fail(
                "a mapping key must be a plain value, not an alias, list or mapping", _line(event)
            )
        first = frame.keys.get(scalar)
        if first is not None:
            raise self.fail(
                f"duplicate key {_short(scalar)} (first on line {first}, again on line {_line(event)})",
                _line(event),
                "a key may appear once in a mapping",
            )
        frame.keys[scalar] = _line(event)

    def node_end(self, frame: _Frame) -> None:
        if frame.anchor is not None:
            self.sizes[str(frame.anchor)] = frame.size
        if self.stack:
            self.stack[-1].size += frame.size

    def add(self, size: int, event: yaml.Event) -> None:
        if self.stack:
            self.stack[-1].size += size
        self.expanded += size
        if self.expanded > MAX_EXPANDED:
            raise self.fail(
                f"YAML aliases expand to more than {MAX_EXPANDED:,} values",
                _line(event),
                "a YAML alias bomb? repeat fewer aliases",
            )


def check_yaml(
    text: str,
    *,
    path: str | Path | None,
    error: type[UserInputError] = DataFileError,
    allow_aliases: bool = False,
) -> None:
    """Refuse what this module refuses, reading the parser's events only; raise ``error`` (file:line)."""
    checker = _Checker(path, error, allow_aliases)
    try:
        for event in yaml.parse(text, Loader=_Loader):
            checker.event(event)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        raise error(
            f"invalid YAML: {problem}", path=path, line=mark.line + 1 if mark is not None else None
        ) from None
    if checker.first_anchor is not None and not allow_aliases:
        name, line = checker.first_anchor
        raise error(
            f"YAML anchor &{name} is not allowed",
            path=path,
            line=line,
            hint="write the value out in full (this file needs no anchors or aliases)",
        )


def decode_yaml(data: bytes | str, *, path: str | Path | None, error: type[UserInputError]) -> str:
    """Text of a YAML file's bytes (UTF-8; a BOM is dropped, as YAML itself allows)."""
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise error(f"not UTF-8 text (byte {err.start})", path=path) from None


def safe_load(
    data: bytes | str,
    *,
    path: str | Path | None,
    error: type[UserInputError] = DataFileError,
    allow_aliases: bool = False,
) -> Any:
    """``yaml.safe_load`` after :func:`check_yaml`: the value of a file that passed every check."""
    text = decode_yaml(data, path=path, error=error)
    check_yaml(text, path=path, error=error, allow_aliases=allow_aliases)
    try:
        return yaml.load(text, Loader=_Loader)  # a safe loader, on text that passed the checks
    except (yaml.YAMLError, ValueError, TypeError) as err:  # e.g. ``!!int abc``: a standard tag, a bad value
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or str(err)
        raise error(
            f"invalid YAML: {problem}", path=path, line=mark.line + 1 if mark is not None else None
        ) from None
