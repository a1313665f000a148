"""inspect_ai, both ways (extra ``clineval[inspect]``).

- import: :func:`import_logs` (``clineval import inspect LOG...``) reads inspect eval logs (``.eval`` or
  ``.json``) and stores them as one clineval run, scored by clineval's scorers (``importer``);
- export: :func:`clineval_scorer` returns an inspect ``Scorer`` that runs a clineval scorer on a ``TaskState``
  (``scorer``).

inspect_ai itself is imported inside the functions that need it.
"""

from clineval.integrations.inspect.convert import MISSING_EXTRA, require_inspect
from clineval.integrations.inspect.importer import ImportRequest, import_logs
from clineval.integrations.inspect.scorer import clineval_scorer, score_state

__all__ = [
    "MISSING_EXTRA",
    "ImportRequest",
    "clineval_scorer",
    "import_logs",
    "require_inspect",
    "score_state",
]
