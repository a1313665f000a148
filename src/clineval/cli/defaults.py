"""Option defaults shown by `clineval --help`, as literals.

The library modules that own them (``clineval.runs.run``, ``store.baselines``, ``analysis.degradation``,
``releases``) import pydantic models, SQLAlchemy and numpy; reading a default from them would make every
command, ``--help`` included, pay for that (fast start). ``tests/test_fast_start.py`` keeps each literal
equal to the library's value.
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_STORE = "sqlite:///.clineval/clineval.db"  # clineval.runs.run.DEFAULT_STORE
DEFAULT_CACHE = Path(".clineval/cache.sqlite")  # clineval.runs.run.DEFAULT_CACHE
DEFAULT_TENANT = "default"  # clineval.store.baselines.DEFAULT_TENANT
DEGRADED_THRESHOLD = 0.2  # clineval.analysis.degradation.DEFAULT_THRESHOLD
GATE_ALPHA = 0.05  # clineval.releases.gate.GATE_ALPHA
GATE_MARGIN = 0.0  # clineval.releases.gate.GATE_MARGIN
