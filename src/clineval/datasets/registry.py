"""DATASETS: dataset ``format`` name -> loader ``(options, base_dir) -> LoadedDataset``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clineval.core import LoadedDataset, Registry
from clineval.datasets.ddxplus import load_ddxplus
from clineval.datasets.generic import load_csv, load_jsonl
from clineval.datasets.golden_set import load_golden_set
from clineval.datasets.healthbench import load_healthbench
from clineval.datasets.medmcqa import load_medmcqa
from clineval.datasets.medqa import load_medqa
from clineval.datasets.open_xddx import load_open_xddx
from clineval.datasets.production import load_production_log
from clineval.datasets.pubmedqa import load_pubmedqa
from clineval.datasets.trec import load_retrieval_judgments, load_trec_qrels

DatasetFactory = Callable[[Mapping[str, Any], Path], LoadedDataset]

DATASETS: Registry[DatasetFactory] = Registry("dataset format")
DATASETS.add("medqa", load_medqa)
DATASETS.add("medmcqa", load_medmcqa)
DATASETS.add("pubmedqa", load_pubmedqa)
DATASETS.add("jsonl", load_jsonl)
DATASETS.add("csv", load_csv)
DATASETS.add("open_xddx", load_open_xddx)
DATASETS.add("ddxplus", load_ddxplus)
DATASETS.add("trec_qrels", load_trec_qrels)
DATASETS.add("retrieval_judgments", load_retrieval_judgments)
DATASETS.add("healthbench", load_healthbench)
DATASETS.add("golden_set", load_golden_set)
DATASETS.add("production_log", load_production_log)
