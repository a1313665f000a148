"""Diagnosis names: the terminology artefact, normalisation, acronyms and equivalence.

``equivalent(a, b)`` says whether two diagnosis names are the same disease, a subtype, or different, with an
explanation naming the source concept; it uses the Human Disease Ontology artefact (built by
``scripts/build_terminology.py``), curated synonyms, compositional names and acronyms. Shared by DDx, the CDS
golden set and quality, so it sits below the domains. Data: ``clineval/text/names/data/``.
Docs: ``docs/ddx/diagnosis_vocabulary.md``.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.text.names.diagnosis_vocab import DiagnosisVocabulary, load_vocabulary, name_forms
    from clineval.text.names.equivalence import Equivalence, best_match, equivalent, synonyms_of
    from clineval.text.names.terminology import Terminology, load_terminology

__all__ = [
    "DiagnosisVocabulary",
    "Equivalence",
    "Terminology",
    "best_match",
    "equivalent",
    "load_terminology",
    "load_vocabulary",
    "name_forms",
    "synonyms_of",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.text.names.equivalence": (
            "Equivalence",
            "best_match",
            "equivalent",
            "synonyms_of",
        ),
        "clineval.text.names.terminology": (
            "Terminology",
            "load_terminology",
        ),
        "clineval.text.names.diagnosis_vocab": (
            "DiagnosisVocabulary",
            "load_vocabulary",
            "name_forms",
        ),
    },
)
