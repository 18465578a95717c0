"""The regex output map on zstd 1.5.4's real `zstd -b` output (pure)."""
from __future__ import annotations

import pytest
import yaml

from orchestrator.adapters.regex_map import RegexMap
from orchestrator.adapters.registry import parse_output
from orchestrator.adapters.results import ParseRequest
from orchestrator.errors import ConfigError, EngineOutputError
from orchestrator.record import HIGHER, LOWER
from tests.conftest import read_data
from tests.orchestrator.adapters.adapter_fuzz import ROOT

OUTPUT = yaml.safe_load((ROOT / "conf/workload/zstd_bench.yaml").read_text())["output"]


def test_the_zstd_bench_workload_reads_its_result_line():
    request = ParseRequest("zstd.stdout", benchmark="zstd_bench", threads=2,
                           regex_map=RegexMap.of(OUTPUT["regex"], OUTPUT["metrics"]))
    row, = parse_output("regex", read_data("regex/zstd_1.5.4_b3_q.stdout"), request).rows
    assert (row.name, row.threads, row.repetition) == ("zstd_bench", 2, 1)
    assert {(m.name, m.value, m.unit, m.better) for m in row.metrics} == {
        ("compressed_bytes", 437923.0, "B", LOWER), ("ratio", 2.708, "x", HIGHER),
        ("compress_mb_s", 130.30, "MB/s", HIGHER), ("decompress_mb_s", 667.2, "MB/s", HIGHER)}


def test_the_last_match_counts_when_a_program_redraws_its_line():
    rmap = RegexMap.of(r"\(x(?P<ratio>[0-9.]+)\),\s*(?P<c>[0-9.]+) MB/s,\s*(?P<d>[0-9.]+) MB/s",
                       {"c": {"metric": "compress_mb_s", "unit": "MB/s", "better": "higher"}})
    text = read_data("regex/zstd_1.5.4_b19_progress.stdout")
    row, = parse_output("regex", text, ParseRequest("p", regex_map=rmap)).rows
    values = {m.name: m for m in row.metrics}
    last = text.replace("\r", "\n").rstrip().rsplit("MB/s,", 1)[1].split("MB/s")[0]
    assert values["d"].value == float(last) and values["d"].unit == ""
    assert values["compress_mb_s"].better == HIGHER


def test_no_match_and_no_named_group_are_one_line():
    rmap = RegexMap.of(r"(?P<speed>[0-9.]+) GB/s")
    with pytest.raises(EngineOutputError, match="no line matches output.regex"):
        parse_output("regex", "nothing here\n", ParseRequest("x.stdout", regex_map=rmap))
    with pytest.raises(ConfigError, match="has no named group"):
        RegexMap.of(r"([0-9.]+) MB/s")
