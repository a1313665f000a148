"""``clineval judge qualify`` for real: scripted judges on the local test server grade a labelled golden-set
task K = 3 times, in the original and in a permuted order (tests/judge_qualification_live.py); the record
is stored and matched by the judge key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clineval.core.errors import UserInputError
from clineval.judging.qualification import KappaUndefinedError
from clineval.report import ReportContext, write_reports
from clineval.report.sections.judge_qualification import qualification_banners
from clineval.runs import run as api
from clineval.runs.qualify import QualifyRequest, qualify_judge
from clineval.runs.stored import scorers_for
from clineval.store import ResultStore
from clineval.store.qualifications import latest_for, list_qualifications
from tests.conftest import StartServer
from tests.judge_qualification_live import N, script, write_labels, write_suite


def qualify(tmp_path: Path, start_server: StartServer, kind: str, **changes: object):  # type: ignore[no-untyped-def]
    server = start_server(script(kind))
    suite = write_suite(tmp_path, server.base_url)
    request = QualifyRequest(
        suite_path=suite,
        task_id="t",
        labels_path=write_labels(tmp_path / "labels.jsonl"),
        store_url=f"sqlite:///{tmp_path}/s.db",
        cache_path=tmp_path / "cache.sqlite",
        **changes,  # type: ignore[arg-type]
    )
    return qualify_judge(request), server


def test_the_oracle_qualifies_and_its_record_is_stored(tmp_path: Path, start_server: StartServer) -> None:
    outcome, server = qualify(tmp_path, start_server, "oracle")
    assert server.stats["total"] == N * 3 * 2  # K samples, original and permuted order
    (group,) = outcome.result.groups
    fig = group.figures
    assert outcome.result.qualified and outcome.result.exit_code == 0
    assert fig.agreement.kappa.kappa == 1.0 and fig.compared == N
    interval = fig.agreement.kappa.interval
    assert interval is not None and interval[0] < 1.0  # never [1, 1]: the data cannot rule out all error
    assert fig.stability.flip_rate == 0.0 and fig.order is not None and fig.order.share == 0.0
    record = outcome.record
    assert record.qualified and record.prompt == "judge_dimension_v1" and record.judge_model == "judge-model"
    assert record.samples == 3 and record.labels_source == "file" and record.n_labelled == N
    assert "api_key" not in str(record.settings).lower() and record.settings["temperature"] == 0.7
    with ResultStore(f"sqlite:///{tmp_path}/s.db") as store:
        (listed,) = list_qualifications(store)
        assert listed.qualification_id == record.qualification_id
        assert listed.figures == json.loads(json.dumps(record.figures))
        assert latest_for(store, [outcome.identity.judge_key])[outcome.identity.judge_key].qualified


def test_a_constant_judge_has_kappa_zero(tmp_path: Path, start_server: StartServer) -> None:
    outcome, _ = qualify(tmp_path, start_server, "constant")
    (group,) = outcome.result.groups
    assert group.figures.agreement.kappa.kappa == 0.0 and not outcome.result.qualified
    assert outcome.result.exit_code == 1
    assert any(r.startswith("kappa 0.000 < 0.6") for r in group.reasons)


def test_a_position_biased_judge_is_caught_by_order(tmp_path: Path, start_server: StartServer) -> None:
    outcome, _ = qualify(tmp_path, start_server, "position")
    (group,) = outcome.result.groups
    fig = group.figures
    assert fig.agreement.kappa.kappa == 1.0  # in the original order it is always right
    assert fig.stability.flip_rate == 0.0
    assert fig.order is not None and fig.order.share is not None and fig.order.share > 0.5
    assert not outcome.result.qualified
    assert [r for r in group.reasons if r.startswith("order sensitivity")] == list(group.reasons)


def test_a_noisy_judge_is_caught_by_stability(tmp_path: Path, start_server: StartServer) -> None:
    outcome, _ = qualify(tmp_path, start_server, "noisy")
    (group,) = outcome.result.groups
    fig = group.figures
    assert fig.agreement.kappa.kappa == 1.0  # its majority is right
    assert fig.stability.flip_rate == pytest.approx(10 / N)
    assert not outcome.result.qualified
    assert any(r.startswith("flip rate 0.333 > 0.1") for r in group.reasons)


def test_labels_without_variance_are_refused(tmp_path: Path, start_server: StartServer) -> None:
    server = start_server(script("oracle"))
    request = QualifyRequest(
        suite_path=write_suite(tmp_path, server.base_url),
        task_id="t",
        labels_path=write_labels(tmp_path / "flat.jsonl", flat=True),
        store_url=f"sqlite:///{tmp_path}/s.db",
        cache_path=None,
    )
    with pytest.raises(KappaUndefinedError, match="kappa is undefined"):
        qualify_judge(request)
    with ResultStore(f"sqlite:///{tmp_path}/s.db") as store:
        assert list_qualifications(store) == []  # nothing stored for a refused input


def test_a_live_system_is_refused_without_a_stored_run(tmp_path: Path, start_server: StartServer) -> None:
    server = start_server(script("oracle"))
    suite = write_suite(tmp_path, server.base_url)
    text = suite.read_text().replace(
        "system: {type: predictions, path: " + str(tmp_path / "preds.jsonl") + "}",
        f"system: {{type: openai, base_url: {server.base_url}, model: other}}",
    )
    suite.write_text(text)
    request = QualifyRequest(
        suite_path=suite,
        task_id="t",
        labels_path=write_labels(tmp_path / "l.jsonl"),
        store_url=f"sqlite:///{tmp_path}/s.db",
    )
    with pytest.raises(UserInputError, match="is live"):
        qualify_judge(request)


def test_a_judged_run_records_its_qualification_and_reports_show_it(
    tmp_path: Path, start_server: StartServer
) -> None:
    outcome, server = qualify(tmp_path, start_server, "oracle")
    store = f"sqlite:///{tmp_path}/s.db"
    suite = write_suite(tmp_path, server.base_url)
    run = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=store, cache_path=tmp_path / "cache.sqlite")
    )
    entry = run.info.provenance["judge_qualification"]["t"]["judge_dimension_v1"]
    assert entry["status"] == "qualified" and entry["qualification_id"] == outcome.record.qualification_id
    assert entry["groups"]["coherence"]["kappa"] == 1.0
    write_reports(run, tmp_path / "out")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["judge_qualified"] == {"t": True} and report["judge_banners"] == []
    assert "judge qualified for judge_dimension_v1" in report["judge_qualification"]["t"][0]
    # next to the tier-4 results (the scorecard needs the scorers as built)
    write_reports(run, tmp_path / "tiers", context=ReportContext(scorers=scorers_for(run.info.suite)))
    markdown = (tmp_path / "tiers" / "report.md").read_text()
    tier4 = markdown.split("### Tier 4: scoped LLM judge (never gates)", 1)[1].split("###", 1)[0]
    assert "Judge qualification: task t: judge qualified for judge_dimension_v1" in tier4
    assert "judge qualification: task t: judge qualified" in (tmp_path / "tiers" / "report.html").read_text()
    # another judge model: same prompt, no qualification on record -> a banner in every format, no gate
    other = suite.read_text().replace("model: judge-model", "model: judge-model-2")
    suite.write_text(other)
    run2 = api.run_suite(api.RunRequest(suite_path=suite, store_url=store, cache_path=None))
    assert run2.info.provenance["judge_qualification"]["t"]["judge_dimension_v1"]["status"] == "unqualified"
    write_reports(run2, tmp_path / "out2")
    report2 = json.loads((tmp_path / "out2" / "report.json").read_text())
    assert report2["judge_qualified"] == {"t": False}
    (banner,) = report2["judge_banners"]
    assert report2["banners"] == []  # not a failure banner
    assert banner.startswith("task t: unqualified judge for judge_dimension_v1: no qualification for model")
    for name in ("report.md", "report.html"):
        assert "unqualified judge for judge_dimension_v1" in (tmp_path / "out2" / name).read_text()


def test_a_failed_qualification_is_a_not_qualified_banner(tmp_path: Path, start_server: StartServer) -> None:
    _, server = qualify(tmp_path, start_server, "constant")
    suite = write_suite(tmp_path, server.base_url)
    run = api.run_suite(
        api.RunRequest(suite_path=suite, store_url=f"sqlite:///{tmp_path}/s.db", cache_path=None)
    )
    (banner,) = qualification_banners(run)
    assert "the judge is not qualified for judge_dimension_v1" in banner and "kappa 0.000 < 0.6" in banner
