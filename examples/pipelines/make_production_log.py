"""Write production_log.jsonl: what the EXAMPLE recommender (examples/cds_recommender) would have returned
for the 100 golden-set patients over two days, as a production log for the nightly Tier 1 step.

Synthetic and deterministic (timestamps every 30 minutes from 2026-11-20T00:00Z; every 25th record is a
recorded system error; latency from a seeded RNG). Run from the repository root:
    python examples/pipelines/make_production_log.py
"""

from __future__ import annotations

import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "cds_recommender"))
from recommender import recommend  # noqa: E402

GOLDEN = HERE.parents[1] / "data" / "golden_set" / "golden_set_v2.jsonl"
START = datetime(2026, 11, 20, tzinfo=UTC)


def main() -> None:
    rng = random.Random(0)
    rows = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    out = []
    for i, row in enumerate(rows):
        record = {
            "id": f"rec-{i + 1:04d}",
            "timestamp": (START + timedelta(minutes=30 * i)).isoformat().replace("+00:00", "Z"),
            "tenant": "acme",
            "condition": row["metadata"]["condition"],
            "patient": row["patient"],
            "latency_s": round(rng.uniform(0.4, 2.5), 3),
        }
        if (i + 1) % 25 == 0:
            record["error"] = {"kind": "timeout", "message": "no answer within 30 s"}
        else:
            record["output"] = recommend(row["patient"])
        out.append(json.dumps(record, ensure_ascii=False))
    (HERE / "production_log.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
