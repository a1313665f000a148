"""The figures of docs/judging/judge_qualification.md and judge_qualification_evidence.md (issue 28), from the
repository: ``clineval.judging.qualification`` and the test helpers (tests/judge_qualification_sim.py: the
simulated labelled golden set and scripted judges; tests/judge_qualification_live.py: the scripted judges on
the local OpenAI-compatible server). Each subcommand prints Markdown.

    python scripts/judge_qualification_evidence.py coverage [--reps 1000]
        simulated coverage and width of the 95% intervals of kappa: analytic (FCE 1969), percentile
        bootstrap over items, Wilson-on-disagreement, and their envelope (the interval shown); seeded
    python scripts/judge_qualification_evidence.py worked [--reviewers] [--cases N]
        the library-level worked example: each scripted judge qualified on the 102 golden-set cases x 4
        dimensions + 3 rubric criteria per case (306), K = 3, seed 11; --reviewers: three noisy clinicians
        (and their ceiling); --cases N: the first N cases only
    python scripts/judge_qualification_evidence.py live [--dir DIR]
        the CLI worked example: oracle / constant / position-biased / noisy judges served by
        clineval.testing.openai_server, each through ``clineval judge qualify``, then ``clineval judge
        list`` and judged runs showing the report's qualification fields (dates and ids vary per run)

The scikit-learn comparison is not here (scikit-learn is not a dependency): its figures are kept in
tests/data/judge_qualification_sklearn.json and checked by tests/test_judge_qualification_reference.py.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.* helpers

from tests.judge_qualification_sim import (
    IDS,
    Item,
    Judge,
    ask,
    constant,
    labels_for,
    noisy,
    oracle,
    position_biased,
    world,
)

from clineval.judging.qualification import Qualification, qualify
from clineval.judging.qualification.agreement import BinaryAgreement, kappa_figure
from clineval.judging.qualification.kappa import identity_weights, kappa_of_table, table_of, weighted_table
from clineval.judging.qualification.verdict import GroupVerdict

# ---------------------------------------------------------------------------------------------- coverage


def joint_grades(noise: float, bias: float) -> np.ndarray:
    """P(judge = i, reference = j) on 1-5: reference ~ p_ref; judge = reference moved by -1 / +1 with
    probabilities noise/2 - bias/2 and noise/2 + bias/2 (clipped to the scale)."""
    p_ref = np.array([0.10, 0.20, 0.35, 0.25, 0.10])
    joint = np.zeros((5, 5))
    down, up = noise / 2 - bias / 2, noise / 2 + bias / 2
    for j in range(5):
        joint[j, j] += p_ref[j] * (1 - noise)
        joint[max(j - 1, 0), j] += p_ref[j] * down
        joint[min(j + 1, 4), j] += p_ref[j] * up
    return joint


def joint_binary(sens: float, spec: float, prev: float = 0.6) -> np.ndarray:
    return np.array([[sens * prev, (1 - spec) * (1 - prev)], [(1 - sens) * prev, spec * (1 - prev)]])


def true_kappa(joint: np.ndarray, weights: np.ndarray) -> float:
    rows, cols = joint.sum(1), joint.sum(0)
    p_o, p_e = (joint * weights).sum(), rows @ weights @ cols
    return float((p_o - p_e) / (1 - p_e))


def simulate(joint: np.ndarray, kind: str, n: int, reps: int, rng: np.random.Generator) -> tuple[float, ...]:
    """(true kappa, tables used, coverage of FCE / bootstrap / Wilson / envelope, their mean widths)."""
    k = joint.shape[0]
    if kind == "grade":
        w = np.array([[1 - (i - j) ** 2 / 16 for j in range(5)] for i in range(5)])
    else:
        w = np.eye(2)
    truth = true_kappa(joint, w)
    hits = np.zeros(4)
    widths = np.zeros(4)
    done = 0
    flat = joint.ravel()
    for _ in range(reps):
        cells = rng.choice(k * k, size=n, p=flat)
        a, b = cells // k, cells % k
        if len(set(b)) < 2:
            continue  # undefined: the labels would be refused
        try:
            if kind == "grade":
                t = weighted_table([float(x + 1) for x in a], [float(x + 1) for x in b])
            else:
                t = table_of([x == 0 for x in a], [x == 0 for x in b], (True, False), identity_weights(2))
            est = kappa_of_table(t)
        except Exception:
            continue
        fig = kappa_figure(t, est, seed=int(rng.integers(1 << 30)), n_resamples=1000, min_n=0)
        if fig.interval is None:
            continue
        done += 1
        for m, iv in enumerate((fig.analytic, fig.bootstrap, fig.wilson, fig.interval)):
            hits[m] += iv[0] <= truth <= iv[1]
            widths[m] += iv[1] - iv[0]
    return (truth, done, *(hits / done), *(widths / done))


def coverage(reps: int) -> None:
    rng = np.random.default_rng(20261128)
    scenarios = [
        ("grades, judge ±1 on 60%", joint_grades(0.6, 0.0), "grade"),
        ("grades, judge ±1 on 30%", joint_grades(0.3, 0.0), "grade"),
        ("grades, judge ±1 on 10%", joint_grades(0.1, 0.0), "grade"),
        ("grades, lenient: +1 on 40%", joint_grades(0.4, 0.4), "grade"),
        ("met, sens .85 spec .75", joint_binary(0.85, 0.75), "met"),
        ("met, sens .90 spec .85", joint_binary(0.90, 0.85), "met"),
        ("met, sens .95 spec .95", joint_binary(0.95, 0.95), "met"),
    ]
    print(
        "| scenario | true κ | n | runs | cover FCE | cover boot | cover Wilson | cover envelope "
        "| width FCE | width boot | width Wilson | width env |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, joint, kind in scenarios:
        for n in (10, 20, 30, 50, 100):
            t, done, *figures = simulate(joint, kind, n, reps, rng)
            cells = " | ".join(f"{x:.3f}" for x in figures)
            print(f"| {name} | {t:.3f} | {n} | {int(done)} | {cells} |")


# ------------------------------------------------------------------------------------------------ worked

JUDGES: tuple[tuple[str, Judge], ...] = (
    ("constant", constant),
    ("oracle", oracle),
    ("position-biased", position_biased),
    ("noisy (20% of samples off)", noisy(0.2)),
    ("slightly noisy (2%)", noisy(0.02)),
)
HEADER = (
    "| group | n | κ [95%] | bal. F1 | bias | flip rate | within-item var | order change "
    "| ceiling clin. / judge | verdict |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)


def fmt(x: float | None, d: int = 3) -> str:
    return "-" if x is None else f"{x:.{d}f}"


def row(g: GroupVerdict) -> str:
    f = g.figures
    k = f.agreement.kappa
    ci = "none" if k.interval is None else f"[{k.interval[0]:.2f}, {k.interval[1]:.2f}]"
    f1 = fmt(f.agreement.balanced_f1.value) if isinstance(f.agreement, BinaryAgreement) else "-"
    ceiling = "-" if f.ceiling is None else f"{fmt(f.ceiling.clinicians)} / {fmt(f.ceiling.judge)}"
    verdict = "qualified" if g.qualified else "NOT: " + "; ".join(g.reasons)
    return (
        f"| {f.group} | {f.compared} | {fmt(k.kappa)} {ci} | {f1} | {f.agreement.bias.value:+.2f} | "
        f"{fmt(f.stability.flip_rate)} | {fmt(f.stability.within_item_variance)} | "
        f"{fmt(f.order.share if f.order else None)} | {ceiling} | {verdict} |"
    )


def worked_items(cases: int | None = None) -> list[Item]:
    """The simulated labelled golden set (tests/judge_qualification_sim.py), its first ``cases`` cases."""
    items = world()
    if cases is None:
        return items
    keep = set(IDS[:cases])
    return [item for item in items if item.key[1][0] in keep]


def worked_results(reviewers: bool = False, cases: int | None = None) -> dict[str, Qualification]:
    """Each scripted judge qualified: K = 3 samples in the original and in the permuted order, seed 11;
    one clinician, or three whose labels are each moved with probability 0.15."""
    names: Sequence[str] = ("dr_a", "dr_b", "dr_c") if reviewers else ("",)
    items = worked_items(cases)
    labels = labels_for(items, reviewers=names, noise=0.15 if reviewers else 0.0)
    return {
        name: qualify(labels, ask(judge, items, 3), ask(judge, items, 3, reorder=True), seed=11)
        for name, judge in JUDGES
    }


def worked(reviewers: bool, cases: int | None) -> None:
    for name, result in worked_results(reviewers, cases).items():
        print(f"\n**{name}**: {'qualified (exit 0)' if result.qualified else 'not qualified (exit 1)'}\n")
        print(HEADER)
        for g in result.groups:
            print(row(g))


# -------------------------------------------------------------------------------------------------- live


def live(root: Path) -> None:
    from tests.judge_qualification_live import JUDGE_MODEL, script, write_labels, write_suite

    from clineval.testing.process import running_server_process

    store = f"sqlite:///{root}/store.db"
    (root / ".clineval").mkdir(parents=True, exist_ok=True)
    labels = write_labels(root / "labels.jsonl")

    env = {**os.environ, "COLUMNS": "250"}  # no wrapped lines in the printed tables

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "clineval.cli.main", *args],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )

    def report(run_dir: Path) -> dict:  # type: ignore[type-arg]
        return json.loads((run_dir / "report.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    for kind in ("oracle", "constant", "position", "noisy"):
        with running_server_process(script(kind)) as server:
            d = root / kind
            d.mkdir()
            suite = write_suite(d, server.base_url)
            r = cli("judge", "qualify", str(suite), "--task", "t", "--labels", str(labels), "--store", store)
            print(f"## {kind}: `clineval judge qualify {kind}/suite.yaml --task t --labels labels.jsonl`")
            print(f"exit {r.returncode}\n\n{r.stdout.strip()}\n{r.stderr.strip()}\n")
            if kind == "oracle":
                run = cli("run", str(suite), "--store", store, "--out", str(d / "run"))
                rep = report(d / "run")
                print(f"## judged run after the oracle's qualification: exit {run.returncode}\n")
                print("report.json judge_qualified:", json.dumps(rep["judge_qualified"]))
                print("report.json judge_banners:", json.dumps(rep["judge_banners"]))
                print("report.json judge_qualification:", json.dumps(rep["judge_qualification"]))
                entry = rep["provenance"]["judge_qualification"]
                print("provenance.judge_qualification:", json.dumps(entry, indent=1), "\n")
            if kind == "noisy":
                other = d / "suite2.yaml"
                other.write_text(
                    suite.read_text().replace(f"model: {JUDGE_MODEL}", f"model: {JUDGE_MODEL}-2")
                )
                run = cli("run", str(other), "--store", store, "--out", str(d / "run"))
                rep = report(d / "run")
                print(f"## judged run, judge model {JUDGE_MODEL}-2 (not qualified): exit {run.returncode}\n")
                print("report.json judge_qualified:", json.dumps(rep["judge_qualified"]))
                print("report.json judge_banners:", json.dumps(rep["judge_banners"]))
                md = (d / "run" / "report.md").read_text(encoding="utf-8").splitlines()
                print(
                    "report.md:\n"
                    + "\n".join(line for line in md if line.startswith("> ") and "JUDGE" in line)
                )
                print("\n".join(line for line in md if line.startswith("> - task t")), "\n")
    r = cli("judge", "list", "--store", store)
    print(f"## clineval judge list: exit {r.returncode}\n\n{r.stdout.strip()}\n")
    print(f"(working directory: {root})")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("coverage", help="interval coverage simulation")
    p.add_argument("--reps", type=int, default=1000, help="simulated tables per row (default 1000)")
    p = sub.add_parser("worked", help="library-level worked example (102 cases, K = 3)")
    p.add_argument("--reviewers", action="store_true", help="three noisy clinicians (ceiling)")
    p.add_argument("--cases", type=int, default=None, help="the first N golden-set cases only")
    p = sub.add_parser("live", help="CLI worked example on the scripted OpenAI-compatible server")
    p.add_argument("--dir", type=Path, default=None, help="working directory (default: a new temporary one)")
    args = parser.parse_args(argv)
    if args.command == "coverage":
        coverage(args.reps)
    elif args.command == "worked":
        worked(args.reviewers, args.cases)
    else:
        live(args.dir or Path(tempfile.mkdtemp(prefix="judge-qualification-")))


if __name__ == "__main__":
    main()
