"""pytest-benchmark JSON adapter on real files from pytest-benchmark 5.3.1
(tests/data/pytest_benchmark/test_sorting.py.txt, run with --benchmark-min-rounds=7
--benchmark-max-time=0.0005 --benchmark-warmup=off): raw.json from `--benchmark-json
--benchmark-save-data` (stats and every round's time), summary.json from `--benchmark-save`
without `--benchmark-save-data` (stats only; `--benchmark-json` always writes the data)."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from orchestrator.adapters.pytest_benchmark_json import (PytestBenchmarkJsonAdapter,
                                                         parse_pytest_benchmark_json)
from orchestrator.adapters.results import ROW_OK, ParseRequest
from orchestrator.adapters.validate import validate_report
from orchestrator.errors import EngineOutputError
from orchestrator.history.importer import ImportMeta, build_import_batch
from orchestrator.record import HIGHER, LOWER
from tests.conftest import read_data

RAW = read_data("pytest_benchmark/raw.json")
SUMMARY = read_data("pytest_benchmark/summary.json")
SORT, JOIN = "test_sorting.py::test_sort", "test_sorting.py::test_join"
SERIES = {(SORT, (("size", 100),)), (SORT, (("size", 1000),)), (JOIN, ())}
STATISTICS = {"min", "max", "mean", "median", "stddev", "q1", "q3", "iqr", "ld15iqr", "hd15iqr",
              "total", "ops", "rounds", "iterations", "iqr_outliers", "stddev_outliers"}


def _parse(text: str, source: str = "bench.json"):
    """As the registry will: the adapter, then every report's checks."""
    report = PytestBenchmarkJsonAdapter().parse(text, ParseRequest(source=source))
    return validate_report(report, source)


def test_names_drop_the_parametrize_id_and_params_are_kept():
    for text in (RAW, SUMMARY):
        report = _parse(text)
        assert report.tool == "pytest_benchmark_json"
        assert {(a.name, a.params) for a in report.aggregates} == SERIES
        assert {a.threads for a in report.aggregates} == {1}
    notes = {(a.name, a.notes) for a in _parse(RAW).aggregates}
    assert notes == {(SORT, ("group: sorting",)), (JOIN, ())}


def test_every_data_value_is_one_repetition():
    raw = json.loads(RAW)
    report = _parse(RAW)
    assert len(report.rows) == sum(len(b["stats"]["data"]) for b in raw["benchmarks"])
    for bench in raw["benchmarks"]:
        params = tuple(sorted((bench["params"] or {}).items()))
        mine = [r for r in report.rows if r.params == params and bench["name"].startswith(
            r.name.split("::")[1])]
        assert [r.repetition for r in mine] == list(range(1, len(bench["stats"]["data"]) + 1))
        assert [r.metric("wall_s") for r in mine] == bench["stats"]["data"]
        assert {(m.unit, m.better) for r in mine for m in r.metrics} == {("s", LOWER)}
        assert {r.status for r in mine} == {ROW_OK}
    join = next(r for r in report.rows if r.name == JOIN)  # 3 iterations per round in the file
    assert "time per iteration of a round of 3 iterations" in join.notes
    assert report.context["summary_only"] is False


def test_a_summary_has_aggregates_and_no_repetitions():
    report = _parse(SUMMARY)
    assert report.rows == () and report.context["summary_only"] is True
    assert len(report.aggregates) == len(SERIES) * len(STATISTICS)


@pytest.mark.parametrize("text", [RAW, SUMMARY], ids=["raw", "summary"])
def test_statistics_are_aggregates_with_units_and_directions(text):
    doc = json.loads(text)
    report = _parse(text)
    stats = {(a.name, a.params, a.aggregate): a.metrics for a in report.aggregates}
    assert {key[2] for key in stats} == STATISTICS
    first = doc["benchmarks"][0]["stats"]  # test_sort[100]
    key = (SORT, (("size", 100),))
    for aggregate in ("min", "mean", "median", "stddev", "q3", "total"):
        (metric,) = stats[(*key, aggregate)]
        assert (metric.name, metric.value, metric.unit, metric.better) == \
            ("wall_s", first[aggregate], "s", LOWER)
    (ops,) = stats[(*key, "ops")]
    assert (ops.name, ops.value, ops.unit, ops.better) == ("ops_per_sec", first["ops"], "ops/s",
                                                          HIGHER)
    (rounds,) = stats[(*key, "rounds")]
    assert (rounds.value, rounds.unit) == (first["rounds"], "repetitions")
    (outliers,) = stats[(*key, "iqr_outliers")]
    assert (outliers.value, outliers.unit, outliers.better) == (first["iqr_outliers"], "count",
                                                                LOWER)


def test_machine_and_commit_info_are_kept_in_the_context():
    doc = json.loads(RAW)
    context = _parse(RAW).context
    machine, cpu, commit = doc["machine_info"], doc["machine_info"]["cpu"], doc["commit_info"]
    assert context["machine_info"]["cpu_brand"] == cpu["brand_raw"]
    assert context["machine_info"]["cpu_count"] == context["num_cpus"] == cpu["count"]
    for key in ("node", "machine", "system", "python_version", "python_implementation"):
        assert context["machine_info"][key] == machine[key]
    assert context["host_name"] == machine["node"]
    assert context["commit_info"] == {k: commit[k] for k in ("id", "branch", "dirty", "time",
                                                             "author_time", "project")}
    assert context["date"] == doc["datetime"] and context["pytest_benchmark_version"] == "5.3.1"
    assert "flags" not in str(context)  # the CPU's flag list is left out


def test_an_import_of_the_summary_stores_aggregates_only():
    meta = ImportMeta(fmt="pytest_benchmark_json", source_path="/x/summary.json", sha256="ab" * 32)
    batch = build_import_batch(_parse(SUMMARY), meta, datetime.now(timezone.utc).isoformat())
    assert batch.invocations == () and len(batch.aggregates) == len(SERIES) * len(STATISTICS)
    node = json.loads(SUMMARY)["machine_info"]["node"]
    assert batch.machine_facts["hostname"] == node and batch.machine_facts["logical_cpus"] == 2
    assert batch.source_meta["context"]["summary_only"] is True


def test_ids_with_brackets_tuple_params_and_files_without_fullname():
    doc = json.loads(SUMMARY)
    bench = doc["benchmarks"][0]
    bench.update(name="test_pair[a[1]-b]", fullname="m.py::T::test_pair[a[1]-b]",
                 param="a[1]-b", params={"pair": ["a[1]", "b"], "n": None})
    del doc["benchmarks"][1]["fullname"]
    report = _parse(json.dumps(doc))
    names = {(a.name, a.params) for a in report.aggregates}
    assert ("m.py::T::test_pair", (("n", None), ("pair", '["a[1]","b"]'))) in names
    assert ("test_sort", (("size", 1000),)) in names


def _broken(text: str, change) -> str:
    doc = json.loads(text)
    change(doc)
    return json.dumps(doc)


def _set(index: int, **fields):
    return lambda doc: doc["benchmarks"][index]["stats"].update(fields)


BAD = [
    (RAW[:700], r"^bench\.json: line \d+ column \d+: .*not valid JSON"),
    ('{"results": []}', r"^bench\.json: no 'benchmarks' list at the top level"),
    (_broken(RAW, lambda d: d["benchmarks"][1].pop("stats")),
     r"benchmarks\[1\] \(test_sorting\.py::test_sort\): field 'stats' is None"),
    (_broken(RAW, _set(0, mean="slow")),
     r"benchmarks\[0\] \(test_sorting\.py::test_sort\): field 'stats\.mean' is 'slow'; "
     r"expected a number"),
    (_broken(RAW, lambda d: d["benchmarks"][2]["stats"].pop("median")),
     r"benchmarks\[2\] \(test_sorting\.py::test_join\): field 'stats\.median' is missing"),
    (_broken(RAW, _set(1, stddev=-1e-6)),
     r"benchmarks\[1\] .*field 'stats\.stddev': wall_s is -1e-06; expected a number ≥ 0"),
    (_broken(RAW, _set(0, ops=float("inf"))),
     r"benchmarks\[0\] .*field 'stats\.ops': ops_per_sec is inf; expected a finite number"),
    (_broken(RAW, _set(0, max=float("nan"))), r"field 'stats\.max': wall_s is nan"),
    (_broken(RAW, _set(2, rounds=0)), r"benchmarks\[2\] .*field 'stats\.rounds' is 0; expected "
                                      r"an integer ≥ 1"),
    (_broken(RAW, _set(2, iterations=1.5)), r"field 'stats\.iterations' is 1\.5; expected an "
                                            r"integer ≥ 1"),
    (_broken(RAW, lambda d: d["benchmarks"][1]["stats"]["data"].__setitem__(3, -2e-5)),
     r"benchmarks\[1\] .*field 'stats\.data\[3\]': wall_s is -2e-05; expected a number ≥ 0"),
    (_broken(RAW, lambda d: d["benchmarks"][1]["stats"]["data"].__setitem__(0, "fast")),
     r"benchmarks\[1\] .*field 'stats\.data\[0\]' is 'fast'; expected seconds"),
    (_broken(RAW, lambda d: d["benchmarks"][1]["stats"]["data"].pop()),
     r"benchmarks\[1\] .*field 'stats\.data' must be a list of 7 values"),
    (_broken(RAW, lambda d: d["benchmarks"][2]["stats"].pop("data")),
     r"benchmarks\[2\] \(test_sorting\.py::test_join\): field 'stats\.data' is missing while 2 "
     r"other"),
    (_broken(RAW, lambda d: d["benchmarks"][0].update(params=[100])),
     r"benchmarks\[0\]: field 'params' is \[100\]; expected an object"),
    (_broken(RAW, lambda d: d["benchmarks"][0].update(fullname="")),
     r"benchmarks\[0\]: field 'fullname' is ''; expected a non-empty string"),
    (_broken(RAW, lambda d: d.update(machine_info=["vm"])),
     r"^bench\.json: field 'machine_info' is list; expected an object"),
]


@pytest.mark.parametrize("text, message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_input_is_one_line_naming_the_benchmark_and_field(text, message):
    with pytest.raises(EngineOutputError, match=message) as caught:
        _parse(text)
    assert "\n" not in str(caught.value)


def test_the_module_function_names_its_source():
    with pytest.raises(EngineOutputError, match=r"^pytest-benchmark JSON: no 'benchmarks'"):
        parse_pytest_benchmark_json("[]")
