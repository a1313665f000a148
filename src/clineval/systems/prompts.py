"""Versioned prompt templates (Jinja2) that turn a Case into chat messages.

Templates ship in ``clineval/systems/prompts/<name>.j2``; a suite may also name its own ``.j2`` file. A
template defines ``{% block system %}`` (optional) and ``{% block user %}`` (or is one user message). The
sha256 of the template source is recorded as the system's ``content_hash``: changing a prompt changes the
run's spec, so results from two prompt versions are never confused. Released templates are never edited;
a change gets a new name (``mcq_cot_v2``).

A case whose dataset gives it a conversation to send (``input.data["conversation"]``, a list of
``{role, content}``, with ``input.data["send_conversation"]`` true: HealthBench) is sent as that
conversation, its roles and contents unchanged, as openai/simple-evals' ``healthbench_eval.py`` sends
``row["prompt"]``; the template contributes only its system message (its ``system`` block or the
system's ``system_prompt``), put first as simple-evals' sampler puts its ``system_message``.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import jinja2.runtime

from clineval.core.case import Case
from clineval.core.errors import DataFileError, SuiteError
from clineval.core.specs import sha256_text

_NAME = re.compile(r"^[A-Za-z0-9_]+$")
_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False)

Message = dict[str, str]


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    source: str
    content_hash: str
    template: jinja2.Template = field(repr=False, compare=False)
    # The template's globals (a ChainMap over the private environment's, which nothing changes) as one dict:
    # ``Template.new_context`` iterates the ChainMap twice per render (5.7 of a render's 9.7 us).
    _globals: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_globals", dict(self.template.globals))

    def render(
        self, case: Case, *, system_prompt: str | None = None, conversation: bool = True
    ) -> list[Message]:
        """Chat messages for one case; ``system_prompt`` replaces the template's system block. A case with
        a conversation to send is sent as it (see the module docstring) unless ``conversation`` is False:
        then the template renders its flattened text (``question``) like any other case."""
        turns = conversation_messages(case) if conversation else None
        ctx = self._context(case)
        blocks = self.template.blocks
        if system_prompt is None and "system" in blocks:
            system_prompt = "".join(blocks["system"](ctx)).strip()
        messages: list[Message] = [{"role": "system", "content": system_prompt}] if system_prompt else []
        if turns is not None:
            return messages + turns
        user_block = blocks.get("user")
        user = "".join(user_block(ctx) if user_block else self.template.root_render_func(ctx)).strip()
        messages.append({"role": "user", "content": user})
        return messages

    def _context(self, case: Case) -> jinja2.runtime.Context:
        inp = case.input
        variables = {
            "case": case,
            "question": inp.question,
            "options": inp.options,
            "context": inp.context,
            "vignette": inp.vignette,
            "stem": inp.stem,
            "data": inp.data,
            "metadata": case.metadata,
        }
        template = self.template  # the context ``template.new_context(variables)`` makes, built cheaper
        return jinja2.runtime.new_context(
            template.environment, template.name, template.blocks, variables, False, self._globals
        )


def conversation_messages(case: Case) -> list[Message] | None:
    """The conversation a case is to be sent as (roles and contents unchanged), or None if it has none."""
    data = case.input.data
    turns = data.get("conversation")
    if data.get("send_conversation") is not True or not isinstance(turns, list) or not turns:
        return None
    messages: list[Message] = []
    for turn in turns:
        if not isinstance(turn, dict) or not isinstance(turn.get("content"), str):
            raise DataFileError(f"case {case.id}: a conversation turn should be {{role, content: text}}")
        messages.append({"role": str(turn.get("role")), "content": turn["content"]})
    return messages


def _compile(name: str, source: str, path: str) -> PromptTemplate:
    try:
        template = _ENV.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        problem = f"prompt template syntax error: {exc.message}"
        raise DataFileError(problem, path=path, line=exc.lineno) from None
    return PromptTemplate(name=name, source=source, content_hash=sha256_text(source), template=template)


def available_prompts() -> list[str]:
    folder = importlib.resources.files("clineval.systems") / "prompts"
    return sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".j2"))


@functools.lru_cache(maxsize=32)
def _packaged(name: str) -> PromptTemplate:
    resource = importlib.resources.files("clineval.systems") / "prompts" / f"{name}.j2"
    if not _NAME.match(name) or not resource.is_file():
        raise SuiteError(
            f"unknown prompt template {name!r}",
            hint=f"use one of: {', '.join(available_prompts())}, or a path to a .j2 file",
        )
    return _compile(name, resource.read_text(encoding="utf-8"), f"clineval/systems/prompts/{name}.j2")


def load_prompt(name_or_path: str, base_dir: Path | None = None) -> PromptTemplate:
    """A packaged template by name (``mcq_cot_v1``) or a ``.j2`` file (relative to ``base_dir``)."""
    if not name_or_path.endswith(".j2") and "/" not in name_or_path:
        return _packaged(name_or_path)
    path = Path(name_or_path)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:
        raise DataFileError(
            "prompt template not found", path=path, hint="relative paths are relative to the suite file"
        ) from None
    return _compile(path.stem, source, str(path))
