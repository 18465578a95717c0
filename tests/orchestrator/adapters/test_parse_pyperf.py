"""pyperf JSON adapter on real files from pyperf 2.11.0 (CPython 3.11, 2 CPUs):
timeit.json from `pyperf timeit --affinity 0 -p 3 -n 4 -w 1 -o timeit.json "sorted(range(100))"`
(one benchmark; a calibration run, then 3 runs of 4 values), suite.json from
`python suite_bench.py -p 3 -n 4 -w 1 -o suite.json` (tests/data/pyperf/suite_bench.py.txt: two
bench_func benchmarks), memory.json from `pyperf timeit --track-memory -p 3 -n 2 -w 1` (unit
byte, one value per run), loops_integer.json from `pyperf convert suite.json --extract-metadata
loops` (unit integer)."""
from __future__ import annotations

import json

import pytest

from orchestrator.adapters.pyperf_json import PyperfJsonAdapter, parse_pyperf_json
from orchestrator.adapters.results import ROW_OK, ParseRequest
from orchestrator.adapters.validate import validate_report
from orchestrator.errors import EngineOutputError
from orchestrator.history.importer import ImportMeta, build_import_batch
from orchestrator.record import LOWER
from tests.conftest import mutation, read_data

FILES = ("timeit.json", "suite.json", "memory.json", "loops_integer.json")
SUITE = read_data("pyperf/suite.json")
TIMEIT = read_data("pyperf/timeit.json")


def _parse(text: str, source: str = "bench.json"):
    """As the registry will: the adapter, then every report's checks."""
    report = PyperfJsonAdapter().parse(text, ParseRequest(source=source))
    return validate_report(report, source)


def _values(text: str) -> dict[str, list[float]]:
    """Every value of every run, per benchmark, straight from the file (layered name)."""
    doc = json.loads(text)
    out = {}
    for bench in doc["benchmarks"]:
        name = (bench.get("metadata") or {}).get("name") or doc["metadata"]["name"]
        out[name] = [v for run in bench["runs"] for v in run.get("values", [])]
    return out


@pytest.mark.parametrize("file, names, metric, unit", [
    ("timeit.json", ["timeit"], "wall_s", "s"),
    ("suite.json", ["sort_list_1000", "join_words_100"], "wall_s", "s"),
    ("memory.json", ["timeit"], "memory_bytes", "B"),
    ("loops_integer.json", ["sort_list_1000", "join_words_100"], "count", "count"),
])
def test_every_value_of_a_measured_run_is_one_repetition(file, names, metric, unit):
    text = read_data(f"pyperf/{file}")
    report = _parse(text, file)
    assert report.tool == "pyperf_json" and report.aggregates == ()
    assert list(dict.fromkeys(r.name for r in report.rows)) == names
    for name, values in _values(text).items():
        mine = [r for r in report.rows if r.name == name]
        assert [r.repetition for r in mine] == list(range(1, len(values) + 1))
        assert [r.metric(metric) for r in mine] == values
        assert {(m.name, m.unit, m.better) for r in mine for m in r.metrics} == \
            {(metric, unit, LOWER)}
        assert {(r.status, r.threads, r.params) for r in mine} == {(ROW_OK, 1, ())}


def test_calibration_runs_and_warmups_are_not_repetitions():
    doc = json.loads(TIMEIT)
    runs = doc["benchmarks"][0]["runs"]
    assert "values" not in runs[0] and all("warmups" in run for run in runs)  # as captured
    report = _parse(TIMEIT)
    assert len(report.rows) == sum(len(run.get("values", [])) for run in runs) == 12
    warmups = {w[1] for run in runs for w in run["warmups"]}
    assert not warmups & {r.metric("wall_s") for r in report.rows}


def test_a_time_notes_the_loop_iterations_it_averages():
    notes = {r.name: r.notes for r in _parse(SUITE).rows}
    assert notes == {
        "sort_list_1000": ("time per loop iteration: each value is the mean of 8192 iterations",),
        "join_words_100": ("time per loop iteration: each value is the mean of 131072 iterations",)}
    assert {r.notes for r in _parse(read_data("pyperf/memory.json")).rows} == {()}


def test_conditions_are_kept_in_the_context():
    context = _parse(TIMEIT).context
    assert {k: context["conditions"][k] for k in ("cpu_affinity", "cpu_count", "hostname")} == \
        {"cpu_affinity": "0", "cpu_count": 2, "hostname": "vm"}
    for key in ("cpu_model_name", "python_version", "platform", "load_avg_1min", "perf_version"):
        assert key in context["conditions"]
    assert (context["host_name"], context["num_cpus"]) == ("vm", 2)
    assert context["first_run_date"] == "2026-11-29 01:48:01.005193"  # the calibration run's
    assert "date" not in context  # pyperf's date has no zone: the import's --date decides


@pytest.mark.parametrize("file, bench, key, expected", [
    ("suite.json", "sort_list_1000", "load_avg_1min", 0.12),  # in the benchmark's metadata
    ("suite.json", "join_words_100", "load_avg_1min", 0.19),
    ("memory.json", "timeit", "runnable_threads", [1, 3, 1]),  # one per measured run
])
def test_conditions_that_differ_are_kept_per_benchmark(file, bench, key, expected):
    context = _parse(read_data(f"pyperf/{file}")).context
    assert context["benchmark_conditions"][bench][key] == expected
    assert key not in context["conditions"]


def test_benchmark_metadata_overrides_the_files():
    doc = json.loads(SUITE)
    doc["benchmarks"][1]["metadata"]["unit"] = "byte"  # the file's says second
    rows = _parse(json.dumps(doc)).rows
    assert {(r.name, r.metrics[0].name) for r in rows} == {("sort_list_1000", "wall_s"),
                                                           ("join_words_100", "memory_bytes")}
    doc["version"] = 6  # perf 0.9.6's format has the same keys
    assert len(_parse(json.dumps(doc)).rows) == 24


def test_an_import_keeps_the_host():
    report = _parse(SUITE)
    batch = build_import_batch(report, ImportMeta("pyperf_json", "/x/suite.json", "ab" * 32),
                               "2024-05-01T00:00:00+00:00")
    assert batch.run["machine_fingerprint"] == "import:vm" and len(batch.invocations) == 24
    assert batch.source_meta["context"]["conditions"]["cpu_model_name"] == "AMD EPYC"


RUN1 = ("benchmarks", 0, "runs", 1)
BAD = [
    (mutation(("benchmarks",), ...), r"^bench.json: no 'benchmarks' list"),
    (mutation(("version",), 5), r"field 'version' is 5; expected '1.0'"),
    (mutation(("benchmarks",), []), r"field 'benchmarks' is empty"),
    (mutation(("benchmarks", 1, "runs"), ...),
     r"benchmarks\[1\] \(join_words_100\): field 'runs' is missing"),
    (mutation(("benchmarks", 0, "runs"), []),
     r"benchmarks\[0\] \(sort_list_1000\): field 'runs' is \[\]"),
    (mutation(("benchmarks", 0, "metadata", "name"), ...),
     r"benchmarks\[0\]: field 'metadata.name' is None"),
    (mutation(("benchmarks", 1, "metadata", "name"), "sort_list_1000"),
     r"benchmarks\[1\]: field 'metadata.name' 'sort_list_1000' repeats"),
    (mutation(("metadata", "unit"), "furlong"),
     r"\(sort_list_1000\): runs\[0\]: field 'metadata.unit' is 'furlong'; expected one of"),
    (mutation((*RUN1, "metadata", "unit"), "byte"),
     r"\(sort_list_1000\): runs\[1\]: field 'metadata.unit' is 'byte' while"),
    (mutation((*RUN1, "metadata"), [1]), r"\(sort_list_1000\): runs\[1\]: field 'metadata' is \[1\]"),
    (mutation((*RUN1, "values"), 3.5), r"\(sort_list_1000\): runs\[1\]: field 'values' is 3.5"),
    (mutation((*RUN1, "values", 2), "slow"),
     r"\(sort_list_1000\): runs\[1\]: field 'values\[2\]' is 'slow'; expected a number"),
    (mutation((*RUN1, "values", 2), None), r"field 'values\[2\]' is None; expected a number"),
    (mutation((*RUN1, "values", 2), float("nan")),
     r"field 'values\[2\]': wall_s is nan; expected a finite number"),
    (mutation((*RUN1, "values", 2), float("inf")), r"field 'values\[2\]': wall_s is inf"),
    (mutation((*RUN1, "values", 2), -1e-6), r"field 'values\[2\]': wall_s is -1e-06; expected a nu"),
    (mutation((*RUN1, "values", 2), 0), r"field 'values\[2\]' is 0; expected a number > 0"),
    (lambda doc: mutation(("benchmarks", 0, "runs"), doc["benchmarks"][0]["runs"][:1])(doc),
     r"\(sort_list_1000\): no run has 'values' \(only calibration runs\)"),
]


@pytest.mark.parametrize("mutate, message", BAD)
def test_bad_input_is_one_line_naming_the_benchmark_and_field(mutate, message):
    with pytest.raises(EngineOutputError, match=message) as caught:
        parse_pyperf_json(json.dumps(mutate(json.loads(SUITE))), "bench.json")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("bench.json")


@pytest.mark.parametrize("text, message", [
    (SUITE[:300], r"^t.json: line 1 column \d+: .*not valid JSON"),
    ("[]", r"^t.json: no 'benchmarks' list"),
])
def test_not_pyperf_json(text, message):
    with pytest.raises(EngineOutputError, match=message):
        parse_pyperf_json(text, "t.json")
