"""Cold start of the `clineval` command: how long a user waits before anything happens.

Each row is the median wall time of N fresh subprocesses (no warm interpreter, OS file cache warm after the
first run). The baseline is ``python -c "import typer, rich"``, the floor of any typer + rich command line;
the target is `clineval --help` and `clineval runs` within 5x of it.

    .venv/bin/python benchmarks/bench_cold_start.py [--repeats 11]

`clineval runs` reads a small store made once beforehand (the shipped demo suite, 400 cases).
`-X importtime` on ``import clineval.cli.main`` shows where any remaining time goes.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
CLINEVAL = [PYTHON, "-m", "clineval"]
DEMO_SUITE = Path(__file__).resolve().parents[1] / "src" / "clineval" / "demo" / "suite.yaml"
TARGET_RATIO = 5.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wall(argv: list[str], repeats: int) -> tuple[float, float, int]:
    """(median wall seconds, median CPU seconds, exit code of the last run) of ``argv`` run ``repeats``
    times. CPU (user + system) is shown beside wall time because on a shared machine wall time also
    counts waiting for a core."""
    times, cpus, rc = [], [], 0
    for _ in range(repeats):
        cpu = _children_cpu()
        started = time.perf_counter()
        rc = subprocess.run(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
        ).returncode
        times.append(time.perf_counter() - started)
        cpus.append(_children_cpu() - cpu)
    return statistics.median(times), statistics.median(cpus), rc


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = f"sqlite:///{folder}/small.db"
        subprocess.run(
            [*CLINEVAL, "run", str(DEMO_SUITE), "--store", store, "--no-cache"],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=folder,
            stderr=subprocess.DEVNULL,
        )
        commands = [
            ('python -c "import typer, rich"', [PYTHON, "-c", "import typer, rich"]),
            ("clineval --help", [*CLINEVAL, "--help"]),
            ("clineval --version", [*CLINEVAL, "--version"]),
            ("clineval runs (small store)", [*CLINEVAL, "runs", "--store", store]),
            ('python -c "import clineval.cli.main"', [PYTHON, "-c", "import clineval.cli.main"]),
        ]
        wall(commands[0][1], 2)  # warm the OS file cache
        rows = []
        baseline = baseline_cpu = 0.0
        for name, argv in commands:
            seconds, cpu, rc = wall(argv, args.repeats)
            if name.endswith("--version") and rc != 0:
                rows.append((name, "-", "-", "-", "-", "not a command (exit 2)"))
                continue
            baseline, baseline_cpu = baseline or seconds, baseline_cpu or cpu
            ratio = seconds / baseline
            verdict = "baseline" if ratio == 1.0 else ("OK" if ratio <= TARGET_RATIO else "ABOVE TARGET")
            cpu_ratio = f"{cpu / baseline_cpu:.1f}x" if baseline_cpu else "-"
            rows.append((name, f"{seconds:.3f}", f"{ratio:.1f}x", f"{cpu:.3f}", cpu_ratio, verdict))
    print(
        f"\nmedian of {args.repeats} fresh processes, {PYTHON} ({sys.version.split()[0]}); "
        f"target <= {TARGET_RATIO:g}x the baseline\n"
    )
    header = ("command", "wall s", "vs baseline", "CPU s", "vs baseline", "wall vs target")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    main()
