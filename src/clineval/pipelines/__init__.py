"""Scheduled evaluation pipelines (``clineval pipeline nightly|weekly CONFIG``), callable from any scheduler
(cron, CI, the Airflow DAG in ``integrations/airflow``).

Names are imported lazily on first use (``clineval.core.helpers.lazy``), so importing the package is cheap.
"""

from typing import TYPE_CHECKING

from clineval.core.helpers.lazy import lazy_exports

if TYPE_CHECKING:
    from clineval.pipelines.config import PipelineConfig, StepEntry, load_pipeline_config
    from clineval.pipelines.run import FloorCheck, PipelineResult, StepResult, run_pipeline

__all__ = [
    "FloorCheck",
    "PipelineConfig",
    "PipelineResult",
    "StepEntry",
    "StepResult",
    "load_pipeline_config",
    "run_pipeline",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "clineval.pipelines.config": ("PipelineConfig", "StepEntry", "load_pipeline_config"),
        "clineval.pipelines.run": ("FloorCheck", "PipelineResult", "StepResult", "run_pipeline"),
    },
)
