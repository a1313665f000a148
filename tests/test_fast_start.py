"""Fast start: lazy package exports, lazy registries, provenance that hashes only what a suite uses, a
one-query schema check, and a CLI whose import pulls in neither scipy nor jinja2 (timed by
benchmarks/bench_cold_start.py).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import event

import clineval
from clineval.core import ComponentSpec, SuiteError, SuiteSpec, TaskSpec
from clineval.datasets.registry import DATASETS
from clineval.runs import provenance
from clineval.scoring.registry import SCORERS
from clineval.store import ResultStore, make_engine
from clineval.store.migrate import upgrade
from clineval.store.migrations import HEAD
from clineval.systems.registry import SYSTEMS
from clineval.testing.openai_server import ServerHandle
from tests.cli_helpers import MEDQA_ROW

SRC = Path(clineval.__file__).parent
LAZY_PACKAGES = sorted(
    ".".join(("clineval", *p.parent.relative_to(SRC).parts))
    for p in SRC.rglob("__init__.py")
    if "lazy_exports(" in p.read_text(encoding="utf-8")
)


def _static_imports(package: str) -> dict[str, str]:
    """name -> defining module, from the package's ``if TYPE_CHECKING:`` block (what type checkers see)."""
    path = Path(importlib.import_module(package).__file__ or "")
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module
                for alias in stmt.names:
                    found[alias.name] = stmt.module
    return found


def test_the_lazy_packages_are_the_public_ones() -> None:
    assert {"clineval", "clineval.core", "clineval.report", "clineval.store", "clineval.text"} <= set(
        LAZY_PACKAGES
    )


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_exports_are_the_statically_imported_objects(package: str) -> None:
    module = importlib.import_module(package)
    static = _static_imports(package)
    names = set(module.__all__) - {"__version__"}
    if static == {"*": "clineval.core"}:  # the top-level package re-exports the core
        static = dict.fromkeys(importlib.import_module("clineval.core").__all__, "clineval.core")
    assert set(static) == names, "the TYPE_CHECKING imports and __all__ differ"
    for name in sorted(names):
        assert getattr(module, name) is getattr(importlib.import_module(static[name]), name), name
    assert names <= set(dir(module))
    star: dict[str, object] = {}
    exec(f"from {package} import *", star)  # the star import resolves every lazy name
    assert set(module.__all__) <= set(star)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        getattr(module, "no_such_name")  # noqa: B009 (the lazy __getattr__ is what is tested)


def _run_python(code: str) -> str:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_a_lazy_name_imports_only_its_module() -> None:
    out = _run_python(
        "import sys\n"
        "from clineval.core import UserInputError\n"
        "from clineval.report import print_runs_table\n"
        "heavy = ('clineval.core.case', 'clineval.report.formats.html', 'jinja2')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    assert out == "[]"


def test_every_registered_name_resolves_to_a_factory() -> None:
    # the names as they were registered eagerly before the registries became lazy
    assert SCORERS.names() == sorted(
        "mcq mcq_selection cds_report ddx process retrieval guideline_citation guideline_adherence "
        "judge_dimensions rubric schema citation_grounding scope contraindications escalation latency "
        "reasoning_quality clinical_accuracy problems_identified evidence_types_cited "
        "severity_agreement".split()
    )
    assert SYSTEMS.names() == sorted(
        "predictions callable http openai lddx ddxplus_differential trec_run recorded".split()
    )
    assert DATASETS.names() == sorted(
        "medqa medmcqa pubmedqa jsonl csv open_xddx ddxplus trec_qrels retrieval_judgments healthbench "
        "golden_set production_log mmlu".split()
    )
    for registry in (SCORERS, SYSTEMS, DATASETS):
        for name in registry.names():
            factory = registry.get(name)
            assert callable(factory) and registry.get(name) is factory, name


def test_a_registry_imports_a_component_on_first_use_and_still_suggests() -> None:
    out = _run_python(
        "import sys\n"
        "from clineval.scoring.registry import SCORERS\n"
        "before = 'clineval.cds.guard.structural' in sys.modules\n"
        "SCORERS.get('schema')\n"
        "after = 'clineval.cds.guard.structural' in sys.modules\n"
        "print(before, after, 'clineval.cds.retrieval.scorer' in sys.modules)"
    )
    assert out == "False True False"
    with pytest.raises(SuiteError, match="unknown scorer 'mqc'") as err:
        SCORERS.get("mqc")
    assert "did you mean 'mcq'?" in str(err.value)


def _spec(scorers: list[str], annotators: list[str] = []) -> SuiteSpec:  # noqa: B006 (never mutated)
    task = TaskSpec(
        id="t",
        dataset=ComponentSpec(type="medqa"),
        system=ComponentSpec(type="predictions"),
        scorers=[ComponentSpec(type=s) for s in scorers],
        annotators=[ComponentSpec(type=a) for a in annotators],
    )
    return SuiteSpec(name="s", tasks=[task])


def test_provenance_hashes_the_question_rules_only_when_a_task_classifies_questions() -> None:
    rules = SRC / "mcq" / "data" / "question_type_rules.yaml"
    expected = hashlib.sha256(rules.read_bytes()).hexdigest()
    assert set(provenance.vocabularies(_spec(["mcq"]))) == {"abbreviations"}
    assert provenance.vocabularies(_spec(["mcq", "cds_report"]))["question_type_rules"] == expected
    assert provenance.vocabularies(_spec(["mcq"], ["question_type"]))["question_type_rules"] == expected
    assert provenance.vocabularies()["question_type_rules"] == expected  # no suite: everything


def test_provenance_hashes_the_ddx_data_files_a_ddx_task_reads() -> None:
    actions = hashlib.sha256((SRC / "ddx" / "data" / "tm_sm_actions.yaml").read_bytes()).hexdigest()
    findings = hashlib.sha256(
        (SRC / "text" / "names" / "data" / "finding_names.tsv").read_bytes()
    ).hexdigest()
    found = provenance.vocabularies(_spec(["ddx"]))
    assert (found["tm_sm_actions.yaml"], found["finding_names.tsv"]) == (actions, findings)
    assert "tm_sm_actions.yaml" not in provenance.vocabularies(_spec(["mcq"]))


def test_file_hashes_are_cached_by_path_mtime_and_size(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_bytes(b"version: 1\n")
    first = provenance.file_sha256(path)
    assert first == hashlib.sha256(b"version: 1\n").hexdigest()
    stat = path.stat()
    path.write_bytes(b"version: 2\n")  # same size; put the old mtime back: the cache cannot tell
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert provenance.file_sha256(path) == first
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a new mtime: hashed again
    assert provenance.file_sha256(path) == hashlib.sha256(b"version: 2\n").hexdigest()
    path.write_bytes(b"version: 10\n")  # a new size
    assert provenance.file_sha256(path) == hashlib.sha256(b"version: 10\n").hexdigest()


def test_opening_a_store_at_the_head_revision_costs_one_query(store_url: str) -> None:
    ResultStore(store_url).close()  # creates and migrates it
    engine = make_engine(store_url)
    statements: list[str] = []
    event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    try:
        assert upgrade(engine) == HEAD
    finally:
        engine.dispose()
    assert statements == ["SELECT version_num FROM alembic_version"]


def test_the_cli_option_defaults_are_the_librarys() -> None:
    from clineval.analysis.degradation import DEFAULT_THRESHOLD
    from clineval.cli import defaults
    from clineval.releases import gate as releases
    from clineval.runs import run as api
    from clineval.store.baselines import DEFAULT_TENANT

    assert (defaults.DEFAULT_STORE, defaults.DEFAULT_CACHE) == (api.DEFAULT_STORE, api.DEFAULT_CACHE)
    assert (defaults.DEFAULT_TENANT, defaults.DEGRADED_THRESHOLD) == (DEFAULT_TENANT, DEFAULT_THRESHOLD)
    assert (defaults.GATE_ALPHA, defaults.GATE_MARGIN) == (releases.GATE_ALPHA, releases.GATE_MARGIN)


# What `clineval --help` must not import: each costs from 0.05 s (jinja2) to a second (scipy.stats).
HEAVY_FOR_HELP = ("scipy", "numpy", "jinja2", "sqlalchemy", "aiohttp", "alembic", "clineval.core.case")


def test_importing_the_cli_imports_nothing_heavy() -> None:
    out = _run_python(
        "import sys\n"
        "import clineval.cli.main\n"
        f"print(sorted(m for m in {HEAVY_FOR_HELP!r} if m in sys.modules))"
    )
    assert out == "[]"


def test_listing_runs_imports_neither_scipy_nor_jinja2(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/runs.db"
    ResultStore(store).close()
    out = _run_python(
        "import sys\n"
        "from clineval.cli.main import app\n"
        f"app(['runs', '--store', {store!r}], standalone_mode=False)\n"
        "print(sorted(m for m in ('scipy', 'numpy', 'jinja2', 'alembic') if m in sys.modules))"
    )
    assert out.splitlines()[-1] == "[]"


# What a small live run without a judge must not import (the judge key's package: ~30 ms of start-up).
LIVE_RUN_NEEDS_NONE = ("scipy", "alembic", "clineval.judging.qualification")


def test_a_live_run_on_an_existing_store_imports_neither_scipy_nor_alembic(
    tmp_path: Path, openai_server: ServerHandle
) -> None:
    """A small live run (what a CI gate runs every time): scipy.stats alone was ~0.5 s of its start-up
    (via the judge key's package), Alembic's environment another ~0.1 s on a store already at head."""
    (tmp_path / "q.jsonl").write_text("\n".join(MEDQA_ROW.format(i=i, gold="A") for i in range(3)) + "\n")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: live\ntasks:\n  - id: t\n    dataset: {format: medqa, path: q.jsonl}\n"
        f'    system: {{type: openai, base_url: "{openai_server.base_url}", model: m}}\n    scorers: [mcq]\n'
    )
    store = f"sqlite:///{tmp_path}/runs.db"
    ResultStore(store).close()
    code = (
        "import os, sys\n"
        f"os.chdir({str(tmp_path)!r})\n"
        "from clineval.cli.main import app\n"
        "try:\n"
        f"    app(['run', 'suite.yaml', '--store', {store!r}, '--no-cache'], standalone_mode=False)\n"
        "finally:\n"
        f"    print(sorted(m for m in {LIVE_RUN_NEEDS_NONE!r} if m in sys.modules))"
    )
    assert _run_python(code).splitlines()[-1] == "[]"


def test_recorded_package_versions_are_importlib_metadatas() -> None:
    """provenance reads a version from the metadata file's header block only: the same string as
    ``importlib.metadata.version`` for every installed distribution, and None for a missing one."""
    from importlib import metadata

    names = {*provenance._PACKAGES, *(d.metadata["Name"] for d in metadata.distributions())}
    assert {n: provenance._version(n) for n in names} == {n: metadata.version(n) for n in names}
    assert provenance._version("no-such-distribution-clineval") is None
