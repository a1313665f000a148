"""clineval.text: normalisation and answer extraction (pure functions over strings).

Names are imported lazily (``clineval.core.helpers.lazy``): ``from clineval.text import normalize_text`` does
not load the fuzzy matcher, the stemmer, the question rules or the diagnosis vocabulary.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.text.abbreviations import (
        ABBREVIATIONS_SHA256,
        ABBREVIATIONS_VERSION,
        abbreviations_sha256,
        expand_abbreviations,
        load_abbreviations,
    )
    from clineval.text.matching import (
        MatchResult,
        PreparedText,
        explain_match,
        fuzzy_match,
        match_score,
        normalize_for_match,
        prepare,
    )
    from clineval.text.names.diagnosis_vocab import (
        DiagnosisVocabulary,
        diagnosis_vocab_sha256,
        load_vocabulary,
        name_forms,
    )
    from clineval.text.names.equivalence import Equivalence, best_match, equivalent, synonyms_of
    from clineval.text.names.terminology import Terminology, load_terminology
    from clineval.text.normalize import contains_phrase, normalize_text
    from clineval.text.stemming import stem
    from clineval.text.stems import QuestionParts, split_question
    from clineval.text.stopwords import STOP_WORDS, content_tokens, is_stop_word

__all__ = [
    "ABBREVIATIONS_SHA256",
    "ABBREVIATIONS_VERSION",
    "STOP_WORDS",
    "DiagnosisVocabulary",
    "Equivalence",
    "MatchResult",
    "PreparedText",
    "QuestionParts",
    "Terminology",
    "abbreviations_sha256",
    "best_match",
    "contains_phrase",
    "content_tokens",
    "diagnosis_vocab_sha256",
    "equivalent",
    "expand_abbreviations",
    "explain_match",
    "fuzzy_match",
    "is_stop_word",
    "load_abbreviations",
    "load_terminology",
    "load_vocabulary",
    "match_score",
    "name_forms",
    "normalize_for_match",
    "normalize_text",
    "prepare",
    "split_question",
    "stem",
    "synonyms_of",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.text.abbreviations": (
            "ABBREVIATIONS_SHA256",
            "ABBREVIATIONS_VERSION",
            "abbreviations_sha256",
            "expand_abbreviations",
            "load_abbreviations",
        ),
        "clineval.text.names.diagnosis_vocab": (
            "DiagnosisVocabulary",
            "diagnosis_vocab_sha256",
            "load_vocabulary",
            "name_forms",
        ),
        "clineval.text.names.equivalence": ("Equivalence", "best_match", "equivalent", "synonyms_of"),
        "clineval.text.names.terminology": ("Terminology", "load_terminology"),
        "clineval.text.matching": (
            "MatchResult",
            "PreparedText",
            "explain_match",
            "fuzzy_match",
            "match_score",
            "normalize_for_match",
            "prepare",
        ),
        "clineval.text.normalize": ("contains_phrase", "normalize_text"),
        "clineval.text.stemming": ("stem",),
        "clineval.text.stems": ("QuestionParts", "split_question"),
        "clineval.text.stopwords": ("STOP_WORDS", "content_tokens", "is_stop_word"),
    },
)
