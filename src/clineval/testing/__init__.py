"""Test helpers: a scripted OpenAI-compatible server on loopback (in-process or as a subprocess), what two
runs of the same cases must agree on (``case_records``), and the metric robustness audit of your own
scorers (``audit_scorers``, ``assert_not_inflated``: docs/runs/audit.md).

``running_server`` lives in ``clineval.testing.openai_server``, which is not imported here so that
``python -m clineval.testing.openai_server`` runs cleanly.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.testing.audit import assert_not_inflated, audit_scorers
    from clineval.testing.process import ServerProcess, running_server_process, start_server_process
    from clineval.testing.runs import case_records
    from clineval.testing.script import Reply, Rule, Script, prompt_hash

__all__ = [
    "Reply",
    "Rule",
    "Script",
    "ServerProcess",
    "assert_not_inflated",
    "audit_scorers",
    "case_records",
    "prompt_hash",
    "running_server_process",
    "start_server_process",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.testing.audit": ("assert_not_inflated", "audit_scorers"),
        "clineval.testing.process": ("ServerProcess", "running_server_process", "start_server_process"),
        "clineval.testing.runs": ("case_records",),
        "clineval.testing.script": ("Reply", "Rule", "Script", "prompt_hash"),
    },
)
