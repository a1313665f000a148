"""Alembic environment: migrate the connection clineval hands over, or the URL of ``sqlalchemy.url``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from clineval.store.engine import make_engine
from clineval.store.tables import metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit(
            "set sqlalchemy.url, or run the migrations through `clineval db upgrade --store URL`"
        )
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run `clineval db upgrade --store URL`")
main()
