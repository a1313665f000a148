"""Scheduled evaluation pipelines (``clineval pipeline nightly|weekly CONFIG``), callable from any scheduler
(cron, CI, the Airflow DAG in ``integrations/airflow``)."""

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
