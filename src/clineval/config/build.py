"""Suite file -> SuiteSpec and built tasks (cases, system, scorers), every object through its registry."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from clineval.config.annotate import ANNOTATORS
from clineval.config.errors import suite_error
from clineval.config.suite_model import SuiteFile, TaskEntry
from clineval.config.yaml_lines import Loc, LocatedYaml, load_yaml
from clineval.core import Case, ComponentSpec, Scorer, SuiteSpec, System, TaskSpec
from clineval.core.errors import SuiteError
from clineval.counterfactual.task import CounterfactualOption, check_cases, key_of, sample_groups
from clineval.datasets import DATASETS, sample_cases
from clineval.datasets.hf import UnpinnedRevisionWarning
from clineval.datasets.lazy_cases import JsonlCases
from clineval.runner.judging import JudgeStep
from clineval.runner.selection import SelectionStep
from clineval.scoring.registry import SCORERS
from clineval.systems.registry import SYSTEMS

R = TypeVar("R")


@dataclass
class BuiltTask:
    spec: TaskSpec
    cases: Sequence[Case]  # a JSONL file's cases are read from it when used (datasets.lazy_cases)
    system: System
    scorers: list[Scorer]
    selection: SelectionStep | None = None
    judge: JudgeStep | None = None
    warnings: list[str] = field(default_factory=list)  # raised while loading (go to the run's provenance)


@dataclass
class BuiltSuite:
    spec: SuiteSpec
    tasks: list[BuiltTask]


def _fields(model: type[BaseModel]) -> list[str]:
    return list(model.model_fields)


def _validated(doc: LocatedYaml, loc: Loc, call: Callable[[], R], known: list[str] | None = None) -> R:
    try:
        return call()
    except ValidationError as err:
        raise suite_error(err, doc, loc, known or []) from None


def _named_entries(raw: list[str | dict[str, dict[str, Any] | None]]) -> list[tuple[str, dict[str, Any]]]:
    """``name`` or ``{name: {options}}`` entries (scorers, annotators) as (name, options)."""
    entries: list[tuple[str, dict[str, Any]]] = []
    for entry in raw:
        if isinstance(entry, str):
            entries.append((entry, {}))
        else:
            ((name, options),) = entry.items()
            entries.append((name, dict(options or {})))
    return entries


def _build_task(doc: LocatedYaml, index: int, task: TaskEntry, limit: int | None, seed: int) -> BuiltTask:
    base = doc.path.parent
    loc: Loc = ("tasks", index)
    ds_loc, sys_loc = (*loc, "dataset"), (*loc, "system")
    loader = DATASETS.get(task.dataset.format, path=str(doc.path), line=doc.line_of((*ds_loc, "format")))
    with warnings.catch_warnings(record=True) as caught:  # e.g. an unpinned Hugging Face revision
        warnings.simplefilter("always", UnpinnedRevisionWarning)
        dataset = _validated(doc, ds_loc, lambda: loader(task.dataset.options(), base))
    load_warnings = [
        f"task {task.id}: {w.message}" for w in caught if issubclass(w.category, UnpinnedRevisionWarning)
    ]
    factory = SYSTEMS.get(task.system.type, path=str(doc.path), line=doc.line_of((*sys_loc, "type")))
    system = _validated(doc, sys_loc, lambda: factory(task.system.options(), base))
    scorers, scorer_specs = [], []
    for i, (name, options) in enumerate(_named_entries(task.scorers)):
        scorer_loc = (*loc, "scorers", i)
        make = SCORERS.get(name, path=str(doc.path), line=doc.line_of(scorer_loc))
        scorers.append(_validated(doc, (*scorer_loc, name), lambda m=make, o=options: m(o)))  # type: ignore[misc]
        scorer_specs.append(ComponentSpec(type=name, args=options))
    counterfactual = _counterfactual(doc, loc, task, scorer_specs, dataset.cases)
    if counterfactual is not None and limit is not None:  # --limit counts base questions (no half pairs)
        cases = _sample_groups(dataset.cases, counterfactual, limit, seed)
    else:
        cases = sample_cases(dataset.cases, limit, seed)
    annotator_specs = []
    for i, (name, options) in enumerate(_named_entries(task.annotate)):
        annotate_loc = (*loc, "annotate", i)
        make_annotator = ANNOTATORS.get(name, path=str(doc.path), line=doc.line_of(annotate_loc))
        annotate, annotator_spec = _validated(
            doc,
            (*annotate_loc, name),
            lambda m=make_annotator, o=options: m(o, base),  # type: ignore[misc]
        )
        cases = annotate(cases)
        annotator_specs.append(annotator_spec)
    _check_stratify(doc, loc, task.stratify, itertools.chain(dataset.cases[:1000], cases))
    selection = None
    if task.mcq_selection is not None:
        select_options = {"prompt": "mcq_select_v1", **task.mcq_selection}
        selector = _validated(
            doc, (*loc, "mcq_selection"), lambda: SYSTEMS.get("openai")(select_options, base)
        )
        selection = SelectionStep(selector)
    judge = _build_judge(doc, loc, task, system, scorers)
    spec = TaskSpec(
        id=task.id,
        dataset=ComponentSpec(
            type=task.dataset.format, args=task.dataset.options(), content_hash=dataset.content_hash
        ),
        system=system.spec,
        scorers=scorer_specs,
        stratify=task.stratify,
        annotators=annotator_specs,
        selection=selection.system.spec if selection else None,
        judge=_judge_spec(judge) if judge else None,
        counterfactual=counterfactual.model_dump(mode="json") if counterfactual else None,
    )
    return BuiltTask(
        spec=spec,
        cases=cases,
        system=system,
        scorers=scorers,
        selection=selection,
        judge=judge,
        warnings=load_warnings,
    )


def _counterfactual(
    doc: LocatedYaml, loc: Loc, task: TaskEntry, scorers: list[ComponentSpec], cases: Sequence[Case]
) -> CounterfactualOption | None:
    """The task's ``counterfactual`` option, validated against its scorers and every case of the dataset
    (clineval.counterfactual.task); the scorer defaults to the task's first."""
    if task.counterfactual is None:
        return None
    cf_loc = (*loc, "counterfactual")
    raw = dict(task.counterfactual)
    option = _validated(
        doc, cf_loc, lambda: CounterfactualOption.model_validate(raw), _fields(CounterfactualOption)
    )
    names = [s.type for s in scorers]
    if option.scorer is None:
        option = option.model_copy(update={"scorer": names[0]})
    elif option.scorer not in names:
        raise SuiteError(
            f"counterfactual scorer {option.scorer!r} is not one of the task's scorers",
            path=doc.path,
            line=doc.line_of((*cf_loc, "scorer")),
            hint=f"the task's scorers: {', '.join(names)}",
        )
    problem = check_cases(option, cases)
    if problem is not None:
        raise SuiteError(
            f"counterfactual: {problem}",
            path=doc.path,
            line=doc.line_of(cf_loc),
            hint="each case names its base question and variant in its metadata (group/variant keys) or "
            "its id (17:black); docs/runs/counterfactual.md",
        )
    return option


def _sample_groups(
    cases: Sequence[Case], option: CounterfactualOption, limit: int, seed: int
) -> Sequence[Case]:
    keys = [key_of(c.id, c.metadata, option) or (c.id, "") for c in cases]
    chosen = sample_groups([c.id for c in cases], keys, limit, seed)
    if isinstance(cases, JsonlCases):
        return cases.subset(chosen)
    return [cases[i] for i in chosen]


def _build_judge(
    doc: LocatedYaml, loc: Loc, task: TaskEntry, system: System, scorers: list[Scorer]
) -> JudgeStep | None:
    """The task's judge: ``equivalence_judge`` or ``judge`` (one of them), an ``openai`` system with prompt
    ``equivalence_judge_v1`` by default (``judge`` also defaults to temperature 0.7, so repeated samples
    can differ), plus the same judge for every prompt a scorer lists in ``judge_prompts``. Its model must
    differ from the system's when the system is an ``openai`` one, unless ``allow_same_model: true``
    (then recorded in the judge's spec)."""
    key = "judge" if task.judge is not None else "equivalence_judge"
    raw = task.judge if task.judge is not None else task.equivalence_judge
    judge_loc = (*loc, key)
    wanted = sorted({p for s in scorers for p in getattr(s, "judge_prompts", ())})
    if task.judge is not None and task.equivalence_judge is not None:
        raise SuiteError(
            "a task has either 'judge' or 'equivalence_judge', not both",
            path=doc.path,
            line=doc.line_of(judge_loc),
            hint="'judge' also serves the DDx equivalence questions",
        )
    if raw is None:
        for i, scorer in enumerate(scorers):
            if getattr(scorer, "judge_prompts", ()):
                raise SuiteError(
                    f"scorer {scorer.name!r} needs an LLM judge",
                    path=doc.path,
                    line=doc.line_of((*loc, "scorers", i)),
                    hint="add 'judge: {base_url: ..., model: ...}' to the task (not the system's model)",
                )
        return None
    options = {"prompt": "equivalence_judge_v1", **({"temperature": 0.7} if key == "judge" else {}), **raw}
    allow_same = options.pop("allow_same_model", False)
    if not isinstance(allow_same, bool):
        raise SuiteError(
            f"allow_same_model must be true or false, got {allow_same!r}",
            path=doc.path,
            line=doc.line_of((*judge_loc, "allow_same_model")),
        )
    base = doc.path.parent
    judge = _validated(doc, judge_loc, lambda: SYSTEMS.get("openai")(options, base))
    judge_model = str(judge.spec.args.get("model"))
    system_model = str(system.spec.args.get("model"))
    same = system.spec.type == "openai" and judge_model.strip().lower() == system_model.strip().lower()
    if same and not allow_same:
        raise SuiteError(
            f"the {key.replace('_', ' ')} uses the system's own model {judge_model!r}",
            path=doc.path,
            line=doc.line_of((*judge_loc, "model")),
            hint="judge with a different model than the one under test (or set allow_same_model: true)",
        )
    prompts: dict[str, System] = {}
    # a scorer may fix the judge's sampling for a prompt of its own (the HealthBench reference grader's)
    settings = {p: o for s in scorers for p, o in getattr(s, "judge_settings", {}).items()}
    for name in wanted:
        if name == options["prompt"] and name not in settings:
            prompts[name] = judge
        else:
            prompts[name] = _validated(
                doc,
                judge_loc,
                lambda n=name: SYSTEMS.get("openai")(  # type: ignore[misc]
                    {**options, "prompt": n, **settings.get(n, {})}, base
                ),
            )
    step = JudgeStep(judge, prompts)
    step.same_model_override = same
    return step


def _judge_spec(judge: JudgeStep) -> ComponentSpec:
    """The judge system's spec, plus the hash of each scorer prompt it serves and a same-model override."""
    args = dict(judge.system.spec.args)
    if judge.prompts:
        args["prompts"] = {name: s.spec.content_hash for name, s in sorted(judge.prompts.items())}
        base = judge.system.spec.args
        fixed = {  # sampling a scorer fixed for its prompt (e.g. temperature 0.5 for the reference grader)
            name: {k: v for k, v in s.spec.args.items() if k != "prompt" and base.get(k) != v}
            for name, s in sorted(judge.prompts.items())
        }
        if any(fixed.values()):
            args["prompt_settings"] = {name: f for name, f in fixed.items() if f}
    if judge.same_model_override:
        args["allow_same_model"] = True
        args["same_model_as_system"] = True
    return judge.system.spec.model_copy(update={"args": args})


def _check_stratify(doc: LocatedYaml, loc: Loc, keys: list[str], cases: Iterable[Case]) -> None:
    """Each stratify key is in some case's metadata (cases are read only until every key is found)."""
    present: set[str] = set()
    for case in cases if keys else ():
        present.update(case.metadata)
        if present.issuperset(keys):
            return
    for i, key in enumerate(keys):
        if key not in present:
            raise SuiteError(
                f"stratify key {key!r} is in no case's metadata",
                path=doc.path,
                line=doc.line_of((*loc, "stratify", i)),
                hint=f"metadata keys of this dataset: {', '.join(sorted(present)) or '(none)'}",
            )


def load_suite(path: str | Path, *, limit: int | None = None, seed: int = 0) -> BuiltSuite:
    """Parse, validate and build a suite; every user mistake raises a SuiteError/DataFileError with a line."""
    doc = load_yaml(Path(path))
    if not isinstance(doc.value, Mapping):
        raise SuiteError("a suite is a mapping with 'name' and 'tasks'", path=doc.path, line=1)
    raw_tasks = doc.value.get("tasks")
    for index, raw in enumerate(raw_tasks if isinstance(raw_tasks, list) else []):
        # Validate tasks one by one first so an unknown key is matched against the task's own keys.
        _validated(
            doc,
            ("tasks", index),
            lambda r=raw: TaskEntry.model_validate(r),  # type: ignore[misc]
            _fields(TaskEntry),
        )
    suite = _validated(doc, (), lambda: SuiteFile.model_validate(doc.value), _fields(SuiteFile))
    ids = [t.id for t in suite.tasks]
    for index, task_id in enumerate(ids):
        if ids.index(task_id) != index:
            raise SuiteError(
                f"duplicate task id {task_id!r}",
                path=doc.path,
                line=doc.line_of(("tasks", index, "id")),
                hint="task ids must be unique",
            )
    tasks = [_build_task(doc, i, t, limit, seed) for i, t in enumerate(suite.tasks)]
    combined = None
    if suite.combined_score is not None:
        args = suite.combined_score.model_dump(mode="json")
        if args["categories"] is not None:  # relative to the suite file, like every suite path
            args["categories"] = str((doc.path.parent / args["categories"]).resolve())
        combined = ComponentSpec(type="combined_score", args=args)
    spec = SuiteSpec(
        name=suite.name,
        tasks=[t.spec for t in tasks],
        source=str(doc.path),
        limit=limit,
        seed=seed,
        combined=combined,
    )
    return BuiltSuite(spec=spec, tasks=tasks)
