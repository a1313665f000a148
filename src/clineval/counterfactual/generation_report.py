"""Markdown rendering of a ``make.GenerationReport`` (rendering only: every number comes from the report)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

from clineval.counterfactual.exclusions import rule_by_id
from clineval.counterfactual.make import GenerationReport

_TOKEN = re.compile(r"\S+|\s+")


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def word_diff(before: str, after: str, context: int = 5) -> str:
    """The changed words of ``after`` against ``before`` as ``... context [old -> new] ...`` snippets."""
    a, b = _TOKEN.findall(before), _TOKEN.findall(after)
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        left = "".join(a[max(0, i1 - context) : i1]).lstrip()
        old, new = "".join(a[i1:i2]).strip(), "".join(b[j1:j2]).strip()
        parts.append(f"…{left}[{old or '∅'} → {new or '∅'}]")
    return " ".join(parts) or "(no change)"


def _rule_row(rule_id: str, first: int, any_count: int) -> str:
    try:
        rule = rule_by_id(rule_id)
    except KeyError:
        return f"| `{rule_id}` | ? | {first} | {any_count} | | |"
    return (
        f"| `{rule.key}` | {rule.kind} | {first} | {any_count} | {_cell(rule.reason)} | "
        f"{_cell(rule.source)} |"
    )


def render_markdown(
    report: GenerationReport, *, title: str, source: Mapping[str, str] | None = None, max_examples: int = 2
) -> str:
    """The generation report as Markdown: summary, skips per rule, not-applicable reasons, examples, rules."""
    data = report.to_dict()
    lines = [f"# {title}", ""]
    for key, value in (source or {}).items():
        lines.append(f"- {key}: {value}")
    lines += [
        f"- records read: {report.n_records}; records with at least one swapped attribute: "
        f"{report.n_groups}; output records (references + variants): {report.n_variants}",
        "",
    ]
    lines += [
        "## Summary",
        "",
        "| attribute | swapped | skipped (exclusion rules) | not applicable | "
        "variants written | swapped with a review warning |",
        "| --- | ---: | ---: | ---: | --- | ---: |",
    ]
    for name, row in data["attributes"].items():
        variants = ", ".join(f"{v} ({c} unchanged)" if c else v for v, c in row["unchanged_variants"].items())
        lines.append(
            f"| {name} | {row['swapped']} | {row['skipped']} | {row['not_applicable']} | "
            f"{variants or '-'} | {row['with_warnings']} |"
        )
    lines += [
        "",
        "Each record counts once per attribute: swapped + skipped + not applicable = records read. "
        "A skip is counted under the first matching rule (medical rules before coherence rules, in "
        "data order); *any match* counts every rule that matched.",
        "",
    ]
    for name, counts in report.attributes.items():
        row = data["attributes"][name]
        lines += [
            f"## {name}",
            "",
            "Stated value among swapped vignettes: "
            + (", ".join(f"{k} {v}" for k, v in row["stated"].items()) or "-"),
            "",
        ]
        if row["skipped_by_rule"] or row["matched_by_rule"]:
            lines += [
                "### Skipped, by rule",
                "",
                "| rule | kind | skipped (first rule) | any match | reason | source |",
                "| --- | --- | ---: | ---: | --- | --- |",
            ]
            for rule_id, any_count in row["matched_by_rule"].items():
                lines.append(_rule_row(rule_id, row["skipped_by_rule"].get(rule_id, 0), any_count))
            lines.append("")
        lines += ["### Not applicable, by reason", "", "| reason | vignettes |", "| --- | ---: |"]
        lines += [f"| {_cell(k)} | {v} |" for k, v in row["not_applicable_by_reason"].items()] or [
            "| - | 0 |"
        ]
        lines += ["", "### Examples", ""]
        for key, examples in counts.examples.items():
            for ex in examples[:max_examples]:
                lines.append(
                    f"- **{_cell(key)}**, question {ex['group']}"
                    + (f" (stated: {ex['stated']})" if ex["stated"] else "")
                    + ":"
                )
                if ex["texts"]:
                    for variant, text in ex["texts"].items():
                        lines.append(f"  - `{variant}`: {_cell(word_diff(ex['vignette'], text))}")
                elif ex["skipped_by"]:
                    matched = "; ".join(
                        f"`{r}`" + (f' "{e}"' if e else "")
                        for r, e in zip(ex["skipped_by"], ex["evidence"], strict=False)
                    )
                    lines.append(
                        f"  - matched: {_cell(matched)}; vignette starts: {_cell(ex['vignette'][:160])}…"
                    )
                else:
                    lines.append(f"  - vignette starts: {_cell(ex['vignette'][:160])}…")
        lines.append("")
    lines += ["## Rules (provenance)", "", "| rule | sha256 |", "| --- | --- |"]
    lines += [f"| `{k}` | `{v}` |" for k, v in sorted(report.rules.items())]
    return "\n".join(lines) + "\n"
