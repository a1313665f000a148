"""DATASETS: dataset ``format`` name -> loader ``(options, base_dir) -> LoadedDataset``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clineval.core import LoadedDataset, Registry

DatasetFactory = Callable[[Mapping[str, Any], Path], LoadedDataset]

# Factories are named, not imported: a suite imports only the modules of the components it uses.
DATASETS: Registry[DatasetFactory] = Registry("dataset format")
DATASETS.add_lazy("medqa", "clineval.datasets.medqa:load_medqa")
DATASETS.add_lazy("medmcqa", "clineval.datasets.medmcqa:load_medmcqa")
DATASETS.add_lazy("pubmedqa", "clineval.datasets.pubmedqa:load_pubmedqa")
DATASETS.add_lazy("mmlu", "clineval.datasets.mmlu:load_mmlu")
DATASETS.add_lazy("jsonl", "clineval.datasets.generic:load_jsonl")
DATASETS.add_lazy("csv", "clineval.datasets.generic:load_csv")
DATASETS.add_lazy("open_xddx", "clineval.ddx.open_xddx:load_open_xddx")
DATASETS.add_lazy("ddxplus", "clineval.ddx.ddxplus:load_ddxplus")
DATASETS.add_lazy("trec_qrels", "clineval.cds.retrieval.trec:load_trec_qrels")
DATASETS.add_lazy("retrieval_judgments", "clineval.cds.retrieval.trec:load_retrieval_judgments")
DATASETS.add_lazy("healthbench", "clineval.judging.healthbench:load_healthbench")
DATASETS.add_lazy("golden_set", "clineval.cds.golden.dataset:load_golden_set")
DATASETS.add_lazy("production_log", "clineval.datasets.production:load_production_log")
