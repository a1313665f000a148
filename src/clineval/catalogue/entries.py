"""The catalogue: packaged benchmark tasks as data (one registry entry per task, no if-chain).

Each entry says how to build one suite task: the dataset loader and its options (paths relative to a data
root: ``shared``, the public data folder, or ``repo``, files the repository ships), the ``openai`` system's
prompt, the scorers and stratification keys, plus what ``clineval tasks`` shows (size, metric, source,
licence, taken from the data folders' SOURCE.md files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from clineval.core.errors import UserInputError

Root = Literal["shared", "repo"]
MCQ_PROMPT = "mcq_cot_v1"  # the packaged prompt the example suites use (examples/medqa_openai_live.yaml)
DDX_PROMPT = "ddx_json_v1"  # catalogue prompts: src/clineval/catalogue/prompts/<name>.j2
CHAT_PROMPT = "chat_v1"
CDS_PROMPT = "cds_json_v1"
CATALOGUE_PROMPTS = (DDX_PROMPT, CHAT_PROMPT, CDS_PROMPT)


@dataclass(frozen=True)
class CatalogueEntry:
    name: str
    title: str
    dataset_format: str
    paths: dict[str, str]  # dataset option -> file, relative to the root
    root: Root
    size: str
    metric: str
    source: str
    licence: str
    scorers: list[Any] = field(default_factory=lambda: ["mcq"])
    stratify: list[str] = field(default_factory=list)
    dataset_options: dict[str, Any] = field(default_factory=dict)
    prompt: str = MCQ_PROMPT
    needs_grader: bool = False
    output: str = "text"  # the openai system's ``output``: "structured" reads a JSON reply (DDx, CDS)
    hf: dict[str, str] | None = None  # the public HF dataset: used when a local file is missing, or no paths
    unavailable: str | None = None  # why `clineval eval` cannot run it here (data not packaged)


MMLU_TEST_SIZES = {  # cais/mmlu test questions per medical subject
    "anatomy": 135,
    "clinical_knowledge": 265,
    "college_biology": 144,
    "college_medicine": 173,
    "medical_genetics": 100,
    "professional_medicine": 272,
}


def _mmlu(subject: str, title: str) -> CatalogueEntry:
    """No local file: the public ``cais/mmlu`` config of the subject (unpinned: the run records a warning)."""
    return CatalogueEntry(
        name=f"mmlu_{subject}",
        title=f"MMLU {title}, test",
        dataset_format="mmlu",
        paths={},
        hf={"hf": "cais/mmlu", "name": subject, "split": "test"},
        root="shared",
        size=str(MMLU_TEST_SIZES[subject]),
        metric="accuracy",
        source="Hendrycks et al. 2021 (cais/mmlu, Hugging Face)",
        licence="MIT",
    )


_ENTRIES = [
    CatalogueEntry(
        name="medqa",
        title="MedQA (USMLE, US, 4 options), test",
        dataset_format="medqa",
        paths={"path": "medqa_usmle_4opt/phrases_no_exclude_test.jsonl"},
        hf={"hf": "GBaker/MedQA-USMLE-4-options", "split": "test"},
        root="shared",
        size="1273",
        metric="accuracy",
        source="Jin et al. 2020 (jind11/MedQA via MIRAGE)",
        licence="MIT",
        stratify=["meta_info"],
    ),
    CatalogueEntry(
        name="medmcqa",
        title="MedMCQA, dev",
        dataset_format="medmcqa",
        paths={"path": "medmcqa_dev/dev.json"},
        hf={"hf": "openlifescienceai/medmcqa", "split": "validation"},
        root="shared",
        size="4183",
        metric="accuracy",
        source="Pal et al. 2022 (medmcqa/medmcqa via MIRAGE)",
        licence="MIT",
        stratify=["subject_name", "choice_type"],
    ),
    CatalogueEntry(
        name="pubmedqa",
        title="PubMedQA PQA-L test (500), with contexts",
        dataset_format="pubmedqa",
        paths={"path": "pubmedqa/ori_pqal.json", "ground_truth": "pubmedqa/test_ground_truth.json"},
        root="shared",
        size="500",
        metric="accuracy",
        source="Jin et al. 2019 (pubmedqa/pubmedqa)",
        licence="MIT",
        scorers=["mcq"],
    ),
    CatalogueEntry(
        name="pubmedqa_no_context",
        title="PubMedQA* PQA-L test (500), no contexts (MIRAGE)",
        dataset_format="pubmedqa",
        paths={"path": "pubmedqa/ori_pqal.json", "ground_truth": "pubmedqa/test_ground_truth.json"},
        root="shared",
        size="500",
        metric="accuracy",
        source="Jin et al. 2019; Xiong et al. 2024 (MIRAGE)",
        licence="MIT",
        dataset_options={"contexts": False},
    ),
    *[
        _mmlu(subject, title)
        for subject, title in (
            ("anatomy", "anatomy"),
            ("clinical_knowledge", "clinical knowledge"),
            ("college_biology", "college biology"),
            ("college_medicine", "college medicine"),
            ("medical_genetics", "medical genetics"),
            ("professional_medicine", "professional medicine"),
        )
    ],
    CatalogueEntry(
        name="healthbench",
        title="HealthBench (first 30 conversations), rubric graded",
        dataset_format="healthbench",
        paths={"path": "healthbench/healthbench_oss_eval_first30.jsonl"},
        root="shared",
        size="30",
        metric="rubric_score",
        source="OpenAI HealthBench 2025 (openai/simple-evals)",
        licence="MIT",
        scorers=["rubric"],
        stratify=["theme"],
        prompt=CHAT_PROMPT,
        needs_grader=True,
    ),
    CatalogueEntry(
        name="ddxplus",
        title="DDXPlus (1000 test patients), differential diagnosis",
        dataset_format="ddxplus",
        paths={
            "path": "ddxplus/test_patients_sample_first1000.csv",
            "evidences": "ddxplus/release_evidences.json",
            "conditions": "ddxplus/release_conditions.json",
        },
        root="shared",
        size="1000",
        metric="top1_accuracy",
        source="Fansi Tchango et al. 2022 (mila-iqia/ddxplus)",
        licence="CC-BY 4.0",
        scorers=["ddx"],
        stratify=["sex", "age_band"],
        prompt=DDX_PROMPT,
        output="structured",
    ),
    CatalogueEntry(
        name="open_xddx",
        title="Open-XDDx (570 vignettes), differential diagnosis",
        dataset_format="open_xddx",
        paths={"path": "open_xddx/open_xddx.jsonl"},
        root="shared",
        size="570",
        metric="recall",
        source="Zhou et al. 2025, npj Health Systems (betterzhou/Dual-Inf)",
        licence="public with the article (cite it)",
        scorers=["ddx"],
        stratify=["specialty"],
        prompt=DDX_PROMPT,
        output="structured",
    ),
    CatalogueEntry(
        name="golden_set",
        title="Four-tier golden set v2 (synthetic CDS cases), tiers 1-3",
        dataset_format="golden_set",
        paths={"path": "data/golden_set/golden_set_v2.jsonl"},
        root="repo",
        size="102",
        metric="guideline_adherence",
        source="clineval (scripts/generate_golden_set.py, synthetic)",
        licence="same as clineval",
        scorers=[
            "schema",
            "citation_grounding",
            "scope",
            "contraindications",
            "escalation",
            "guideline_citation",
            "guideline_adherence",
            # the golden-set labels the catalogue prompt (cds_json_v1) asks for: a severity. Not
            # problems_identified / evidence_types_cited: the prompt asks for no problem list and no
            # evidence table, so they would be 0 by construction (examples/four_tier_cds.yaml runs them)
            "severity_agreement",
        ],
        stratify=["condition", "split"],
        prompt=CDS_PROMPT,
        output="structured",
    ),
]

CATALOGUE: dict[str, CatalogueEntry] = {e.name: e for e in _ENTRIES}


def get_entries(names: str) -> list[CatalogueEntry]:
    """``medqa,ddxplus`` -> entries; an unknown name is one line listing the known ones."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise UserInputError("no task named", hint=f"known tasks: {', '.join(CATALOGUE)}")
    unknown = [n for n in wanted if n not in CATALOGUE]
    if unknown:
        raise UserInputError(f"unknown task {unknown[0]!r}", hint=f"known tasks: {', '.join(CATALOGUE)}")
    if len(set(wanted)) != len(wanted):
        raise UserInputError(f"a task is named twice in {names!r}")
    return [CATALOGUE[n] for n in wanted]
