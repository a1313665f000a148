"""Markdown reports show untrusted text (dataset metadata, ids, names) but never render it: no link, image,
autolink or raw HTML reaches report.md or the comparison's .md, checked on the raw text and by rendering it
with markdown-it (CommonMark + tables, the parser rich uses)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from clineval.report.md_text import md_inline
from tests.cli_helpers import clineval

HOSTILE = [
    "![x](http://evil.example/pixel.png)",
    "[click me](javascript:alert(1))",
    "<http://evil.example/autolink>",
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[ref] [ref]\n[ref]: http://evil.example/def",
    "x\\](javascript:alert(2))",  # a backslash of its own must not escape our escape
    "a | b ` c",
]
ACTIVE_LINK = re.compile(r"(?<!\\)\]\s*[(\[:]")  # a ] that may close a link: must be backslash-escaped


def rendered(markdown: str) -> str:
    html: str = MarkdownIt("commonmark").enable("table").render(markdown)
    return html


def assert_inert(markdown: str) -> None:
    assert "<script" not in markdown and "<img" not in markdown and "<http" not in markdown
    assert ACTIVE_LINK.search(markdown) is None
    html = rendered(markdown)
    assert "<a " not in html and "<img" not in html and "<script" not in html


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_renders_as_the_text_itself(text: str) -> None:
    row = f"| {md_inline(text)} | 1 |"
    markdown = "| value | n |\n|---|---|\n" + row + "\n"
    assert_inert(markdown)
    # the reader sees the original characters (one line), in one cell of a two-cell row
    html = rendered(markdown)
    cells = re.findall(r"<td>(.*?)</td>", html)
    assert len(cells) == 2 and cells[1] == "1"
    shown = cells[0].replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    assert shown == " ".join(text.split())


def test_our_intervals_stay_readable() -> None:
    assert md_inline("83.97% [81.8, 85.9]") == "83.97% [81.8, 85.9]"


def write_run(folder: Path, answer: str) -> Path:
    rows = [
        {
            "question": f"Q{i}?",
            "options": {"A": "alpha", "B": "beta", "C": "gamma", "D": "delta"},
            "answer_idx": "A",
            "answer": "alpha",
            "meta_info": value,
        }
        for i, value in enumerate(HOSTILE)
    ]
    (folder / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    preds = [json.dumps({"id": str(i), "output": answer}) for i in range(len(rows))]
    (folder / f"p{answer}.jsonl").write_text("\n".join(preds) + "\n")
    suite = folder / f"suite{answer}.yaml"
    suite.write_text(
        "name: '![suite](http://evil.example/s.png)'\n"
        "tasks:\n"
        "  - id: t\n"
        "    dataset: {format: medqa, path: q.jsonl}\n"
        f"    system: {{type: predictions, path: p{answer}.jsonl}}\n"
        "    scorers: [mcq]\n"
        "    stratify: [meta_info]\n"
    )
    return suite


def run_id(stderr: str) -> str:
    found = re.search(r"run ([0-9a-f]{32})", stderr)
    assert found is not None, stderr
    return found.group(1)


def test_reports_of_a_run_with_hostile_metadata_render_no_link(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/s.db"
    first = clineval("run", str(write_run(tmp_path, "A")), "--store", store, "--out", "outA", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    report = (tmp_path / "outA" / "report.md").read_text(encoding="utf-8")
    assert "javascript:alert(1)" in report and "evil.example/pixel.png" in report  # shown, as text
    assert report.count("### By meta_info") == 1
    assert_inert(report)

    second = clineval("run", str(write_run(tmp_path, "B")), "--store", store, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    done = clineval(
        "compare",
        run_id(first.stderr),
        run_id(second.stderr),
        "--store",
        store,
        "--out",
        "cmp.md",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    comparison = (tmp_path / "cmp.md").read_text(encoding="utf-8")
    assert "javascript:alert(1)" in comparison  # the changed cases' metadata, shown as text
    assert_inert(comparison)
