"""Dataset loaders (edge layer): MedQA, MedMCQA, PubMedQA, Open-XDDx, DDXPlus, generic JSONL/CSV.

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.datasets.registry import DATASETS
    from clineval.datasets.sampling import sample_cases

__all__ = ["DATASETS", "sample_cases"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.datasets.registry": ("DATASETS",),
        "clineval.datasets.sampling": ("sample_cases",),
    },
)
