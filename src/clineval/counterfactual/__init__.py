"""clineval.counterfactual: does the answer change when only the patient's sex, race or income does?

Counterfactual fairness evaluation (issue 27; docs/runs/counterfactual.md), the protocol of the published
vignette-perturbation studies: AMQA (Xiao et al. 2025: MedQA vignettes rewritten as White / Black, male /
female, high / low income; McNemar on the paired answers), EquityMedQA's counterfactual pairs (Pfohl et al.
2024) and Q-Pain (Loge et al. 2021).

* ``make_variants`` (``make``): deterministic rule-based variants of MedQA / MedMCQA / JSONL vignettes
  (modules ``rewrite``, ``rewrite_sex``, ``rewrite_race``, ``rewrite_ses``), skipping any vignette an
  exclusion rule says the attribute changes the medicine of (``exclusions``), with a generation report
  (``generation_report``). The rule data, each rule versioned and hashed (``ruledata``), live in
  ``clineval/counterfactual/data/``: ``sex.yaml``, ``race.yaml``, ``ses.yaml``, ``exclusions_*.yaml`` and
  ``rules.lock.json``.
* ``counterfactual_analysis`` (``paired``): per pair a|b the 2x2 table, accuracies with Wilson intervals,
  the difference with Newcombe's paired interval (``stats``), exact McNemar and Holm p (from
  ``clineval.analysis.paired``), the flip rate; per variant the change against the reference; Wilcoxon
  signed-rank and a paired bootstrap for non-binary scores.
* ``CounterfactualOption`` / ``analyse_task`` (``task``): the suite's ``counterfactual:`` task option and a
  finished task's results -> ``report.json["counterfactual"][task]``.
* ``import_per_variant_answers`` (``importers``): published per-variant answer files (AMQA-shaped).

Names are imported lazily (``clineval.core.helpers.lazy``).
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.counterfactual.importers import import_per_variant_answers, read_answer_file
    from clineval.counterfactual.make import GenerationReport, make_variants, read_jsonl, write_jsonl
    from clineval.counterfactual.paired import Outcome, counterfactual_analysis, outcomes_from_records
    from clineval.counterfactual.rewrite import AttributeResult, rewrite_attribute
    from clineval.counterfactual.stats import newcombe_paired_ci
    from clineval.counterfactual.task import CounterfactualOption, analyse_task, outcomes_from_results

__all__ = [
    "AttributeResult",
    "CounterfactualOption",
    "GenerationReport",
    "Outcome",
    "analyse_task",
    "counterfactual_analysis",
    "import_per_variant_answers",
    "make_variants",
    "newcombe_paired_ci",
    "outcomes_from_records",
    "outcomes_from_results",
    "read_answer_file",
    "read_jsonl",
    "rewrite_attribute",
    "write_jsonl",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.counterfactual.importers": ("import_per_variant_answers", "read_answer_file"),
        "clineval.counterfactual.make": ("GenerationReport", "make_variants", "read_jsonl", "write_jsonl"),
        "clineval.counterfactual.paired": ("Outcome", "counterfactual_analysis", "outcomes_from_records"),
        "clineval.counterfactual.rewrite": ("AttributeResult", "rewrite_attribute"),
        "clineval.counterfactual.stats": ("newcombe_paired_ci",),
        "clineval.counterfactual.task": ("CounterfactualOption", "analyse_task", "outcomes_from_results"),
    },
)
