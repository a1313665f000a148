"""Judge qualification (clineval issue 28): does an LLM judge (model + prompt + settings) agree with
clinicians well enough, and steadily enough, to report its grades?

Pure functions, no I/O but :func:`labels.read_labels`. Modules: ``kappa`` (Cohen's κ, weighted κ,
Fleiss-Cohen-Everitt SE), ``intervals`` (bootstrap over items, Wilson, t), ``agreement`` (judge vs
reference: κ with its interval, balanced F1, bias, undefined κ), ``reviewers`` (consensus of several
clinicians, their ceiling), ``stability`` (flip rate, within-item variance over K samples), ``order``
(seeded permutations, order sensitivity), ``verdict`` (thresholds and their justification), ``labels``
(the labels file), ``identity`` (the judge key a run is matched on), ``qualify`` (the entry point).
The part that asks the judge lives in ``clineval.runs.qualify`` (a domain never imports the runner).
"""

from clineval.judging.qualification.errors import KappaUndefinedError, LabelsError, QualificationInputError
from clineval.judging.qualification.labels import LabelSet, read_labels
from clineval.judging.qualification.qualify import as_dict, qualify
from clineval.judging.qualification.verdict import Qualification, Thresholds

__all__ = [
    "KappaUndefinedError",
    "LabelSet",
    "LabelsError",
    "Qualification",
    "QualificationInputError",
    "Thresholds",
    "as_dict",
    "qualify",
    "read_labels",
]
