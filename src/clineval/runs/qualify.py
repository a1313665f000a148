"""``clineval judge qualify``: ask a task's judge about clinician-labelled items K times, in the original and
in a permuted order, and qualify it (``clineval.judging.qualification``); store the record.

Which response is judged: the one the clinicians read. With ``--from-run RUN`` the stored outputs of that
run; with ``--labels FILE`` alone the task's system must replay its answers (``predictions``, a recorded
system): a live system is refused (exit 2), since its answers now would not be the ones labelled.

Per labelled case the task's judge-aware scorer lists its requests as a run would (``judge_dimensions``:
one per dimension, ``rubric``: one per criterion); the labelled ones are asked ``samples`` times through the
runner's judge step (the same prompt, settings, cache keys per sample and response cache as a run), then
again for the permuted output (``qualification.reorder``). Equivalence labels ``{"a", "b", "same"}`` are
asked as the DDx scorer asks them, ``(a, b)``, without a case vignette (the labels name none), and swapped
for the order pass. Agreement is measured on the majority of as many samples as a run takes (the scorer's
``samples``; 1 for the equivalence judge), stability on all K.

One qualification is about one prompt: labels whose kinds are served by different prompts of the judge
(e.g. grades and DDx pairs) are refused; qualify each from its own labels file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from clineval import __version__
from clineval.config import BuiltTask, load_suite
from clineval.core import Case, CaseInput, Metric, Score, ScoringContext, SystemOutput, UserInputError
from clineval.core.judging import JUDGMENTS_KEY, JudgeDecision, JudgeRequest
from clineval.judging.dimensions import valid_grade
from clineval.judging.qualification import Qualification, Thresholds, as_dict, qualify, read_labels
from clineval.judging.qualification.identity import JudgeIdentity, judge_identities
from clineval.judging.qualification.labels import Kind, LabelSet
from clineval.judging.qualification.qualify import Key
from clineval.judging.qualification.reorder import adjudication_labels, permuted_output
from clineval.runner.cache import ResponseCache
from clineval.runner.judging import JudgeStep
from clineval.runner.policy import CallPolicy
from clineval.runs.request import DEFAULT_CACHE, DEFAULT_STORE
from clineval.store import ResultStore
from clineval.store.qualifications import QualificationRecord, add_qualification, adjudicated_labels
from clineval.store.tables import utcnow

SCORER_KIND: dict[str, Kind] = {"judge_dimensions": "grade", "rubric": "met"}


@dataclass
class QualifyRequest:
    suite_path: Path
    task_id: str
    labels_path: Path | None = None
    from_run: str | None = None
    samples: int = 3
    thresholds: Thresholds = field(default_factory=Thresholds)
    seed: int = 0
    store_url: str = DEFAULT_STORE
    cache_path: Path | None = DEFAULT_CACHE
    policy: CallPolicy = field(default_factory=CallPolicy)
    concurrency: int = 8
    tenant_id: str = "default"

    def __post_init__(self) -> None:
        if (self.labels_path is None) == (self.from_run is None):
            raise UserInputError("give the clinicians' labels: --labels FILE or --from-run RUN (one of them)")
        if self.samples < 2:
            raise UserInputError(
                f"--samples {self.samples}: stability needs at least 2 samples", hint="the default is 3"
            )


@dataclass
class QualifyOutcome:
    result: Qualification
    record: QualificationRecord
    identity: JudgeIdentity
    notes: list[str]


class _Asking:
    """A judge-aware stand-in for the task's scorer: its requests for the labelled items, K samples each."""

    metrics: Sequence[Metric] = ()

    def __init__(self, name: str, requests: Sequence[JudgeRequest]) -> None:
        self.name, self._requests = name, list(requests)

    def judge_requests(self, ctx: ScoringContext) -> list[JudgeRequest]:
        return self._requests

    def __call__(self, ctx: ScoringContext) -> Score:  # never scored: only asked
        return Score(value=float("nan"))


def _task(request: QualifyRequest) -> BuiltTask:
    suite = load_suite(request.suite_path)
    found = next((t for t in suite.tasks if t.spec.id == request.task_id), None)
    if found is None:
        known = ", ".join(t.spec.id for t in suite.tasks)
        raise UserInputError(
            f"no task {request.task_id!r} in the suite", path=request.suite_path, hint=f"tasks: {known}"
        )
    if found.judge is None or found.spec.judge is None:
        raise UserInputError(
            f"task {request.task_id!r} has no judge: nothing to qualify",
            path=request.suite_path,
            hint="a task's judge is its 'judge:' (or 'equivalence_judge:') entry",
        )
    return found


def _prompt_for(task: BuiltTask, kinds: Sequence[Kind], where: str) -> tuple[str, Any, int]:
    """The one prompt serving the labels' kinds, the scorer asking it (None: the equivalence judge) and the
    samples a run takes for it."""
    served: dict[str, tuple[Any, int]] = {}
    for kind in kinds:
        if kind == "same":
            served.setdefault(str(task.judge.system.spec.args.get("prompt")), (None, 1))  # type: ignore[union-attr]
            continue
        scorer = next((s for s in task.scorers if SCORER_KIND.get(s.name) == kind), None)
        if scorer is None:
            wanted = "judge_dimensions" if kind == "grade" else "rubric"
            raise UserInputError(
                f"{kind} labels, but task {task.spec.id!r} has no {wanted} scorer", path=where
            )
        options = getattr(scorer, "options", None)
        prompts: Sequence[str] = getattr(scorer, "judge_prompts", ())
        served.setdefault(str(prompts[0]), (scorer, int(getattr(options, "samples", 1))))
    if len(served) != 1:
        raise UserInputError(
            f"the labels are answered by {len(served)} judge prompts ({', '.join(sorted(served))})",
            path=where,
            hint="one qualification is about one prompt: qualify each from its own labels file",
        )
    ((prompt, (scorer, votes)),) = served.items()
    return prompt, scorer, votes


def _labels(request: QualifyRequest, task: BuiltTask, store: ResultStore) -> LabelSet:
    if request.labels_path is not None:
        dims = next((s.options.dimensions for s in task.scorers if s.name == "judge_dimensions"), None)  # type: ignore[attr-defined]
        return read_labels(request.labels_path, dimensions=dims)
    run_id = store.resolve_run_id(str(request.from_run))
    rows = adjudicated_labels(store, run_id, task.spec.id)
    return adjudication_labels(
        ((r.case_id, r.item_kind, r.item_key, r.value, r.reviewer) for r in rows), source=f"run {run_id}"
    )


def _outputs(
    request: QualifyRequest, task: BuiltTask, store: ResultStore, case_ids: set[str]
) -> dict[str, tuple[Case, SystemOutput]]:
    cases = {c.id: c for c in task.cases if c.id in case_ids}
    missing = sorted(case_ids - set(cases))
    if missing:
        raise UserInputError(
            f"{len(missing)} labelled case(s) not in task {task.spec.id!r}'s dataset, e.g. {missing[0]!r}",
            path=str(request.labels_path or request.suite_path),
        )
    if request.from_run is not None:
        run_id = store.resolve_run_id(request.from_run)
        stored = {
            r.case_id: r.output
            for r in store.load_results(run_id)
            if r.task_id == task.spec.id and r.case_id in cases
        }
        if absent := sorted(set(cases) - set(stored)):
            raise UserInputError(
                f"run {run_id} has no output for labelled case {absent[0]!r} of task {task.spec.id!r}"
            )
        return {cid: (cases[cid], stored[cid]) for cid in sorted(cases)}
    if task.system.live:
        raise UserInputError(
            f"task {task.spec.id!r}'s system is live ({task.system.spec.type}): its answers now would not"
            " be the ones the clinicians labelled",
            path=request.suite_path,
            hint="qualify from the stored run they reviewed (--from-run RUN) or a predictions system",
        )

    async def replay() -> dict[str, tuple[Case, SystemOutput]]:
        await task.system.start(1)
        try:
            return {cid: (cases[cid], await task.system.call(cases[cid])) for cid in sorted(cases)}
        finally:
            await task.system.close()

    return asyncio.run(replay())


def _value(kind: Kind, decision: JudgeDecision | None) -> int | bool | None:
    if decision is None or decision.error is not None:
        return None
    if kind == "grade":
        return valid_grade(decision)
    if kind == "same":
        return decision.equivalent
    return decision.value if isinstance(decision.value, bool) else None


async def _ask(
    request: QualifyRequest,
    task: BuiltTask,
    labels: LabelSet,
    scorer: Any,
    kind: Kind,
    outputs: Mapping[str, tuple[Case, SystemOutput]],
) -> tuple[dict[Key, list[Any]], dict[Key, list[Any]], Counter[str]]:
    judge: JudgeStep = task.judge  # type: ignore[assignment]
    cache = ResponseCache(request.cache_path) if request.cache_path is not None else None
    k = request.samples
    judged: dict[Key, list[Any]] = {}
    reordered: dict[Key, list[Any]] = {}
    served: Counter[str] = Counter()
    items = labels.of_kind(kind)

    async def one(
        case: Case,
        output: SystemOutput,
        asked: Sequence[tuple[Key, JudgeRequest]],
        into: dict[Key, list[Any]],
    ) -> None:
        proxy = _Asking("qualify", [r for _, r in asked])
        _, extras = await judge.run(task.spec.id, case, output, [proxy], request.policy, cache)
        decisions: Mapping[str, JudgeDecision] = extras[JUDGMENTS_KEY]
        for key, r in asked:
            answers = [decisions.get(r.sample_key(i)) for i in range(r.samples)]
            served.update(d.model for d in answers if d is not None and d.error is None)
            into[key] = [_value(kind, d) for d in answers]

    jobs: list[tuple[Case, SystemOutput, Sequence[tuple[Key, JudgeRequest]], dict[Key, list[Any]]]] = []
    if kind == "same":  # no case: the labels name none (no vignette is shown)
        blank, nothing = Case(id="equivalence", input=CaseInput()), SystemOutput(text="")
        same: list[Key] = [("same", item) for item in items]
        asked_as = [(key, JudgeRequest.of(*key[1])) for key in same]
        swapped = [(key, JudgeRequest.of(key[1][1], key[1][0])) for key in same]
        jobs.append(
            (blank, nothing, [(key, dataclasses.replace(r, samples=k)) for key, r in asked_as], judged)
        )
        jobs.append(
            (blank, nothing, [(key, dataclasses.replace(r, samples=k)) for key, r in swapped], reordered)
        )
    else:
        field_name = "dimension" if kind == "grade" else "criterion"
        for case_id, (case, output) in outputs.items():
            wanted = {item[1] for item in items if item[0] == case_id}
            variants = [(output, judged)]
            if (other := permuted_output(output, request.seed, case_id)) is not None:
                variants.append((other, reordered))
            for shown, into in variants:
                ctx = ScoringContext(case=case, output=shown, task_id=task.spec.id)
                asked: list[tuple[Key, JudgeRequest]] = [
                    ((kind, (case_id, str(r.data[field_name]))), dataclasses.replace(r, samples=k))
                    for r in scorer.judge_requests(ctx)
                    if str(r.data.get(field_name)) in wanted
                ]
                found = {key[1][1] for key, _ in asked}
                if into is judged and (lost := sorted(wanted - found)):
                    raise UserInputError(
                        f"case {case_id!r}: the task's judge is not asked about {lost[0]!r} (the system"
                        " failed or gave nothing to judge, or no such criterion)",
                        path=labels.path,
                    )
                jobs.append((case, shown, asked, into))
    await judge.start(request.concurrency)
    try:
        await asyncio.gather(*(one(*job) for job in jobs))
    finally:
        await judge.close()
        if cache is not None:
            cache.close()
    return judged, reordered, served


def qualify_judge(request: QualifyRequest) -> QualifyOutcome:
    """Qualify the task's judge on the labels; the record is stored (module docstring)."""
    task = _task(request)
    with ResultStore(request.store_url) as store:
        labels = _labels(request, task, store)
        prompt, scorer, votes = _prompt_for(task, labels.kinds, labels.path)
        kind = labels.kinds[0]
        case_ids = {item[0] for item in labels.of_kind(kind)} if kind != "same" else set()
        outputs = _outputs(request, task, store, case_ids) if case_ids else {}
        judged, reordered, served = asyncio.run(_ask(request, task, labels, scorer, kind, outputs))
        result = qualify(
            labels,
            judged,
            reordered,
            thresholds=request.thresholds,
            seed=request.seed,
            vote_samples=min(votes, request.samples),
        )
        identity = judge_identities(task.spec.judge)[prompt]  # type: ignore[arg-type]
        notes = []
        model = served.most_common(1)[0][0] if served else None
        if model is not None and model != identity.model:
            notes.append(f"the endpoint served {model!r} for the configured {identity.model!r}")
        if request.from_run is not None:
            notes.append(
                "labels from adjudications: reviewers saw the automated value (not blind) and the review"
                " queue favours disagreements"
            )
        data = as_dict(result)
        record = QualificationRecord(
            qualification_id=f"q-{utcnow():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}",
            created_at=utcnow(),
            judge_key=identity.judge_key,
            judge_model=identity.model,
            prompt=prompt,
            prompt_hash=identity.prompt_hash,
            settings=dict(identity.settings),
            settings_hash=identity.settings_hash,
            samples=request.samples,
            seed=request.seed,
            suite=str(request.suite_path),
            task_id=task.spec.id,
            labels_hash=labels.labels_hash,
            labels_source="file" if request.labels_path is not None else "adjudications",
            labels_ref=labels.path,
            n_labelled=len({(lab.kind, lab.item) for lab in labels.labels}),
            reviewers=len({lab.reviewer for lab in labels.labels}),
            thresholds=data["thresholds"],
            figures=data["groups"],
            qualified=result.qualified,
            reasons=[*result.reasons, *(f"note: {n}" for n in notes)],
            clineval_version=__version__,
            vote_samples=result.vote_samples,
            served_model=model if model != identity.model else None,
            judge_endpoint=identity.endpoint,
            tenant_id=request.tenant_id,
        )
        add_qualification(store, record)
    return QualifyOutcome(result, record, identity, notes)
