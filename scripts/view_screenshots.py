"""Screenshots of `clineval view`'s main pages for the docs: docs/screenshots/view_*.png.

Builds a demo store in a temporary folder (the shipped demo run; the four-tier example of
examples/cds_recommender/run_four_tier.py; a DDx run of examples/ddx_open_xddx.yaml on 30 Open-XDDx vignettes
against a scripted DDx server; GPT-4 and GPT-3.5 on the demo questions as two runs, for the compare and the
leaderboard), records one adjudication through the browser, serves the store with uvicorn on a free port and
saves one full-page PNG per page with Debian's Chromium (Playwright).

    python scripts/view_screenshots.py [--out docs/screenshots] [--chromium PATH] [--store-dir DIR]

Chromium: --chromium, else $CLINEVAL_TEST_CHROMIUM, else `bash scripts/browser.sh`. The DDx page needs the
Open-XDDx data under ../shared/data/open_xddx (skipped with a message when it is not there).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from clineval.view.urls import link

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "src" / "clineval" / "demo"
OPEN_XDDX = ROOT.parent / "shared" / "data" / "open_xddx" / "open_xddx.jsonl"
DISTRACTOR = "Unrelated condition of the xylophone"


def _run(suite: Path, url: str, **options: Any) -> str:
    from clineval.runs import run as api

    request = api.RunRequest(suite_path=suite, store_url=url, cache_path=None, **options)
    return api.run_suite(request).run_id


def mcq_suite(folder: Path, name: str, predictions: str) -> Path:
    suite = folder / f"{name}.yaml"
    suite.write_text(
        f"name: {name}\n"
        "tasks:\n"
        "  - id: medqa\n"
        f"    dataset: {{format: medqa, path: {DEMO / 'data' / 'medqa_test_first200.jsonl'}}}\n"
        f"    system: {{type: predictions, path: {DEMO / 'data' / predictions}, output_field: raw_output, "
        "numeric_ids: true}\n"
        "    scorers: [mcq]\n"
        "    stratify: [meta_info]\n"
    )
    return suite


def ddx_run(folder: Path, url: str) -> str | None:
    """30 Open-XDDx vignettes; the scripted system names the whole ground truth, part of it plus a
    distractor, or only the distractor (in turn), so every DDx decision kind shows."""
    if not OPEN_XDDX.exists():
        print(f"SKIP the DDx run: {OPEN_XDDX} is not there", file=sys.stderr)
        return None
    from clineval.config import load_suite
    from clineval.testing.cds_pipeline import running_pipeline

    text = (ROOT / "examples" / "ddx_open_xddx.yaml").read_text()
    text = text.replace("../../shared/data", str(OPEN_XDDX.parents[1]))

    def suite_for(predict_url: str) -> Path:
        path = folder / "ddx.yaml"
        path.write_text(text.replace("http://127.0.0.1:8002/predict", predict_url))
        return path

    cases = load_suite(suite_for("http://127.0.0.1:1/predict"), limit=30, seed=3).tasks[0].cases
    reports = {}
    for i, case in enumerate(cases):
        truth = list(case.reference.differential)
        names = [truth, [truth[0], DISTRACTOR], [DISTRACTOR]][i % 3]
        reports[case.id] = {"differential": [{"diagnosis": name} for name in names]}
    with running_pipeline(reports) as (predict_url, _server):
        return _run(suite_for(predict_url), url, limit=30, seed=3)


MIRAGE = ROOT.parent / "shared" / "data"
MEDQA_FULL = MIRAGE / "medqa_usmle_4opt" / "phrases_no_exclude_test.jsonl"
STANDIN = "def always_a(case):\n    return 'The answer is A.'\n"


def leaderboard_runs(folder: Path, url: str) -> list[str]:
    """Runs the leaderboard must keep apart (issue 22 item 8): GPT-4 and GPT-3.5 on all 1,273 MedQA test
    questions (shared; a column of the catalogue's MedQA), GPT-4 + RAG on a 50-question sample of it (alone
    in its column: unranked), and an always-"A" stand-in on 50 demo questions (alone: unranked)."""
    (folder / "standins.py").write_text(STANDIN)
    suite = folder / "always-a.yaml"
    suite.write_text(
        "name: always-a\ntasks:\n  - id: medqa\n"
        f"    dataset: {{format: medqa, path: {DEMO / 'data' / 'medqa_test_first200.jsonl'}}}\n"
        "    system: {type: callable, target: 'standins:always_a'}\n    scorers: [mcq]\n"
    )
    found = [_run(suite, url, limit=50, seed=0)]
    predictions = MIRAGE / "mirage_medrag_predictions"
    if not MEDQA_FULL.exists():
        print(f"SKIP the full MedQA runs: {MEDQA_FULL} is not there", file=sys.stderr)
        return found
    tasks = ""
    for model in ("gpt-4-32k", "gpt-35-turbo-16k"):
        tasks += (
            f"  - id: medqa-{model}\n    dataset: {{format: medqa, path: {MEDQA_FULL}}}\n"
            f"    system: {{type: predictions, path: {predictions / f'medqa__cot__{model}.jsonl'}, "
            "output_field: raw_output, numeric_ids: true}\n    scorers: [mcq]\n"
        )
    full = folder / "mirage-medqa.yaml"
    full.write_text(f"name: mirage-medqa\ntasks:\n{tasks}")
    sample = folder / "mirage-medqa-rag-50.yaml"
    sample.write_text(
        "name: mirage-medqa-rag-50\ntasks:\n  - id: medqa-rag\n"
        f"    dataset: {{format: medqa, path: {MEDQA_FULL}}}\n"
        f"    system: {{type: predictions, path: {predictions / 'medqa__rag_32__gpt-4-32k.jsonl'}, "
        "output_field: raw_output, numeric_ids: true}\n    scorers: [mcq]\n"
    )
    return [_run(full, url), _run(sample, url, limit=50, seed=0), *found]


def build_store(folder: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "examples" / "cds_recommender"))
    from run_four_tier import run as run_four_tier  # writes folder/store.db

    four_tier = run_four_tier(folder).run_id
    url = f"sqlite:///{folder}/store.db"
    demo = _run(Path(str(DEMO / "suite.yaml")), url)
    gpt35 = _run(mcq_suite(folder, "medqa-gpt-35", "medqa_cot_gpt-35-turbo-16k_first200.jsonl"), url)
    gpt4 = _run(mcq_suite(folder, "medqa-gpt-4", "medqa_cot_gpt-4-32k_first200.jsonl"), url)
    ddx = ddx_run(folder, url)
    board = leaderboard_runs(folder, url)
    return {
        "url": url,
        "demo": demo,
        "four_tier": four_tier,
        "gpt35": gpt35,
        "gpt4": gpt4,
        "ddx": ddx,
        "board": board,
    }


@contextmanager
def serving(store_url: str) -> Iterator[str]:
    """The viewer on a free loopback port in a background thread."""
    import uvicorn

    from clineval.view import create_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(store_url), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the viewer did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


def first_case(store_url: str, run_id: str, label: str | None = None) -> tuple[str, str]:
    """(task id, case id) of the run's first case, or its first case with this label (any scorer)."""
    from clineval.store import ResultStore

    handle = ResultStore(store_url, must_exist=True)
    try:
        results = handle.load_results(run_id)
    finally:
        handle.close()
    for result in results:
        if label is None or any(s.label == label for s in result.scores.values()):
            return result.task_id, result.case_id
    return results[0].task_id, results[0].case_id


def gold_of(store_url: str, run_id: str, key: tuple[str, str]) -> str:
    from clineval.store import ResultStore

    handle = ResultStore(store_url, must_exist=True)
    try:
        found = next(r for r in handle.load_results(run_id) if (r.task_id, r.case_id) == key)
    finally:
        handle.close()
    return str(found.scores["mcq"].breakdown["gold"])


def case_path(run_id: str, key: tuple[str, str]) -> str:
    return link("case", run=run_id, task=key[0], case=key[1])


def chromium(explicit: str | None) -> str:
    named = explicit or os.environ.get("CLINEVAL_TEST_CHROMIUM")
    if named:
        return named
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "browser.sh")], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def adjudicate(page: Any, path: str, corrected: str) -> None:
    """One review through the case page's form (disagree: the answer read as ``corrected``), so the review
    and agreement pages have something to show."""
    page.goto(path)
    form = page.locator('[data-testid="review-form"]').first
    if form.count() == 0:
        print(f"no review form on {path}: no adjudication recorded", file=sys.stderr)
        return
    form.locator('input[name="reviewer"]').fill("Dr Screenshot")
    form.locator('input[name="verdict"][value="disagree"]').check()
    form.locator('select[name="corrected_value"]').select_option(corrected)
    form.locator('[data-testid="review-submit"]').click()
    page.wait_for_load_state()


def extracted_of(url: str, store: dict[str, Any], key: tuple[str, str]) -> str:
    from clineval.store import ResultStore

    handle = ResultStore(url, must_exist=True)
    try:
        found = next(r for r in handle.load_results(store["demo"]) if (r.task_id, r.case_id) == key)
    finally:
        handle.close()
    return str(found.scores["mcq"].breakdown["extracted"])


def shoot(
    store: dict[str, Any], out: Path, browser_path: str, only: frozenset[str] = frozenset()
) -> list[Path]:
    from playwright.sync_api import sync_playwright

    url = store["url"]
    incorrect = first_case(url, store["demo"], "incorrect")
    unparsed = first_case(url, store["demo"], "unparsed")
    board = [store["gpt35"], store["gpt4"], store["demo"], *store.get("board", []), store["ddx"]]
    pages = {
        "runs": "/",
        "run_demo": link("run", run=store["demo"]),
        "run_four_tier": link("run", run=store["four_tier"]),
        "cases": link("cases", run=store["demo"]),
        "case": case_path(store["demo"], incorrect),
        "case_four_tier": case_path(store["four_tier"], first_case(url, store["four_tier"])),
        "compare": f"/compare?a={store['gpt35']}&b={store['gpt4']}",
        "leaderboard": f"/leaderboard?runs={','.join(r for r in board if r)}",
        "trends": "/trends",
        "review": link("queue", run=store["demo"]),
        "agreement": link("agreement", run=store["demo"]),
    }
    if store["ddx"]:
        pages["run_ddx"] = link("run", run=store["ddx"])
        pages["case_ddx"] = case_path(store["ddx"], first_case(url, store["ddx"]))
    out.mkdir(parents=True, exist_ok=True)
    saved = []
    with serving(url) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, headless=True, args=["--no-sandbox"])
        context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 800})
        page = context.new_page()
        # two "disagree" reviews (issue 22 item 8): a wrong answer read as another wrong letter, and an
        # unreadable one read as the gold letter: 0 of 2 agree on the letter, 1 of 2 on the outcome
        gold = gold_of(url, store["demo"], incorrect)
        adjudicate(
            page,
            pages["case"],
            next(x for x in "ABCD" if x not in (gold, extracted_of(url, store, incorrect))),
        )
        adjudicate(page, case_path(store["demo"], unparsed), gold_of(url, store["demo"], unparsed))
        for name, path in pages.items():
            if only and name not in only:
                continue
            wide = name == "leaderboard"  # a column per set of cases: seen whole on a wide screen
            page.set_viewport_size({"width": 1600 if wide else 1280, "height": 800})
            response = page.goto(path)
            status = response.status if response else "no response"
            page.wait_for_load_state("networkidle")
            target = out / f"view_{name}.png"
            page.screenshot(path=str(target), full_page=True)
            saved.append(target)
            print(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}  {status}  {path}")
        browser.close()
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--chromium", help="the browser executable (default: scripts/browser.sh)")
    parser.add_argument(
        "--store-dir", type=Path, help="build the store here and keep it (default: a temp dir)"
    )
    parser.add_argument("--pages", default="", help="only these pages, e.g. leaderboard,agreement")
    args = parser.parse_args()
    browser_path = chromium(args.chromium)
    only = frozenset(p.strip() for p in args.pages.split(",") if p.strip())
    if args.store_dir:
        args.store_dir.mkdir(parents=True, exist_ok=True)
        store = build_store(args.store_dir)
        print(json.dumps(store), file=sys.stderr)
        shoot(store, args.out, browser_path, only)
        return
    with tempfile.TemporaryDirectory() as folder:
        shoot(build_store(Path(folder)), args.out, browser_path, only)


if __name__ == "__main__":
    main()
