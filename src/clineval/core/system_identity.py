"""Which tasks of a run ran the same system, and what to call a system (display only; issue 22 item 8).

A mean over tasks ("overall") is a number about one system: averaging GPT-4's and GPT-3.5's accuracy gives a
figure that describes neither. So every report shows the overall only when all its tasks ran one system, and
otherwise says so and shows each system's own mean (where the run stored it) instead.

**Same system** = same ``system.type`` and the same identifying option: the first of ``model``, ``name``,
``target`` (a Python callable), ``url`` (an HTTP service), ``path`` (a predictions, LDDx or TREC run file,
compared by its content hash when the spec has one) that the spec holds; for an ``openai`` system also the
same ``prompt`` and ``system_prompt`` (one model under two prompts is two systems). A system with none of
these options (``recorded``, ``ddxplus_differential``) is identified by all its options. Operational options
(API key variable, headers, timeouts, output field names) never make two systems out of one.

**Its name** (``system_name``): the model, else the ``name`` option, else ``module:function`` of a callable,
else host and path of a URL, else the stem of the file, else the type; two different systems that would get
the same name are told apart by their prompt (or a short hash of their options).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit

from clineval.core import ComponentSpec, RunResult, SuiteSpec, TaskSpec
from clineval.core.specs import canonical_json, sha256_text

IDENTITY_OPTIONS = ("model", "name", "target", "url", "path")
PROMPT_OPTIONS = ("prompt", "system_prompt")  # part of an LLM system's identity


def _identity(spec: ComponentSpec) -> tuple[str, str] | None:
    for option in IDENTITY_OPTIONS:
        value = spec.args.get(option)
        if isinstance(value, str) and value.strip():
            return option, value.strip()
    return None


def system_key(spec: ComponentSpec) -> str:
    """A string equal for two specs exactly when they are the same system (see the module docstring)."""
    found = _identity(spec)
    if found is None:
        return f"{spec.type}|{canonical_json(spec.args)}"
    option, value = found
    if option == "path" and spec.content_hash:  # one file wherever it lies (a relative or absolute path)
        value = spec.content_hash
    prompts = {p: spec.args.get(p) for p in PROMPT_OPTIONS if spec.args.get(p) is not None}
    return f"{spec.type}|{option}={value}" + (f"|{canonical_json(prompts)}" if prompts else "")


def system_name(spec: ComponentSpec) -> str:
    """A short name for the system under test (see the module docstring)."""
    found = _identity(spec)
    if found is None:
        return spec.type.replace("_", " ")
    option, value = found
    if option == "target":  # "package.module:function" -> "module:function"
        module, _, function = value.partition(":")
        return f"{module.rsplit('.', 1)[-1]}:{function}" if function else value
    if option == "url":
        parts = urlsplit(value)
        return (parts.netloc + parts.path.rstrip("/")) or value
    if option == "path":
        return PurePath(value).stem or value
    return value


@dataclass(frozen=True)
class SystemGroup:
    """One system of a run and the tasks that ran it (in suite order)."""

    name: str
    key: str
    type: str
    tasks: list[str]


def _prompt_label(spec: ComponentSpec) -> str:
    prompt = spec.args.get("prompt")
    if isinstance(prompt, str) and prompt:
        return PurePath(prompt).stem
    return sha256_text(canonical_json(spec.args))[:8]


def system_groups(tasks: Iterable[TaskSpec]) -> list[SystemGroup]:
    """The systems of ``tasks``, first appearance first, each with its task ids; names made unique."""
    specs: dict[str, ComponentSpec] = {}
    members: dict[str, list[str]] = {}
    for task in tasks:
        key = system_key(task.system)
        specs.setdefault(key, task.system)
        members.setdefault(key, []).append(task.id)
    names = {key: system_name(spec) for key, spec in specs.items()}
    clashes = {n for n in names.values() if list(names.values()).count(n) > 1}
    for key, spec in specs.items():
        if names[key] in clashes:
            names[key] = f"{names[key]} ({_prompt_label(spec)})"
    return [SystemGroup(names[k], k, specs[k].type, members[k]) for k in members]


def task_system_names(suite: SuiteSpec) -> dict[str, str]:
    """``task id -> system name`` for every task of the suite (the grouping ``overall_by_system`` takes)."""
    return {task: group.name for group in system_groups(suite.tasks) for task in group.tasks}


@dataclass(frozen=True)
class OverallRule:
    """What a report may say about the mean over tasks of ``run``.

    ``one_system``: every task ran one system, so ``run.overall`` is that system's mean over tasks;
    else ``by_system`` holds each system's stored mean over its own tasks (systems with two tasks or more,
    where the run stored them: ``provenance["overall_by_system"]``) and ``note`` says why no mean over all
    tasks is shown."""

    groups: list[SystemGroup]
    one_system: bool
    note: str
    by_system: dict[str, dict[str, Any]]


def stored_by_system(provenance: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``provenance["overall_by_system"]`` as stored at finalize (``metrics.aggregate.overall_by_system``)."""
    found = provenance.get("overall_by_system")
    if not isinstance(found, Mapping):
        return {}
    return {str(k): dict(v) for k, v in found.items() if isinstance(v, Mapping)}


def rule_for(suite: SuiteSpec, task_ids: Iterable[str], provenance: Mapping[str, Any]) -> OverallRule:
    """The overall rule for the tasks ``task_ids`` of a run of ``suite`` (its stored ``provenance``)."""
    wanted = set(task_ids)
    groups = system_groups(t for t in suite.tasks if t.id in wanted)
    if len(groups) <= 1:
        note = f"mean over the tasks of one system ({groups[0].name})" if groups else ""
        return OverallRule(groups, True, note, {})
    stored = stored_by_system(provenance)
    by_system = {g.name: stored[g.name] for g in groups if len(g.tasks) > 1 and g.name in stored}
    listed = "; ".join(f"{g.name}: {', '.join(g.tasks)}" for g in groups)
    note = (
        f"No mean over all tasks: the {len(wanted)} tasks ran {len(groups)} different systems ({listed}), "
        "and a mean across systems describes none of them."
    )
    return OverallRule(groups, False, note, by_system)


def overall_rule(run: RunResult, task_ids: Iterable[str] | None = None) -> OverallRule:
    """:func:`rule_for` the tasks of ``run`` that have aggregates (or ``task_ids``)."""
    return rule_for(run.info.suite, run.aggregates if task_ids is None else task_ids, run.info.provenance)
