"""The ConText lexicon of ``clineval.text.assertion``: trigger phrases with their category and direction,
and the word lists of the subtype and reference rules. Data only; the rules that read it are in
``assertion``'s docstring.
"""

from __future__ import annotations

FORWARD, BACKWARD, BOTH = "forward", "backward", "bidirectional"
NEGATED, POSSIBLE, TERMINATE = "negated", "possible", "terminate"
COMPARATIVE, CONDITIONAL, REFERENCE = "comparative", "conditional", "reference"
BLOCKING = frozenset({POSSIBLE, COMPARATIVE, CONDITIONAL})  # any of these in scope: not ruled out
WILDCARD_MAX = 3  # words a "*" in a trigger stands for, at most
SCOPE = 8  # tokens a trigger reaches, at most (and never past the sentence or a termination term)

RULES: tuple[tuple[str, str, str], ...] = (
    # negated existence (ConText lexicon subset)
    *(
        (p, NEGATED, FORWARD)
        for p in (
            "no",
            "not",
            "denies",
            "denied",
            "denying",
            "no evidence of",
            "no signs of",
            "no sign of",
            "without",
            "without evidence of",
            "negative for",
            "absence of",
            "free of",
            "rules out",
            "ruled out",
            "rule out of",
            "excludes",
            "excluding",
            "argues against",
            "arguing against",
            "against",
            "inconsistent with",
            "not consistent with",
            "not suggestive of",
            "unlikely to be",
            "less likely to be",
            "not favor",
        )
    ),
    *(
        (p, NEGATED, BACKWARD)
        for p in (
            "ruled out",
            "was ruled out",
            "is ruled out",
            "has been ruled out",
            "have been ruled out",
            "can be ruled out",
            "effectively ruled out",
            "excluded",
            "was excluded",
            "is excluded",
            "has been excluded",
            "can be excluded",
            "unlikely given",
            "unlikely",
            "less likely",
            "less likely given",
            "much less likely",
            "very unlikely",
            "not likely",
            "improbable",
            "not supported",
            "is not supported",
            "deprioritized",
            "not favored",
            "disfavored",
            "is less probable",
            "less probable",
            "not present",
            "was negative",
            "is negative",
        )
    ),
    *((p, NEGATED, BOTH) for p in ("less likely", "unlikely")),
    # possible / hypothetical existence: pseudo-negations that must not count as ruled out
    *(
        (p, POSSIBLE, BOTH)
        for p in (
            "rule out",
            "to rule out",
            "need to rule out",
            "must rule out",
            "should rule out",
            "r o",
            "be ruled out",
            "must be ruled out",
            "should be ruled out",
            "needs to be ruled out",
            "to be ruled out",
            "being ruled out",
            "cannot be ruled out",
            "can not be ruled out",
            "can t be ruled out",
            "not ruled out",
            "not been ruled out",
            "not yet ruled out",
            "cannot rule out",
            "can not rule out",
            "not be ruled out",
            "cannot be excluded",
            "can not be excluded",
            "not excluded",
            "not been excluded",
            "to exclude",
            "must exclude",
            "not unlikely",
            "not only",
            "no increase",
            "not necessarily",
            "cannot be missed",
            "can not be missed",
            "not be missed",
            "not to miss",
            "can t miss",
            "not rule out",
        )
    ),
    *(
        (p, TERMINATE, BOTH)
        for p in (
            "but",
            "however",
            "although",
            "though",
            "yet",
            "still",
            "except",
            "aside from",
            "apart from",
            "whereas",
            "while",
            "which",
            "because",
            "nevertheless",
            "instead",
            "then",
        )
    ),
    # comparatives rank, they do not exclude: neither side of "X is less likely than Y" is ruled out
    *(
        (p, COMPARATIVE, BOTH)
        for p in (
            "not as * as",
            "less * than",
            "more * than",
            "not as likely as",
            "less likely than",
            "more likely than",
            "more urgent than",
            "as likely as",
            "as probable as",
            "less likely compared to",
            "less likely compared with",
        )
    ),
    # conditionals / hypotheticals: what follows is supposed, not asserted
    *(
        (p, CONDITIONAL, FORWARD)
        for p in (
            "if",
            "even if",
            "only if",
            "should",
            "unless",
            "in case",
            "whether",
            "provided",
            "assuming",
            "suppose",
            "would argue against",
            "would rule out",
            "would exclude",
            "would make",
            "could argue against",
            "might argue against",
            "would be less likely",
            "would be unlikely",
        )
    ),
    # plural demonstratives that refer back to diagnoses named just before
    *(
        (p, REFERENCE, BOTH)
        for p in (
            "these",
            "those",
            "both",
            "the above",
            "all of these",
            "all of the above",
            "all of them",
            "all three",
            "either of these",
            "neither of these",
            "the former two",
        )
    ),
)

# A word right before a target that makes the negated mention a subtype of it: "no evidence of secondary
# dysmenorrhea" does not rule out dysmenorrhea.
SUBTYPE_QUALIFIERS = frozenset(
    {
        "secondary", "primary", "chronic", "acute", "subacute", "recurrent", "atypical", "complicated",
        "uncomplicated", "congenital", "acquired", "bacterial", "viral", "fungal", "idiopathic",
        "hereditary", "familial", "early", "late", "mild", "severe", "massive", "focal", "diffuse",
        "central", "peripheral", "malignant", "benign", "infectious", "autoimmune", "drug", "induced",
        "postinfectious", "traumatic", "nontraumatic", "spontaneous", "tension", "hemorrhagic", "ischemic",
    }
)  # fmt: skip
# A demonstrative followed by one of these refers to something other than diagnoses.
REFERENCE_NOT_DIAGNOSES = frozenset(
    {
        "symptoms", "symptom", "findings", "signs", "results", "tests", "test", "features", "labs", "values",
        "patients", "factors", "medications", "drugs", "studies", "images", "levels", "changes", "episodes",
        "complaints", "agents", "questions", "points", "steps", "measures", "treatments", "options",
    }
)  # fmt: skip

# Actions (TM-SM, clineval.ddx.treatment): is an agent named in a symptom-management turn given, or
# withheld, avoided, contraindicated or only considered? Same machinery as the diagnosis triggers above, with
# the termination terms of ConText; "consider X", "potential X", "if ..., give X", "X if needed" are hedges
# (an order under a condition is not a given treatment).
ACTION_RULES: tuple[tuple[str, str, str], ...] = (
    *(
        (p, NEGATED, FORWARD)
        for p in (
            "no", "not", "do not", "do not give", "never", "without", "avoid", "avoiding", "hold", "holding",
            "withhold", "withholding", "stop", "stopping", "discontinue", "discontinuing", "cease", "defer",
            "deferring", "refrain from", "contraindication to", "contraindicated", "against", "instead of",
            "rather than", "not to give", "do not start", "do not use",
            # a cause or the history, not an order: "TMA associated with the use of clopidogrel"
            "associated with", "induced by", "caused by", "due to", "secondary to", "side effect of",
            "side effects of", "history of", "started on", "reaction to", "allergic to", "exposure to",
            "overdose of", "toxicity from", "related to", "is on", "are on", "was on", "currently on",
            "already on", "has been on",
        )
    ),
    *(
        (p, NEGATED, BACKWARD)
        for p in (
            "contraindicated", "is contraindicated", "are contraindicated", "should be avoided", "be avoided",
            "avoided", "withheld", "held", "not indicated", "is not indicated", "not recommended",
            "not needed", "not required", "not necessary", "stopped", "discontinued", "not given",
            "was not given", "should not be given", "not be given", "unnecessary", "not warranted",
            "not helpful",
        )
    ),
    *(
        (p, POSSIBLE, FORWARD)
        for p in (
            "consider", "considering", "potential", "potentially", "possible", "possibly", "may", "might",
            "could", "whether", "should the", "prepare for", "anticipate", "need for", "evaluate for",
            "evaluation for", "assess for", "assessment for", "candidate for", "eligibility for",
            "eligible for",
        )
    ),
    *((p, POSSIBLE, BOTH) for p in ("if", "unless", "in case")),
    *(
        (p, POSSIBLE, BACKWARD)
        for p in (
            "if needed", "if necessary", "if required", "if indicated", "may be considered",
            "can be considered", "could be considered", "be considered", "considered",
        )
    ),
    *((p, cat, d) for p, cat, d in RULES if cat == TERMINATE),
)  # fmt: skip
