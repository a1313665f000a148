"""Our figures against the reference implementations on the same tables: statsmodels' ``cohens_kappa``
(κ, its FCE standard error ``std_kappa`` and its interval ``kappa_low`` / ``kappa_upp`` = κ ∓ 1.96 SE) and
scikit-learn's ``cohen_kappa_score`` and ``f1_score(average="macro")``. scikit-learn is not a dependency:
its figures were computed once on these tables and are kept, with the version that computed them, in
tests/data/judge_qualification_sklearn.json."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

from clineval.judging.qualification.agreement import binary_agreement, grade_agreement
from clineval.judging.qualification.kappa import cohen_kappa, weighted_kappa
from tests.judge_qualification_tables import cases

CASES = cases()
SKLEARN = json.loads((Path(__file__).parent / "data" / "judge_qualification_sklearn.json").read_text())
IDS = [c[0] for c in CASES]


def sm_table(judge: list, ref: list, values: list) -> np.ndarray:  # type: ignore[type-arg]
    index = {v: i for i, v in enumerate(values)}
    t = np.zeros((len(values), len(values)))
    for a, b in zip(judge, ref, strict=True):
        t[index[a], index[b]] += 1
    return t


@pytest.mark.parametrize(("name", "kind", "judge", "ref"), CASES, ids=IDS)
def test_kappa_se_and_interval_match_statsmodels(name: str, kind: str, judge: list, ref: list) -> None:  # type: ignore[type-arg]
    if kind == "grade":
        ours = weighted_kappa(judge, ref)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref_fig = sm_kappa(sm_table(judge, ref, [1, 2, 3, 4, 5]), wt="quadratic")
        fig = grade_agreement(judge, ref, what=name).kappa
    else:
        ours = cohen_kappa(judge, ref, (True, False))
        with warnings.catch_warnings():  # its sqrt of a -1e-17 variance (constant judge)
            warnings.simplefilter("ignore", RuntimeWarning)
            ref_fig = sm_kappa(sm_table(judge, ref, [True, False]))
        fig = binary_agreement(judge, ref, what=name).kappa
    assert ours.kappa == pytest.approx(float(ref_fig.kappa), abs=1e-12)
    if ours.kappa == 1.0:
        return  # statsmodels' SE is 0 here as ours; our interval is the Wilson-bound one (test_agreement)
    if fig.interval is None:  # a constant judge: κ = 0, Var = 0 (statsmodels: ±1e-17 of rounding, its SE
        # then NaN when negative); no interval shown. Ours is the sqrt of that rounding: 0 on Python 3.11's
        # NumPy, 2e-8 on 3.13's (a variance of 4e-16), so the SE is checked to rounding, not to the bit
        assert ours.kappa == 0.0 and ours.se < 1e-7
        assert abs(float(ref_fig.var_kappa)) < 1e-15
        return
    assert ours.se == pytest.approx(float(ref_fig.std_kappa), abs=1e-12)
    assert fig.analytic[0] == pytest.approx(max(-1.0, float(ref_fig.kappa_low)), abs=1e-12)
    assert fig.analytic[1] == pytest.approx(min(1.0, float(ref_fig.kappa_upp)), abs=1e-12)
    assert (
        fig.interval is not None and fig.interval[0] <= fig.analytic[0] and fig.interval[1] >= fig.analytic[1]
    )


@pytest.mark.parametrize(("name", "kind", "judge", "ref"), CASES, ids=IDS)
def test_kappa_and_macro_f1_match_scikit_learn(name: str, kind: str, judge: list, ref: list) -> None:  # type: ignore[type-arg]
    expected = SKLEARN["tables"][name]
    if kind == "grade":
        assert weighted_kappa(judge, ref).kappa == pytest.approx(expected["kappa"], abs=1e-12)
        return
    assert cohen_kappa(judge, ref, (True, False)).kappa == pytest.approx(expected["kappa"], abs=1e-12)
    figure = binary_agreement(judge, ref, what=name)
    assert figure.balanced_f1.value == pytest.approx(expected["macro_f1"], abs=1e-12)
    assert (figure.f1_met, figure.f1_not_met) == pytest.approx(tuple(expected["f1_per_class"]), abs=1e-12)


def test_half_grades_match_statsmodels_and_scikit_learn_on_the_doubled_scale() -> None:
    judge = [3, 4, 2, 5, 3, 3, 1, 4, 4, 2, 5, 3]
    ref = [3.5, 4, 2, 4.5, 3, 2.5, 1, 4, 3.5, 2, 5, 3]  # medians of two clinicians
    ours = weighted_kappa(judge, ref)
    grid = [x / 2 for x in range(2, 11)]
    ref_fig = sm_kappa(sm_table(judge, ref, grid), wt="quadratic")
    assert ours.kappa == pytest.approx(float(ref_fig.kappa), abs=1e-12)
    assert ours.se == pytest.approx(float(ref_fig.std_kappa), abs=1e-12)
    assert ours.kappa == pytest.approx(SKLEARN["half_grades_doubled_kappa"], abs=1e-12)


def test_scikit_learn_without_labels_spaces_the_grades_present_one_apart() -> None:
    """The pitfall the value scale avoids: with grades {2, 3, 5} only, scikit-learn's default treats 3 -> 5
    as one step; with labels=[1..5] (and statsmodels on the 5 x 5 table) it is two."""
    name = "5x5 grades 2,3,5 only"
    judge, ref = next((j, r) for n, _, j, r in CASES if n == name)
    right = SKLEARN["tables"][name]["kappa"]
    assert weighted_kappa(judge, ref).kappa == pytest.approx(right, abs=1e-12)
    assert abs(SKLEARN["grades_235_default_labels_kappa"] - right) > 0.01


def test_every_table_has_its_scikit_learn_reference() -> None:
    assert set(SKLEARN["tables"]) == set(IDS) and "scikit-learn" in SKLEARN["source"]
