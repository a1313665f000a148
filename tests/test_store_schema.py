"""The store's schema on SQLite and PostgreSQL: Alembic migrations (head, equality with the tables,
pre-Alembic databases, downgrade), eval_results round trips and constraints, concurrent writers."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import func, insert, select, text
from sqlalchemy.exc import IntegrityError

from clineval.core import EvalMetric
from clineval.store import ResultStore, make_engine
from clineval.store.migrate import MIGRATIONS, _config, current_revision
from clineval.store.migrations import HEAD
from clineval.store.tables import case_results, eval_results, metadata
from tests.test_store import info

NOW = datetime(2026, 11, 22, 2, 0, tzinfo=UTC)


def test_head_constant_is_the_newest_script() -> None:
    scripts = ScriptDirectory(str(MIGRATIONS))
    assert scripts.get_heads() == [HEAD]
    revisions = [s.revision for s in scripts.walk_revisions()]
    assert revisions == ["0010", "0009", "0008", "0007", "0006", "0005", "0004", "0003", "0002", "0001"]


def test_migrations_produce_exactly_the_declared_tables(store_url: str) -> None:
    with ResultStore(store_url) as store, store.engine.connect() as conn:
        assert current_revision(conn) == HEAD
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), metadata)
    assert diff == []


def test_a_pre_alembic_database_is_stamped_and_upgraded(store_url: str) -> None:
    """A store created by clineval before Alembic (revision 0001's schema, no alembic_version)."""
    engine = make_engine(store_url)
    with engine.begin() as conn:
        command.upgrade(_config(conn), "0001")
        conn.execute(
            text(
                "INSERT INTO runs (run_id, suite_name, suite_spec, suite_hash, status, created_at,"
                " provenance) VALUES ('old', 's', '{}', 'h', 'finished', :t, '{}')"
            ),
            {"t": NOW},
        )
        conn.execute(text("DROP TABLE alembic_version"))
    engine.dispose()
    with ResultStore(store_url) as store:
        with store.engine.connect() as conn:
            assert current_revision(conn) == HEAD
            row = conn.execute(text("SELECT tenant_id, run_type FROM runs WHERE run_id = 'old'")).one()
        assert tuple(row) == ("default", "adhoc")


def test_downgrade_and_upgrade_again(store_url: str) -> None:
    with ResultStore(store_url) as store:
        store.create_run(info("kept"))
        with store.engine.begin() as conn:
            command.downgrade(_config(conn), "0001")
            assert current_revision(conn) == "0001"
            assert "eval_results" not in set(conn.dialect.get_table_names(conn))
    with ResultStore(store_url) as again:
        assert again.get_run("kept").tenant_id == "default"


def _metric(run_id: str, **changes: object) -> EvalMetric:
    values: dict[str, object] = {
        "run_id": run_id,
        "run_type": "nightly",
        "timestamp": NOW,
        "tenant_id": "acme",
        "metric_name": "guideline_adherence",
        "metric_value": 0.8,
        "condition": "copd",
        "tier": 3,
        "metadata": {"task": "golden", "ci": [0.7, math.inf]},
    }
    return EvalMetric.model_validate({**values, **changes})


def test_eval_results_round_trip_and_filters(store_url: str) -> None:
    run_a, run_b = uuid.uuid4().hex, uuid.uuid4().hex
    with ResultStore(store_url) as store:
        stored = store.eval_results
        assert stored.record([_metric(run_a), _metric(run_a, metric_value=math.nan, condition=None)]) == 2
        stored.record([_metric(run_b, run_type="weekly", tier=4, metric_name="judge_accuracy")])
        rows = stored.query(run_id=run_a)
        assert [r.condition for r in rows] == ["copd", None]
        assert rows[0] == _metric(run_a)  # every column (tz-aware timestamp, JSON with inf) comes back
        assert math.isnan(rows[1].metric_value)  # stored as NULL, read as "not scorable"
        assert [r.run_id for r in stored.query(tenant_id="acme", run_type="weekly")] == [run_b]
        assert stored.query(metric_name="judge_accuracy", since=NOW)[0].tier == 4
        assert stored.query(tenant_id="other") == []
        # a finalised run's rows are replaced, gate rows kept
        stored.record([_metric(run_a, run_type="config_gate", passed_baseline=False)])
        assert stored.replace_run_rows(run_a, [_metric(run_a, metric_value=0.9)]) == 1
        assert sorted((r.run_type, r.metric_value) for r in stored.query(run_id=run_a)) == [
            ("config_gate", 0.8),
            ("nightly", 0.9),
        ]


@pytest.mark.parametrize(
    "column, value",
    [("run_type", "hourly"), ("tier", 5)],
)
def test_the_database_rejects_what_the_model_would(store_url: str, column: str, value: object) -> None:
    """The CHECK constraints hold even for writers that bypass clineval's models."""
    row = {
        "run_id": uuid.uuid4().hex,
        "run_type": "adhoc",
        "timestamp": NOW,
        "tenant_id": "t",
        "metric_name": "m",
        "metric_value": 1.0,
        "metadata": {},
        column: value,
    }
    with ResultStore(store_url) as store, pytest.raises(IntegrityError), store.engine.begin() as conn:
        conn.execute(insert(eval_results), row)


WRITER = """
import sys
sys.path.insert(0, {tests!r})
from test_store import info, result
from clineval.store import ResultStore
url, run_id, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = ResultStore(url)  # both processes may be the first to open (and migrate) the database
store.create_run(info(run_id))
with store.writer(run_id) as writer:
    for i in range(n):
        writer.put(result(f"c{{i}}"))
store.close()
"""


def test_two_runs_writing_concurrently_lose_no_rows(store_url: str, tmp_path: Path) -> None:
    """Two processes open a new store at the same moment and each write a run; every row arrives."""
    script = tmp_path / "writer.py"
    script.write_text(textwrap.dedent(WRITER.format(tests=str(Path(__file__).parent))))
    n = 3_000
    children = [
        subprocess.Popen([sys.executable, str(script), store_url, run_id, str(n)], stderr=subprocess.PIPE)
        for run_id in ("writer-a", "writer-b")
    ]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err.decode()[-2000:]
    with ResultStore(store_url) as store, store.engine.connect() as conn:
        counts = dict(
            conn.execute(select(case_results.c.run_id, func.count()).group_by(case_results.c.run_id)).all()
        )
        assert counts == {"writer-a": n, "writer-b": n}
        assert store.finished_keys("writer-a") == {("medqa", f"c{i}") for i in range(n)}
