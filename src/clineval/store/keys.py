"""The keys of a case ``(task_id, case_id)``: its unique key in the store, and the digest the shards read.

:func:`case_key` is ``case_results.case_key``, unique per run. Task and case ids are TEXT of any length, and a
PostgreSQL btree index entry holds at most ~2.7 kB, so the ids themselves cannot be the unique index. The key
is ``"<len(task_id)>:<task_id>:<case_id>"`` when that is at most :data:`LITERAL_MAX` characters (the usual
case: it sorts like the ids, so a run's rows are appended to the index in order, as before), else its first
:data:`PREFIX` characters, ``#`` and the SHA-256 of the whole in hex (215 characters). A hashed key is longer
than any literal one, so the two kinds never meet. (A key that is only a digest would put each new row at a
random place in the index: inserts measured ~40% slower on SQLite.)

:func:`key_digest` is ``sha256(task_id + "\\0" + case_id)`` in hex: the shard partition
(:func:`clineval.store.shards.shard_of`) reads its first 16 digits.
"""

from __future__ import annotations

import hashlib

LITERAL_MAX = 200
PREFIX = 150
CASE_KEY_LENGTH = PREFIX + 1 + 64  # the longest key: prefix, "#", digest


def case_key(task_id: str, case_id: str) -> str:
    """The stored unique key of the case within its run (``case_results.case_key``)."""
    key = f"{len(task_id)}:{task_id}:{case_id}"
    if len(key) <= LITERAL_MAX:
        return key
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{key[:PREFIX]}#{digest}"


def key_digest(task_id: str, case_id: str) -> str:
    """The hex SHA-256 of the case's ids (the shard partition)."""
    return hashlib.sha256(f"{task_id}\0{case_id}".encode()).hexdigest()
