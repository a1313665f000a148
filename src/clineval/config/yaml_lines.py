"""YAML loading that remembers the line of every key and value, for ``file:line`` error messages.

The text is first checked on the parser's events (:func:`clineval.core.helpers.safe_yaml.check_yaml`): no
anchor or alias (a suite needs none, and this builder would expand every one), only standard tags, bounded
nesting (so the recursive build below stays shallow), no duplicate key. Only then is it composed and built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from clineval.core.errors import SuiteError
from clineval.core.helpers.safe_yaml import check_yaml

Loc = tuple[str | int, ...]


class LocatedYaml:
    """A parsed YAML document plus ``lines[loc] = (key line, value line)`` (1-based)."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines: dict[Loc, tuple[int, int]] = {}
        text = text.removeprefix("\ufeff")
        check_yaml(text, path=path, error=SuiteError)
        try:
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            problem = getattr(err, "problem", None) or str(err)
            raise SuiteError(
                f"invalid YAML: {problem}", path=path, line=mark.line + 1 if mark is not None else None
            ) from None
        if node is None:
            raise SuiteError("the suite file is empty", path=path, hint="see examples/ for a suite")
        self.value = self._build(node, (), node.start_mark.line + 1)

    def _build(self, node: yaml.Node, loc: Loc, key_line: int) -> Any:
        self.lines[loc] = (key_line, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key = yaml.SafeLoader(" ").construct_object(key_node)  # scalar key
                out[str(key)] = self._build(value_node, (*loc, str(key)), key_node.start_mark.line + 1)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [
                self._build(item, (*loc, i), item.start_mark.line + 1) for i, item in enumerate(node.value)
            ]
        return yaml.SafeLoader(" ").construct_object(node)

    def value_at(self, loc: Loc) -> Any:
        """The value at ``loc`` (None where there is none)."""
        value: Any = self.value
        for part in loc:
            if isinstance(value, dict) and isinstance(part, str):
                value = value.get(part)
            elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
                value = value[part]
            else:
                return None
        return value

    def line_of(self, loc: Loc, *, key: bool = False) -> int | None:
        """The line of the deepest known prefix of ``loc``."""
        for end in range(len(loc), -1, -1):
            found = self.lines.get(tuple(loc[:end]))
            if found is not None:
                return found[0] if key and end == len(loc) else found[1]
        return None


def load_yaml(path: Path) -> LocatedYaml:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError("suite file not found", path=path) from None
    except (OSError, UnicodeDecodeError) as err:
        raise SuiteError(f"cannot read suite file: {err}", path=path) from None
    return LocatedYaml(path, text)
