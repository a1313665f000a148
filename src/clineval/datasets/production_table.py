"""The database source of ``format: production_log``: one table, reflected with SQLAlchemy Core and read
with bound parameters only (the window and ``limit`` in SQL for a date-time column; a text column of ISO
times is parsed and filtered here). Messages show the URL with its password hidden."""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from sqlalchemy import Column, MetaData, Table, create_engine, func, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchTableError, SQLAlchemyError
from sqlalchemy.types import DateTime

from clineval.core import LoadedDataset
from clineval.core.errors import DataFileError
from clineval.datasets.production import (
    ProductionLogOptions,
    Window,
    _Bad,
    _dataset,
    _make_record,
    _Record,
    _select,
    _span,
    check_unique_at,
    parse_timestamp,
)


def _database_url(opts: ProductionLogOptions) -> str:
    if opts.url_env is not None:
        url = os.environ.get(opts.url_env)
        if not url:
            raise DataFileError(
                f"environment variable {opts.url_env} is not set",
                hint="set it to the SQLAlchemy URL of the production database",
            )
        return url
    if opts.url is None:
        raise ValueError("production_log: url or url_env is required for a database source")
    return opts.url


def _display(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(unparsable database URL)"


def _db_problem(err: SQLAlchemyError, url: str) -> str:
    """A one-line reason without the password (driver messages may quote the URL)."""
    lines = str(getattr(err, "orig", None) or err).strip().splitlines()
    message = lines[0] if lines else "no details"
    try:
        password = make_url(url).password
    except ArgumentError:
        password = None
    if password:
        message = message.replace(str(password), "***")
    return f"{type(err).__name__}: {message}"


def _column(table: Table, name: str, label: str) -> Column[Any]:
    if name not in table.c:
        known = ", ".join(c.name for c in table.c)
        raise DataFileError(
            f"table {table.fullname!r} has no column {name!r}",
            path=label,
            hint=f"its columns: {known}; set the matching *_field option",
        )
    return table.c[name]


def _bound(when: datetime, column: Column[Any]) -> datetime:
    """A window bound as the column compares it: aware for ``timezone=True`` types, naive UTC otherwise."""
    return when if getattr(column.type, "timezone", False) else when.replace(tzinfo=None)


def load_table(opts: ProductionLogOptions, table_name: str, window: Window) -> LoadedDataset:
    url = _database_url(opts)
    label = f"{_display(url)} table {table_name}"
    try:
        engine = create_engine(url)
    except (ArgumentError, SQLAlchemyError, ImportError) as err:
        raise DataFileError(f"cannot open the database: {type(err).__name__}", path=label) from None
    try:
        with engine.connect() as conn:
            try:
                table = Table(table_name, MetaData(), autoload_with=conn, schema=opts.db_schema)
            except NoSuchTableError:
                raise DataFileError(
                    f"table {table_name!r} not found",
                    path=label,
                    hint="check table (and db_schema) in the dataset options",
                ) from None
            id_col = _column(table, opts.id_field, label)
            ts_col = _column(table, opts.timestamp_field, label)
            _column(table, opts.output_field, label)
            explicit = opts.model_fields_set
            if opts.patient_field and "patient_field" in explicit:
                _column(table, opts.patient_field, label)
            if "metadata_fields" in explicit:
                for name in opts.metadata_fields:
                    _column(table, name, label)
            in_sql = isinstance(ts_col.type, DateTime)
            stmt = select(table)
            if in_sql:
                start, end = _bound(window.start, ts_col), _bound(window.end, ts_col)
                stmt = stmt.where(ts_col >= start, ts_col < end).order_by(ts_col.desc(), id_col.desc())
                if opts.limit is not None:
                    stmt = stmt.limit(opts.limit)
            rows = [dict(row._mapping) for row in conn.execute(stmt)]
            records = _table_records(rows, opts, label)
            selected = _select(records, window, None)
            check_unique_at(selected, label)
            if opts.limit is not None:
                selected = selected[-opts.limit :]
            span: tuple[datetime, datetime] | None = None
            if not selected:
                if in_sql:
                    low, high = conn.execute(select(func.min(ts_col), func.max(ts_col))).one()
                    if low is not None and high is not None:
                        span = (
                            parse_timestamp(low, naive_is_utc=True),
                            parse_timestamp(high, naive_is_utc=True),
                        )
                else:
                    span = _span(r.when for r in records)
            return _dataset(selected, window, label, span)
    except SQLAlchemyError as err:
        raise DataFileError(f"cannot read the database: {_db_problem(err, url)}", path=label) from None
    finally:
        engine.dispose()


def _table_records(rows: list[dict[str, Any]], opts: ProductionLogOptions, label: str) -> list[_Record]:
    records: list[_Record] = []
    for row in rows:
        try:
            records.append(_make_record(row, opts, database=True))
        except _Bad as bad:
            where = f"row {opts.id_field}={row.get(opts.id_field)!r}: "
            raise DataFileError(where + bad.problem, path=label, hint=bad.hint) from None
    return records
