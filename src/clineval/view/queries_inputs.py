"""Case inputs (vignette, question, options) for the viewer, read back from the run's dataset file.

The store keeps each case's result, not its input; the suite spec records the dataset's format, options
and content hash, and the suite file's path. The viewer reloads that dataset once per (task, hash) and
shows an input only when the file still has the hash the run saw, so a question shown beside an answer
is the one that was asked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from clineval.core import CaseInput, SuiteSpec

if TYPE_CHECKING:
    from clineval.datasets.lazy_cases import JsonlCases

_CACHE_SIZE = 8
_lock = threading.Lock()
_cache: OrderedDict[tuple[str, str, str], DatasetInputs] = OrderedDict()


class FileInputs(Mapping[str, CaseInput]):
    """``case id -> input`` of a dataset read from its file (``datasets.lazy_cases``): ids and line offsets
    are held (~100 bytes a case), an input is parsed from its line when asked for. A 300,000-case dataset
    held as a dict of inputs took ~450 MB of the viewer's memory (issue 26)."""

    def __init__(self, cases: JsonlCases) -> None:
        from clineval.core.helpers.id_index import HashIndex

        self._cases = cases
        self._index = HashIndex(cases.ids)
        self._signature = _signature(cases.path)  # the file whose hash was checked against the run's

    def unchanged(self) -> bool:
        """Whether the file is still the one loaded (else no input is shown: it may not be what was asked)."""
        return _signature(self._cases.path) == self._signature

    def __getitem__(self, case_id: str) -> CaseInput:
        from clineval.core.errors import DataFileError

        position = self._index.get(case_id)
        if position is None or not self.unchanged():
            raise KeyError(case_id)
        try:
            return self._cases[position].input
        except (DataFileError, OSError):  # the file changed under us: shown as not available
            raise KeyError(case_id) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._cases.ids)

    def __len__(self) -> int:
        return len(self._cases)

    def items(self) -> Iterator[tuple[str, CaseInput]]:  # type: ignore[override]
        """Every (id, input), reading the file once in order (not a look-up per id)."""
        from clineval.core.errors import DataFileError

        if not self.unchanged():
            return
        try:
            for case in self._cases:
                yield case.id, case.input
        except (DataFileError, OSError):
            return


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


@dataclass(frozen=True)
class DatasetInputs:
    """``case id -> input`` of one task's dataset, or why it could not be shown."""

    inputs: Mapping[str, CaseInput]
    problem: str | None = None


def _load(suite: SuiteSpec, task_id: str) -> DatasetInputs:
    from clineval.datasets import DATASETS

    task = next((t for t in suite.tasks if t.id == task_id), None)
    if task is None:
        return DatasetInputs({}, f"task {task_id!r} is not in the run's suite")
    base = Path(suite.source).parent if suite.source else Path.cwd()
    try:
        loaded = DATASETS.get(task.dataset.type)(dict(task.dataset.args), base)
    except Exception as err:  # a moved or unreadable dataset: the page still shows the result
        return DatasetInputs({}, f"the dataset could not be read again ({type(err).__name__})")
    if task.dataset.content_hash and loaded.content_hash != task.dataset.content_hash:
        return DatasetInputs({}, "the dataset file changed since this run: its inputs are not shown")
    from clineval.datasets.lazy_cases import JsonlCases

    if isinstance(loaded.cases, JsonlCases):  # read from its file when shown: memory flat in its size
        return DatasetInputs(FileInputs(loaded.cases))
    return DatasetInputs({case.id: case.input for case in loaded.cases})


def dataset_inputs(suite: SuiteSpec, task_id: str) -> DatasetInputs:
    """The task's inputs, cached (a few datasets at a time)."""
    task = next((t for t in suite.tasks if t.id == task_id), None)
    key = (suite.source or "", task.spec_hash if task else task_id, task_id)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    found = _load(suite, task_id)
    with _lock:
        _cache[key] = found
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return found


def cached_inputs(suite: SuiteSpec, task_id: str) -> DatasetInputs | None:
    """The task's inputs only if already loaded (the cases table never waits for a dataset)."""
    task = next((t for t in suite.tasks if t.id == task_id), None)
    key = (suite.source or "", task.spec_hash if task else task_id, task_id)
    with _lock:
        return _cache.get(key)


def question_text(case_input: CaseInput) -> str:
    """The question (or vignette, or stem) as one line."""
    text = case_input.question or case_input.vignette or case_input.stem or ""
    return " ".join(text.split())


def matching_ids(inputs: DatasetInputs, needle: str, limit: int = 1000) -> tuple[str, ...]:
    """Ids of cases whose question or options contain ``needle`` (case-insensitive), at most ``limit``."""
    lowered = needle.lower()
    found = []
    for case_id, case_input in inputs.inputs.items():
        haystack = " ".join([question_text(case_input), *case_input.options.values()]).lower()
        if lowered in haystack:
            found.append(case_id)
            if len(found) >= limit:
                break
    return tuple(found)
