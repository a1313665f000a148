"""Hugging Face datasets as a loader's source: ``dataset: {format: medqa, hf: OWNER/NAME, revision: SHA}``.

One adapter for every loader with a public dataset. The rows come from ``datasets.load_dataset`` (lazy import,
the ``hf`` extra); a per-format mapping turns each row into the record the loader reads from its local file,
and the records are serialised to the same bytes (JSONL, or a JSON object for PubMedQA) that the loader's
own parser then reads, so every validation and error message stays the loader's. The content hash is the
sha256 of those bytes. ``hf`` may also be a local folder (a mirrored dataset repository, or the tests'
parquet/JSON repositories): it goes through the same ``load_dataset`` call. Cache and offline mode are the
``datasets`` library's own (HF_HOME, HF_DATASETS_CACHE, HF_DATASETS_OFFLINE=1). See
docs/integrations/hf_datasets.md.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, model_validator

from clineval.core import Case, LoadedDataset
from clineval.core.errors import DataFileError, UserInputError
from clineval.datasets._io import file_hash, iter_jsonl, read_bytes, resolve
from clineval.datasets.cases import check_unique
from clineval.datasets.lazy_cases import JsonlCases

EXTRA_HINT = "needs the hf extra: pip install 'clineval[hf]'"

Row = dict[str, Any]
Mapping = Callable[[Row], Row]


class UnpinnedRevisionWarning(UserWarning):
    """An ``hf:`` dataset without ``revision``: the rows can change under the same suite."""


class SourceOptions(BaseModel):
    """A loader's source: a local ``path`` or a Hugging Face dataset ``hf`` (exactly one)."""

    model_config = ConfigDict(extra="forbid")
    path: str | None = None
    hf: str | None = None
    revision: str | None = None
    split: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> SourceOptions:
        if (self.path is None) == (self.hf is None):
            raise ValueError("give either 'path' (a local file) or 'hf' (a Hugging Face dataset), not both")
        if self.hf is None and (self.revision or self.split or self.name):
            raise ValueError("'revision', 'split' and 'name' go with 'hf'")
        return self


@dataclass(frozen=True)
class SourceBytes:
    """The bytes a loader parses, the path its errors name, and the ``source`` it reports. A local file
    (``raw`` None) is read only when ``data`` is first asked for: a JSONL loader streams it instead."""

    path: Path
    source: str
    raw: bytes | None = None

    @property
    def local(self) -> bool:
        return self.raw is None

    @cached_property
    def data(self) -> bytes:
        return read_bytes(self.path) if self.raw is None else self.raw

    @property
    def content_hash(self) -> str:
        return file_hash(self.data)


class _Dataset(Protocol):
    def to_list(self) -> list[Row]: ...


# --- per-format mappings: HF row -> the record the local file holds -------------------------------------


def _medmcqa_row(row: Row) -> Row:
    """openlifescienceai/medmcqa: ``cop`` is a 0-based ClassLabel (the authors' dev.json: 1-based)."""
    out = dict(row)
    cop = row.get("cop")
    out["cop"] = cop + 1 if isinstance(cop, int) and not isinstance(cop, bool) and cop >= 0 else None
    return out


def _pubmedqa_row(row: Row) -> Row:
    """qiaojin/PubMedQA (pqa_labeled): ``pubid``, ``question``, ``context`` {contexts, labels, meshes, ...},
    ``long_answer``, ``final_decision`` -> ori_pqal.json's ``QUESTION``, ``CONTEXTS``, ... (no ``YEAR``)."""
    context = row.get("context") or {}
    record: Row = {
        "QUESTION": row.get("question"),
        "CONTEXTS": list(context.get("contexts") or []),
        "LABELS": list(context.get("labels") or []),
        "MESHES": list(context.get("meshes") or []),
        "LONG_ANSWER": row.get("long_answer"),
        "final_decision": row.get("final_decision"),
    }
    for key in ("reasoning_required_pred", "reasoning_free_pred"):
        if context.get(key) is not None:
            record[key] = context[key]
    return {"__key__": str(row.get("pubid")), **record}


def _identity(row: Row) -> Row:
    return dict(row)


# format -> (row mapping, how the records are written: "jsonl" lines or a "json" object keyed by "__key__")
MAPPINGS: dict[str, tuple[Mapping, str]] = {
    "medqa": (_identity, "jsonl"),  # GBaker/MedQA-USMLE-4-options: the same fields as the JSONL file
    "medmcqa": (_medmcqa_row, "jsonl"),  # openlifescienceai/medmcqa (split "validation" = dev.json)
    "pubmedqa": (_pubmedqa_row, "json"),  # qiaojin/PubMedQA, name: pqa_labeled, split: train
    "mmlu": (_identity, "jsonl"),  # cais/mmlu, name: SUBJECT, split: test: question, subject, choices, answer
}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def serialise(records: Iterable[Row], layout: str) -> bytes:
    """Records as the bytes of the loader's local file: JSON lines, or one object keyed by ``__key__``."""
    if layout == "jsonl":
        return "".join(_dumps(r) + "\n" for r in records).encode()
    keyed = {}
    for record in records:
        key = record.pop("__key__")
        keyed[key] = record
    return _dumps(keyed).encode()


def _import_datasets() -> Any:
    try:
        import datasets  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise UserInputError(EXTRA_HINT) from None
    return datasets


def _is_local(hf: str, base_dir: Path) -> Path | None:
    if hf.startswith((".", "/", "~")):
        return resolve(hf, base_dir)
    return None


def load_rows(opts: SourceOptions, base_dir: Path) -> tuple[list[Row], str]:
    """The split's rows through ``datasets.load_dataset`` and the ``source`` label naming id, config,
    revision and split. A missing revision warns (``UnpinnedRevisionWarning``)."""
    hf = opts.hf or ""
    datasets = _import_datasets()
    local = _is_local(hf, base_dir)
    repo = str(local) if local is not None else hf
    if local is not None and not local.is_dir():
        raise DataFileError("not a dataset folder", path=local, hint="hf: takes OWNER/NAME or a local folder")
    split = opts.split or "train"
    label = f"hf:{hf}" + (f"/{opts.name}" if opts.name else "") + f"@{opts.revision or 'unpinned'}:{split}"
    if opts.revision is None:
        warnings.warn(
            f"{label}: no 'revision' pin, the rows can change under the same suite; "
            "pin a commit sha (revision: SHA) to make the run reproducible",
            UnpinnedRevisionWarning,
            stacklevel=3,
        )
    try:
        revision = None if local is not None else opts.revision  # a local copy is read as it is
        dataset: _Dataset = datasets.load_dataset(repo, opts.name, split=split, revision=revision)
    except ValueError as err:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "split" in text.lower():
            raise DataFileError(f"unknown split {split!r} ({text})", path=label) from None
        raise DataFileError(f"cannot load the dataset: {text}", path=label) from None
    except (OSError, FileNotFoundError, ConnectionError) as err:
        text = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataFileError(
            f"cannot load the dataset: {text}",
            path=label,
            hint="offline? set HF_DATASETS_OFFLINE=1 with a filled cache, or point hf: at a local copy",
        ) from None
    return dataset.to_list(), label


def jsonl_source_dataset(src: SourceBytes, make_case: Callable[[Row, int], Case]) -> LoadedDataset:
    """Cases from JSON lines (a local file or serialised HF rows): ``make_case(record, 1-based line)``. A
    local file's cases are read from it when used (``lazy_cases``), not held in memory."""
    if src.local:
        lazy, content_hash = JsonlCases.load(src.path, make_case)
        return LoadedDataset(cases=lazy, content_hash=content_hash, source=src.source)
    cases = [make_case(row, number) for number, row in iter_jsonl(src.path, src.data)]
    check_unique(cases, src.path)
    return LoadedDataset(cases=cases, content_hash=src.content_hash, source=src.source)


def source_bytes(options: SourceOptions, base_dir: Path, fmt: str) -> SourceBytes:
    """The bytes a loader of format ``fmt`` parses: its local file, or the HF rows mapped and serialised."""
    if options.hf is None:
        path = resolve(options.path or "", base_dir)
        return SourceBytes(path=path, source=str(path))
    if fmt not in MAPPINGS:
        raise UserInputError(f"dataset format {fmt!r} has no Hugging Face mapping", hint="use path:")
    mapping, layout = MAPPINGS[fmt]
    rows, label = load_rows(options, base_dir)
    data = serialise((mapping(row) for row in rows), layout)
    return SourceBytes(path=Path(label), source=label, raw=data)
