"""asv adapter on a real results folder from asv 0.6.6 (asv_runner 0.3.2, CPython 3.11, 2 CPUs):
tests/data/asv_json/ holds the suite (benchmarks.py.txt: a plain and a parametrized time
benchmark, one whose params fail and skip, a track, a mem and a peakmem benchmark), its
asv.conf.json, and results/ from two commits run with `asv run --environment
existing:PYTHON --set-commit-hash SHA`: 3672976a with --record-samples, 9eee3696 without."""
from __future__ import annotations

import json
import math

import pytest

from orchestrator.adapters.asv_json import AsvJsonAdapter, parse_asv_folder
from orchestrator.adapters.results import ROW_FAILED, ROW_OK, ROW_SKIPPED, ParseRequest
from orchestrator.adapters.validate import validate_report
from orchestrator.errors import EngineOutputError
from orchestrator.history.asv_results import folder_of, result_files
from orchestrator.history.importer import ImportMeta, build_import_batch
from orchestrator.record import LOWER
from tests.conftest import DATA, mutation

RESULTS = DATA / "asv_json" / "results"
SAMPLED = RESULTS / "vm" / "3672976a-existing-py_tmp_asvtry_bin_python.json"
SUMMARY = RESULTS / "vm" / "9eee3696-existing-py_tmp_asvtry_bin_python.json"
FOLDER = folder_of(SAMPLED)


def _parse(text: str, folder=FOLDER, source: str = "r.json"):
    """As the registry will: the adapter, then every report's checks."""
    report = AsvJsonAdapter().parse(text, ParseRequest(source=source, asv=folder))
    return validate_report(report, source)


def _series(report) -> dict[tuple, list]:
    found: dict[tuple, list] = {}
    for row in report.rows:
        found.setdefault((row.name, row.params), []).append(row)
    return found


def test_each_sample_is_a_repetition_of_its_param_combination():
    doc = json.loads(SAMPLED.read_text())
    report = _parse(SAMPLED.read_text())
    series = _series(report)
    samples = doc["results"]["benchmarks.Suite.time_join"][-1]
    combos = [(("n", n), ("sep", s)) for n in ("10", "100") for s in ("'-'", "'+'")]
    for combo, values in zip(combos, samples):
        rows = series[("benchmarks.Suite.time_join", combo)]
        assert [r.metric("wall_s") for r in rows] == values and len(values) == 4
        assert [r.repetition for r in rows] == [1, 2, 3, 4]
    assert [r.metric("wall_s") for r in series[("benchmarks.time_sort", ())]] == \
        doc["results"]["benchmarks.time_sort"][-1][0]
    assert len(series) == 1 + 4 + 4 + 3 + 2  # time_int × 3, time_join × 4, track × 4, sort, mem×2
    assert report.context["summary_only"] is False


@pytest.mark.parametrize("name, metric, unit", [
    ("benchmarks.time_sort", "wall_s", "s"), ("benchmarks.Suite.track_items", "track_value", "items"),
    ("benchmarks.mem_list", "memory_bytes", "B"), ("benchmarks.peakmem_list", "max_rss_bytes", "B")])
def test_units_come_from_benchmarks_json_and_all_are_lower_is_better(name, metric, unit):
    rows = [r for r in _parse(SAMPLED.read_text()).rows if r.name == name]
    assert {(m.name, m.unit, m.better) for r in rows for m in r.metrics} == {(metric, unit, LOWER)}


def test_without_benchmarks_json_the_kind_comes_from_the_name():
    report = _parse(SAMPLED.read_text(), parse_asv_folder(None, None))
    kinds = {r.name: (r.metrics[0].name, r.metrics[0].unit) for r in report.rows if r.metrics}
    assert kinds["benchmarks.Suite.track_items"] == ("track_value", "")
    assert kinds["benchmarks.peakmem_list"] == ("max_rss_bytes", "B")
    params = {r.params for r in report.rows if r.name == "benchmarks.Parse.time_int"}
    assert params == {(("param1", v),) for v in ("'12'", "'x'", "'skip'")}  # asv's own names


def test_a_failed_param_is_a_failed_row_and_a_skipped_one_skipped():
    rows = _series(_parse(SAMPLED.read_text()))
    (failed,) = rows[("benchmarks.Parse.time_int", (("param1", "'x'"),))]
    (skipped,) = rows[("benchmarks.Parse.time_int", (("param1", "'skip'"),))]
    assert (failed.status, skipped.status) == (ROW_FAILED, ROW_SKIPPED)
    assert "failed" in failed.error and failed.metrics == skipped.metrics == ()


def test_a_file_without_samples_is_a_summary_of_its_time_benchmarks():
    doc = json.loads(SUMMARY.read_text())
    report = _parse(SUMMARY.read_text())
    assert report.context["summary_only"] is True
    assert not [r for r in report.rows if r.status == ROW_OK and r.metrics[0].name == "wall_s"]
    medians = {(a.name, a.params): a.metrics[0].value for a in report.aggregates
               if a.aggregate == "median"}
    assert medians[("benchmarks.time_sort", ())] == doc["results"]["benchmarks.time_sort"][0][0]
    assert {a.aggregate for a in report.aggregates} == {"median", "q_25", "q_75"}
    assert len(medians) == 1 + 4 + 1  # time_sort, time_join × 4, time_int '12'
    # track, mem and peakmem are measured once per run: still one repetition each
    assert sum(1 for r in report.rows if r.status == ROW_OK) == 4 + 1 + 1


def test_the_context_names_the_commit_machine_and_dates():
    context = _parse(SAMPLED.read_text()).context
    assert context["commit"] == {"sha": "3672976ab4aa9e690bed1f94fcee8dc6b9f1fb4c",
                                 "date": "2024-05-01T10:00:00+00:00"}
    assert (context["host_name"], context["num_cpus"]) == ("vm", 2)
    assert context["machine"]["cpu"] == "AMD EPYC"
    assert context["date"].startswith("2026-11-29T05:30:50")  # the first benchmark's start


def test_an_import_carries_the_commit_as_its_build():
    report = _parse(SAMPLED.read_text())
    batch = build_import_batch(report, ImportMeta("asv_json", str(SAMPLED), "ab" * 32),
                               "2024-05-03T00:00:00+00:00")
    assert batch.build["commit_sha"] == "3672976ab4aa9e690bed1f94fcee8dc6b9f1fb4c"
    assert batch.run["build_id"] == batch.build["build_id"]
    assert batch.run["machine_fingerprint"] == "import:vm"
    assert {inv.workload for inv in batch.invocations} == {"benchmarks", "benchmarks.Suite",
                                                          "benchmarks.Parse"}


def test_a_folder_lists_its_result_files():
    assert result_files(RESULTS) == result_files(RESULTS / "vm") == [SAMPLED, SUMMARY]
    assert result_files(SAMPLED) == [SAMPLED]


JOIN = ("results", "benchmarks.Suite.time_join")
BAD = [
    (mutation(("version",), 1), r"field 'version' is 1; expected 2 .*asv update"),
    (mutation(("commit_hash",), "HEAD"), r"field 'commit_hash' is 'HEAD'; expected the commit's hex"),
    (mutation(("results",), ...), r"field 'results' is None; expected an object of benchmarks"),
    (mutation(("result_columns",), ["params"]), r"field 'result_columns' is \['params'\]"),
    (mutation(JOIN + (0,), [1e-6]), r"time_join'.*field 'result' is \[1e-06\]; expected a list of 4"),
    (mutation(JOIN + (1,), [["10"], 7]), r"time_join'.*field 'params' is \[\['10'\], 7\]"),
    (mutation(JOIN + (11, 0, 1), -1.0), r"time_join'.*field 'samples\[0\]\[1\]'.*-1.0.*≥ 0"),
    (mutation(JOIN + (11, 0, 1), "fast"), r"field 'samples\[0\]\[1\]' is 'fast'; expected a finite"),
    (mutation(("date",), "yesterday"), r"field 'date' is 'yesterday'; expected milliseconds"),
]


@pytest.mark.parametrize("mutate, message", BAD)
def test_a_wrong_shape_is_one_line_naming_the_field(mutate, message):
    text = json.dumps(mutate(json.loads(SAMPLED.read_text())))
    with pytest.raises(EngineOutputError, match=message) as caught:
        _parse(text)
    assert "\n" not in str(caught.value) and str(caught.value).startswith("r.json: ")


def test_a_truncated_file_names_the_line():
    with pytest.raises(EngineOutputError, match=r"^r.json: line 1 column \d+: .*truncated"):
        _parse(SAMPLED.read_text()[:1500])


def test_infinite_interval_bounds_are_not_values():
    """asv writes -Infinity/Infinity for an interval it could not place (one sample); they are
    left out with the rest of its interval, never stored."""
    doc = json.loads(SAMPLED.read_text())
    doc["results"]["benchmarks.time_sort"][5] = [-math.inf]
    report = _parse(json.dumps(doc))
    assert all(math.isfinite(a.metrics[0].value) for a in report.aggregates)
