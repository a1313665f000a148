"""Alembic migrations of the result store (applied by :func:`clineval.store.migrate.upgrade`)."""

HEAD = "0010"  # the newest revision; a test checks it against the scripts in versions/
