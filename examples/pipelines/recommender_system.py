"""The EXAMPLE recommender (examples/cds_recommender, not a product) as a Python-callable system."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cds_recommender"))
from recommender import recommend

from clineval.core import Case


def system(case: Case) -> dict[str, Any]:
    return recommend(case.input.data["patient"])
