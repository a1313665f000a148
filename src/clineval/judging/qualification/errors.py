"""The errors of judge qualification: input a user can fix, so ``UserInputError``s (the CLI prints the one
line and exits 2). They are also ``ValueError``s, as the library raised them before the CLI existed."""

from __future__ import annotations

from clineval.core.errors import UserInputError


class QualificationInputError(UserInputError, ValueError):
    """Input that cannot be qualified on (bad labels, labels without variance): the CLI's exit 2."""


class KappaUndefinedError(QualificationInputError):
    """κ cannot be computed: chance agreement is total (p_e = 1) or the reference has one category only."""


class LabelsError(QualificationInputError):
    """A labels file that cannot be read: one line, ``FILE:LINE: problem``."""
