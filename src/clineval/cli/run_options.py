"""The options ``clineval run`` and ``clineval eval`` share, declared once so the two cannot drift.

``eval`` once lacked five of ``run``'s options (``--max-retries``, ``--max-outage``, ``--retry-failed``,
``--tenant``, ``--run-type``; issue 23). :func:`with_run_options` puts every option of :data:`RUN_OPTIONS`
into a command's signature in place of its ``options: RunOptions`` parameter (typer reads the signature),
and calls the command with one :class:`RunOptions`, which builds the ``api.RunRequest``. ``eval
--print-suite`` writes the same options back as the ``clineval run`` command line that repeats the run
(:meth:`RunOptions.run_arguments`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from clineval.cli import progress
from clineval.cli.common import StoreOpt
from clineval.cli.defaults import DEFAULT_CACHE, DEFAULT_STORE, DEFAULT_TENANT, DEGRADED_THRESHOLD
from clineval.cli.store_folder import CreateStoreOpt
from clineval.core.errors import UserInputError

if TYPE_CHECKING:
    from clineval.runner.policy import CallPolicy
    from clineval.runs import run as api

RUN_TYPES_HELP = "nightly | weekly | config_gate | adhoc (stored with its metrics)."


@dataclass(frozen=True)
class RunOptions:
    """The values of the shared options (field = parameter name; see :data:`RUN_OPTIONS`)."""

    out: Path | None = None
    store: str = DEFAULT_STORE
    create_store: bool = False
    limit: int | None = None
    seed: int | None = None
    concurrency: int = 16
    workers: str = "1"
    timeout: float = 60.0
    max_retries: int = 3
    max_outage: float = 300.0
    no_cache: bool = False
    cache_path: Path = DEFAULT_CACHE
    retry_failed: bool = False
    no_preflight: bool = False
    tenant: str = DEFAULT_TENANT
    run_type: str = "adhoc"
    degraded_threshold: float = DEGRADED_THRESHOLD
    allow_degraded: bool = False
    mlflow: str | None = None
    prices: Path | None = None
    quiet: bool = False

    def __post_init__(self) -> None:
        from clineval.core import RUN_TYPES

        if self.run_type not in RUN_TYPES:
            hint = f"use one of: {', '.join(RUN_TYPES)}"
            raise UserInputError(f"unknown --run-type {self.run_type!r}", hint=hint)

    def policy(self) -> CallPolicy:
        from clineval.runner.policy import CallPolicy

        return CallPolicy(timeout_s=self.timeout, max_retries=self.max_retries, max_outage_s=self.max_outage)

    def request(self, suite_path: Path, **extra: Any) -> api.RunRequest:
        """The run these options ask for (``extra``: ``resume``, ``shard``, ``run_id``)."""
        from clineval.cli.store_folder import check_store_folder
        from clineval.runs import run as api

        check_store_folder(self.store, self.create_store)  # a mistyped --store folder is not created

        return api.RunRequest(
            suite_path=suite_path,
            store_url=self.store,
            limit=self.limit,
            seed=self.seed,
            concurrency=self.concurrency,
            cache_path=None if self.no_cache else self.cache_path,
            retry_failed=self.retry_failed,
            policy=self.policy(),
            tenant_id=self.tenant,
            run_type=self.run_type,  # type: ignore[arg-type]  # checked in __post_init__
            degraded_threshold=self.degraded_threshold,
            prices=self.prices,
            preflight=not self.no_preflight,
            workers=self.worker_count(),
            **extra,
        )

    def worker_count(self) -> int:
        """``--workers``: a number, or ``auto`` (the cores this process may use)."""
        if self.workers == "auto":
            import os

            cores = (
                os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
            )
            return max(1, len(cores))
        try:
            count = int(self.workers)
        except ValueError:
            raise UserInputError(
                f"--workers {self.workers!r}", hint="a number of processes, or auto"
            ) from None
        if count < 1:
            raise UserInputError(f"--workers {count}: at least 1", hint="e.g. --workers 2, or auto")
        return count

    def run_arguments(self) -> list[str]:
        """These options as ``clineval run`` arguments: each one not at its default, and ``--seed`` whenever
        ``--limit`` is given (the sample is the seed's)."""
        args: list[str] = []
        for field in fields(self):
            value, default = getattr(self, field.name), field.default
            if field.name == "seed" and self.limit is not None and value is None:
                value, default = 0, None  # the seed eval samples with, said out loud
            if value == default:
                continue
            flag = RUN_OPTION_FLAGS[field.name]
            args.extend(
                [flag] if isinstance(value, bool) else [flag, str(value)]
            )  # a flag: its default is off
        return args


def _option(flag: str, type_: Any, help_: str, **kwargs: Any) -> Any:
    return Annotated[type_, typer.Option(flag, help=help_, **kwargs)]


# name -> the annotation typer reads (the default is RunOptions'), in the order --help lists them
RUN_OPTIONS: dict[str, Any] = {
    "out": _option(
        "--out", Path | None, "Write report.json/.md/.html and results.jsonl here.", metavar="DIR"
    ),
    "store": StoreOpt,
    "create_store": CreateStoreOpt,
    "limit": _option("--limit", int | None, "Seeded sample of N cases per task.", min=1, metavar="N"),
    "seed": _option(
        "--seed",
        int | None,
        "Seed of the --limit sample (default 0; a resumed run keeps its own).",
        metavar="S",
    ),
    "concurrency": _option("--concurrency", int, "Concurrent calls to a live system.", min=1, metavar="N"),
    "workers": _option(
        "--workers",
        str,
        "Run as N local processes over the shard partition (auto: one per core), finalized once; a live "
        "endpoint's --concurrency is divided across them (docs/runs/sharding.md).",
        metavar="N|auto",
    ),
    "timeout": _option("--timeout", float, "Per-call timeout, seconds.", min=0.001, metavar="S"),
    "max_retries": _option("--max-retries", int, "Retries of a retryable failure.", min=0, metavar="N"),
    "max_outage": _option(
        "--max-outage",
        float,
        "Seconds one endpoint outage may pause the calls before they fail.",
        min=0,
        metavar="S",
    ),
    "no_cache": _option("--no-cache", bool, "Neither read nor write the response cache."),
    "cache_path": _option(
        "--cache-path",
        Path,
        "Response cache file. It holds successes only: a call that failed is called again by the next run.",
        metavar="FILE",
    ),
    "retry_failed": _option(
        "--retry-failed/--no-retry-failed",
        bool,
        "Kept for old scripts: failures are never cached, so every run calls the failed cases again.",
    ),
    "no_preflight": _option(
        "--no-preflight",
        bool,
        "Skip the pre-flight check of each live endpoint (API key variable, connection, model, one probe "
        "call) before the first case.",
    ),
    "tenant": _option("--tenant", str, "Tenant the run belongs to.", metavar="T"),
    "run_type": _option("--run-type", str, RUN_TYPES_HELP, metavar="TYPE"),
    "degraded_threshold": _option(
        "--degraded-threshold",
        float,
        "A system, judge or scorer failing on more than this fraction of a task's cases makes the run "
        "degraded (exit 3).",
        min=0.0,
        max=1.0,
        metavar="F",
    ),
    "allow_degraded": _option(
        "--allow-degraded", bool, "Exit 0 even when the run is degraded (still warned)."
    ),
    "mlflow": _option(
        "--mlflow",
        str | None,
        "Log params, headline and per-stratum metrics with intervals, and the reports to this MLflow "
        "tracking URI (e.g. sqlite:///mlflow.db; needs the mlflow extra; docs/integrations/mlflow.md).",
        metavar="URI",
    ),
    "prices": _option(
        "--prices",
        Path | None,
        "Price table YAML (model: {prompt_per_1k, completion_per_1k, currency}): the token cost per task in "
        "the reports; see docs/engine/usage.md.",
        metavar="FILE",
    ),
    "quiet": progress.QuietOpt,
}


def _flag(annotation: Any) -> str:
    """The long option name an ``Annotated[..., typer.Option("--name", ...)]`` declares (in ``Annotated``,
    typer keeps the first name where a default would go)."""
    (info,) = annotation.__metadata__
    names = [info.default, *(info.param_decls or ())]
    return next(n for n in names if isinstance(n, str) and n.startswith("--")).split("/")[0]


RUN_OPTION_FLAGS = {name: _flag(annotation) for name, annotation in RUN_OPTIONS.items()}


def with_run_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with the shared options in its signature in place of its ``options: RunOptions``
    parameter; it is called with ``options=RunOptions(...)`` and its own parameters."""
    signature = inspect.signature(command, eval_str=True)
    defaults = {f.name: f.default for f in fields(RunOptions)}
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=defaults[name])
        for name, annotation in RUN_OPTIONS.items()
    ]
    params: list[inspect.Parameter] = []
    for param in signature.parameters.values():
        params.extend(shared if param.name == "options" else [param])

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        values = {name: kwargs.pop(name) for name in RUN_OPTIONS if name in kwargs}
        command(*args, options=RunOptions(**values), **kwargs)

    wrapper.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return wrapper
