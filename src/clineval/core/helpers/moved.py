"""Old import paths of the modules that moved when the package was regrouped by clinical domain (issue 24).

Every old path keeps working for one release: importing it warns with a ``DeprecationWarning`` that names the
new path, and gives a module whose every attribute is the new module's (the same objects). A name that a
package used to re-export from a moved module (``from clineval.text import extract_choice``) warns the same
way, through the package's lazy exports (:func:`clineval.core.helpers.lazy.lazy_exports`).

One table instead of a stub file per old path: stubs would refill the old folders (``scoring/`` would keep 40
modules) and every one of them would import a domain from below it. :func:`install` (called by
``clineval/__init__``) appends the finder to ``sys.meta_path``, so it is asked only about names the normal
import system did not find; a moved *package* (``clineval.cds.guard``) gets an empty ``__path__``, so each of
its old submodules is resolved here too, never loaded a second time from its new folder.
"""

from __future__ import annotations

import importlib
import sys
import types
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec

REMOVED_IN = "the next release"
_TARGET = "__clineval_moved_to__"  # where an alias module keeps the module it stands for

# The table is written by the moves' script (one entry per module that moved); edit by hand only to add one.
# BEGIN TABLE
MOVED_MODULES: dict[str, str] = {
    "clineval.analysis.heldout": "clineval.releases.heldout",
    "clineval.api": "clineval.runs.run",
    "clineval.cli.adjudication_commands": "clineval.cli.commands.adjudication_commands",
    "clineval.cli.audit_commands": "clineval.cli.commands.audit_commands",
    "clineval.cli.eval_commands": "clineval.cli.commands.eval_commands",
    "clineval.cli.import_commands": "clineval.cli.commands.import_commands",
    "clineval.cli.pipeline_commands": "clineval.cli.commands.pipeline_commands",
    "clineval.cli.release_commands": "clineval.cli.commands.release_commands",
    "clineval.cli.shard_commands": "clineval.cli.commands.shard_commands",
    "clineval.cli.store_commands": "clineval.cli.commands.store_commands",
    "clineval.cli.view_commands": "clineval.cli.commands.view_commands",
    "clineval.combine": "clineval.metrics.combine",
    "clineval.core.clinical_thresholds": "clineval.cds.clinical_thresholds",
    "clineval.core.columns": "clineval.core.helpers.columns",
    "clineval.core.id_index": "clineval.core.helpers.id_index",
    "clineval.core.lab_samples": "clineval.cds.lab_samples",
    "clineval.core.lazy": "clineval.core.helpers.lazy",
    "clineval.core.lines": "clineval.core.helpers.lines",
    "clineval.core.redaction": "clineval.core.helpers.redaction",
    "clineval.core.safe_yaml": "clineval.core.helpers.safe_yaml",
    "clineval.core.urls": "clineval.core.helpers.urls",
    "clineval.datasets.ddxplus": "clineval.ddx.ddxplus",
    "clineval.datasets.golden_set": "clineval.cds.golden.dataset",
    "clineval.datasets.healthbench": "clineval.judging.healthbench",
    "clineval.datasets.open_xddx": "clineval.ddx.open_xddx",
    "clineval.datasets.trec": "clineval.cds.retrieval.trec",
    "clineval.feedback": "clineval.releases.feedback",
    "clineval.guard": "clineval.cds.guard",
    "clineval.guard.checks": "clineval.cds.guard.checks",
    "clineval.guard.config": "clineval.cds.guard.config",
    "clineval.guard.red_flag_conditions": "clineval.cds.guard.red_flag_conditions",
    "clineval.guard.red_flags": "clineval.cds.guard.red_flags",
    "clineval.guard.scope": "clineval.cds.guard.scope",
    "clineval.guard.terms": "clineval.cds.guard.terms",
    "clineval.interrupts": "clineval.runs.interrupts",
    "clineval.metrics.ddx": "clineval.metrics.macro",
    "clineval.metrics.retrieval": "clineval.cds.retrieval.measures",
    "clineval.promotion": "clineval.releases.promotion",
    "clineval.provenance": "clineval.runs.provenance",
    "clineval.report.banners": "clineval.report.sections.banners",
    "clineval.report.case_inputs": "clineval.report.sections.case_inputs",
    "clineval.report.cases": "clineval.report.sections.cases",
    "clineval.report.charts": "clineval.report.sections.charts",
    "clineval.report.combined_view": "clineval.report.sections.combined_view",
    "clineval.report.comparison_chart": "clineval.report.sections.comparison_chart",
    "clineval.report.console": "clineval.report.formats.console",
    "clineval.report.gate_section": "clineval.report.sections.gate_section",
    "clineval.report.html": "clineval.report.formats.html",
    "clineval.report.json_report": "clineval.report.formats.json_report",
    "clineval.report.markdown": "clineval.report.formats.markdown",
    "clineval.report.model_comparison": "clineval.report.sections.model_comparison",
    "clineval.report.results_jsonl": "clineval.report.formats.results_jsonl",
    "clineval.report.run_cases": "clineval.report.sections.run_cases",
    "clineval.report.systems": "clineval.core.system_identity",
    "clineval.report.tiers": "clineval.report.sections.tiers",
    "clineval.report.usage_lines": "clineval.report.sections.usage_lines",
    "clineval.report.view": "clineval.report.sections.view",
    "clineval.scoring.assertion": "clineval.text.assertion",
    "clineval.scoring.assertion_lexicon": "clineval.text.assertion_lexicon",
    "clineval.scoring.cds_options": "clineval.mcq.cds_options",
    "clineval.scoring.cds_report": "clineval.mcq.cds_report",
    "clineval.scoring.citation_relevance": "clineval.cds.retrieval.citation_relevance",
    "clineval.scoring.clinical_accuracy": "clineval.quality.clinical_accuracy",
    "clineval.scoring.consensus": "clineval.ddx.process.consensus",
    "clineval.scoring.contraindication_specificity": "clineval.cds.guard.contraindication_specificity",
    "clineval.scoring.credibility": "clineval.ddx.process.credibility",
    "clineval.scoring.ddx": "clineval.ddx.scorer",
    "clineval.scoring.ddx_classes": "clineval.ddx.classes",
    "clineval.scoring.ddx_classify": "clineval.ddx.classify",
    "clineval.scoring.ddx_formulas": "clineval.ddx.formulas",
    "clineval.scoring.ddx_support": "clineval.ddx.support",
    "clineval.scoring.ddx_treatment": "clineval.ddx.treatment",
    "clineval.scoring.ddx_vitals": "clineval.ddx.vitals",
    "clineval.scoring.escalation_balance": "clineval.cds.guard.escalation_balance",
    "clineval.scoring.golden_evidence": "clineval.cds.golden.evidence",
    "clineval.scoring.golden_labels": "clineval.cds.golden.labels",
    "clineval.scoring.golden_problems": "clineval.cds.golden.problems",
    "clineval.scoring.golden_severity": "clineval.cds.golden.severity",
    "clineval.scoring.guidelines": "clineval.cds.rules.guidelines",
    "clineval.scoring.injection": "clineval.judging.injection",
    "clineval.scoring.judge_dimensions": "clineval.judging.dimensions",
    "clineval.scoring.mcq": "clineval.mcq.scorer",
    "clineval.scoring.mcq_selection": "clineval.mcq.selection",
    "clineval.scoring.process": "clineval.ddx.process.scorer",
    "clineval.scoring.process_text": "clineval.ddx.process.transcript",
    "clineval.scoring.reasoning": "clineval.quality.reasoning",
    "clineval.scoring.reasoning_parts": "clineval.quality.reasoning_parts",
    "clineval.scoring.retrieval": "clineval.cds.retrieval.scorer",
    "clineval.scoring.rubric": "clineval.judging.rubric",
    "clineval.scoring.rule_actions": "clineval.cds.rules.actions",
    "clineval.scoring.rule_catalogue": "clineval.cds.rules.catalogue",
    "clineval.scoring.rule_engine": "clineval.cds.rules.engine",
    "clineval.scoring.rule_model": "clineval.cds.rules.model",
    "clineval.scoring.rule_negation": "clineval.cds.rules.negation",
    "clineval.scoring.rule_patient": "clineval.cds.rules.patient",
    "clineval.scoring.rule_reference": "clineval.cds.rules.reference",
    "clineval.scoring.rule_specificity": "clineval.cds.rules.specificity",
    "clineval.scoring.structural": "clineval.cds.guard.structural",
    "clineval.sharded": "clineval.runs.shards",
    "clineval.stored_runs": "clineval.runs.stored",
    "clineval.systems.ddxplus_differential": "clineval.ddx.ddxplus_differential",
    "clineval.systems.lddx": "clineval.ddx.lddx",
    "clineval.systems.lddx_records": "clineval.ddx.lddx_records",
    "clineval.systems.trec_run": "clineval.cds.retrieval.trec_run",
    "clineval.text.acronyms": "clineval.text.names.acronyms",
    "clineval.text.answer_conclusion": "clineval.mcq.answer_conclusion",
    "clineval.text.answer_extraction": "clineval.mcq.answer_extraction",
    "clineval.text.answer_options": "clineval.mcq.answer_options",
    "clineval.text.answer_patterns": "clineval.mcq.answer_patterns",
    "clineval.text.compositional": "clineval.text.names.compositional",
    "clineval.text.diagnosis_vocab": "clineval.text.names.diagnosis_vocab",
    "clineval.text.equivalence": "clineval.text.names.equivalence",
    "clineval.text.name_features": "clineval.text.names.features",
    "clineval.text.name_normalisation": "clineval.text.names.normalisation",
    "clineval.text.name_resolution": "clineval.text.names.resolution",
    "clineval.text.ontology_match": "clineval.text.names.ontology_match",
    "clineval.text.question_rules": "clineval.mcq.question_rules",
    "clineval.text.question_types": "clineval.mcq.question_types",
    "clineval.text.terminology": "clineval.text.names.terminology",
    "clineval.view.adjudication": "clineval.view.review.adjudication",
    "clineval.view.agreement": "clineval.view.review.agreement",
    "clineval.view.render": "clineval.view.renderers.runs",
    "clineval.view.render_board": "clineval.view.renderers.board",
    "clineval.view.render_case": "clineval.view.renderers.case",
    "clineval.view.render_tiers": "clineval.view.renderers.tiers",
    "clineval.view.render_trends": "clineval.view.renderers.trends",
    "clineval.view.review_items": "clineval.view.review.items",
    "clineval.view.review_queue": "clineval.view.review.queue",
    "clineval.view.review_routes": "clineval.view.review.routes",
}
MOVED_NAMES: dict[str, dict[str, str]] = {
    "clineval.scoring": {
        "MCQOptions": "clineval.mcq.scorer",
        "MCQScorer": "clineval.mcq.scorer",
        "make_mcq_scorer": "clineval.mcq.scorer",
    },
    "clineval.text": {
        "Classification": "clineval.mcq.question_types",
        "Extraction": "clineval.mcq.answer_extraction",
        "QUESTION_TYPES": "clineval.mcq.question_rules",
        "QUESTION_TYPE_RULES_SHA256": "clineval.mcq.question_rules",
        "QUESTION_TYPE_RULES_VERSION": "clineval.mcq.question_rules",
        "RuleSet": "clineval.mcq.question_rules",
        "classify_question": "clineval.mcq.question_types",
        "extract_choice": "clineval.mcq.answer_extraction",
        "load_rules": "clineval.mcq.question_rules",
        "rules_sha256": "clineval.mcq.question_rules",
    },
}
# END TABLE


def message(old: str, new: str) -> str:
    return f"{old} is deprecated: import {new} instead (the old path is removed in {REMOVED_IN})"


class _Alias(types.ModuleType):
    """An old module path: every attribute is read from the module that replaced it."""

    def __getattr__(self, name: str) -> object:
        target = self.__dict__.get(_TARGET)
        if target is None:  # still being set up by the import system
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        return getattr(target, name)

    def __dir__(self) -> list[str]:
        return dir(self.__dict__.get(_TARGET))


class _Finder:
    """A meta path finder and loader for the old paths in :data:`MOVED_MODULES`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in MOVED_MODULES:
            return None
        is_package = any(old.startswith(fullname + ".") for old in MOVED_MODULES)
        return ModuleSpec(fullname, self, is_package=is_package)  # type: ignore[arg-type]

    def create_module(self, spec: ModuleSpec) -> types.ModuleType:
        return _Alias(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        new = MOVED_MODULES[module.__name__]
        warnings.warn(message(module.__name__, new), DeprecationWarning, stacklevel=2)
        target = importlib.import_module(new)
        module.__dict__[_TARGET] = target
        module.__dict__["__doc__"] = target.__doc__
        if module.__spec__ is not None and module.__spec__.submodule_search_locations is not None:
            module.__dict__["__path__"] = []  # its old submodules are aliases too (above), never reloaded


_FINDER = _Finder()


def install() -> None:
    """Resolve the old paths (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)  # type: ignore[arg-type]


def moved_name(package: str, name: str) -> object:
    """``package.name`` where ``package`` used to re-export ``name`` from a module that moved; AttributeError
    (as from any module) when it did not."""
    new = MOVED_NAMES.get(package, {}).get(name)
    if new is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    warnings.warn(message(f"{package}.{name}", f"{new}.{name}"), DeprecationWarning, stacklevel=3)
    return getattr(importlib.import_module(new), name)
