"""Ancestors are not hits (issue 22): a system name more general than the ground truth is BROADER, never TP,
never in top-k or reciprocal rank; partial credit only in ``recall_broader``. A symptom never resolves to a
disease class. Expected values by hand."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clineval.core.output import DifferentialItem as D
from clineval.core.protocols import ScoringContext
from clineval.datasets import DATASETS
from clineval.ddx.scorer import DdxOptions, DdxScorer, classify_differential, ddx_scores
from clineval.systems.registry import SYSTEMS
from clineval.text.names.diagnosis_vocab import load_vocabulary
from clineval.text.names.equivalence import equivalent
from clineval.text.names.ontology_match import finding_exclusions
from clineval.text.names.resolution import resolve
from tests.helpers import shared_data

T2DM = "non-insulin dependent diabetes mellitus (Type 2 diabetes)"


def test_a_broader_name_is_no_hit_but_partial_credit() -> None:
    c = classify_differential([T2DM], [D(diagnosis="Diabetes mellitus"), D(diagnosis="Influenza")])
    broader = c.of("BROADER")[0]
    assert (broader.system, broader.ground_truth, broader.rank, broader.tier) == (
        "Diabetes mellitus",
        T2DM,
        1,
        "hierarchy",
    )
    assert broader.explanation.startswith("more general than the ground truth, no hit")
    fn = c.of("FN")[0]
    assert "named only by the broader 'Diabetes mellitus'" in fn.explanation
    s = ddx_scores(c, 0.5)
    assert s["recall"] == 0.0 and s["reciprocal_rank"] == 0.0 and s["top1"] is False and s["top5"] is False
    assert s["recall_broader"] == pytest.approx(1.0)  # (TP 0 + 1 ground truth named broadly) / 1
    assert s["precision"] == pytest.approx(0.0)  # 0 / (TP 0 + FP 1 + CAA 0 + BROADER 1)
    assert s["clinical_reasoning_quality"] == pytest.approx(0.0)  # 0 / (GT 1 + FP 1 + BROADER 1)
    assert c.considered == 3


def test_the_specific_name_later_in_the_list_is_the_hit() -> None:
    c = classify_differential(
        [T2DM], [D(diagnosis="Diabetes mellitus"), D(diagnosis="Type 2 diabetes mellitus")]
    )
    assert [d.cls for d in c.decisions] == ["TP", "BROADER"]
    s = ddx_scores(c)
    assert (s["top1"], s["top3"], s["reciprocal_rank"]) == (False, True, 0.5)
    assert s["recall"] == s["recall_broader"] == 1.0  # the found ground truth is no partial credit
    assert s["precision"] == pytest.approx(0.5)


def test_a_narrower_name_is_still_a_hit_and_an_excluded_broad_name_is_excluded() -> None:
    c = classify_differential(["hyperthyroidism"], [D(diagnosis="Thyroid storm")])
    assert c.decisions[0].cls == "TP" and c.decisions[0].tier == "hierarchy" and ddx_scores(c)["top1"] is True
    ex = classify_differential([T2DM], [D(diagnosis="Diabetes mellitus", status="excluded")])
    assert [d.cls for d in ex.decisions] == ["FN", "EXCLUDED"]


def test_equivalence_says_which_name_is_broader() -> None:
    broad = equivalent("Diabetes mellitus", "type 2 diabetes mellitus")
    assert broad.tier == "hierarchy" and broad.broader == "a" and broad.flipped().broader == "b"
    assert equivalent("type 2 diabetes mellitus", "Diabetes mellitus").broader == "b"
    assert equivalent("Pneumonia", "community-acquired pneumonia").broader == "a"  # by name
    assert (
        equivalent("acute kidney injury", "AKI secondary to drug-induced interstitial nephritis").broader
        == "a"
    )
    assert (
        equivalent("Rh or ABO incompatibility", "ABO incompatibility").broader is None
    )  # names it as an option
    assert equivalent("myocardial infarction", "heart attack").broader is None


def test_a_symptom_never_resolves_to_a_disease_class() -> None:
    vocab = load_vocabulary()
    # NCIt (issue 25) holds bronchospasm as a finding of its own (NCIT:C34439 "Bronchospasm"): the name may
    # resolve to that concept, never to a disease class such as the Disease Ontology's "bronchial disease"
    concepts = resolve("Bronchospasm", vocab).concepts
    assert concepts.exact <= {"NCIT:C34439"} and "DOID:1176" not in concepts.exact | concepts.narrower_of
    assert not equivalent("Bronchospasm / acute asthma exacerbation", "Bronchiectasis").equivalent
    assert not equivalent("Bronchospasm", "bronchial disease").equivalent
    assert equivalent("Bronchospasm / acute asthma exacerbation", "asthma").tier == "exact"  # its other name
    excluded = finding_exclusions()
    assert ("bronchospasm", "DOID:1176") in excluded and len(excluded) == 11
    for key, concept in excluded:
        assert concept not in resolve(key, vocab).concepts.exact, key


def test_ddxplus_case_515_bronchiectasis_is_rank_8_not_top_5() -> None:
    base = shared_data("ddxplus")
    options = {
        "path": str(base / "test_patients_sample_first1000.csv"),
        "evidences": str(base / "release_evidences.json"),
        "conditions": str(base / "release_conditions.json"),
    }
    case = DATASETS.get("ddxplus")(options, Path("/")).cases[515]
    assert case.reference.differential == ["Bronchiectasis"]
    output = asyncio.run(SYSTEMS.get("ddxplus_differential")({}, Path("/")).call(case))
    assert output.structured is not None and output.structured.differential is not None
    names = [i.diagnosis for i in output.structured.differential]
    assert names.index("Bronchiectasis") == 7 and "Bronchospasm / acute asthma exacerbation" in names[:5]
    score = DdxScorer(DdxOptions(true_diagnosis="first"))(ScoringContext(case=case, output=output))
    assert score.breakdown["top5"] is False and score.breakdown["top10"] is True
    assert score.breakdown["first_hit_rank"] == 8 and score.breakdown["BROADER"] == 0
    assert score.breakdown["reciprocal_rank"] == pytest.approx(1 / 8)
