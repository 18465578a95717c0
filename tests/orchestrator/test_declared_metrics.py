"""A workload's declared metrics (`metrics:`) are judged on its own series only (pure)."""
from __future__ import annotations

from orchestrator.analysis.compare import SeriesSamples
from orchestrator.analysis.identity import SeriesIdentity
from orchestrator.verdicts import _own_metrics, judged_metrics


def samples(workload: str, **values: list[float]) -> SeriesSamples:
    return SeriesSamples(SeriesIdentity(workload, {"workload": workload}, {}), values,
                         {m: "lower" for m in values}, 0, {m: [1, 2] for m in values})


def test_each_series_keeps_the_asked_metrics_and_its_own_workloads():
    declared = {"zstd_compress": ["wall_s"], "zstd_bench": ["compress_mb_s"]}
    assert judged_metrics(("ops_per_sec",), declared) == ("ops_per_sec", "wall_s", "compress_mb_s")
    runs = {"r": [samples("zstd_compress", wall_s=[1.0, 1.1], compress_mb_s=[9.0, 9.0]),
                  samples("zstd_bench", wall_s=[2.0, 2.1], compress_mb_s=[200.0, 210.0]),
                  samples("readrandom", ops_per_sec=[5.0, 5.1], wall_s=[3.0, 3.0])]}
    kept = {s.series.identity["workload"]: (set(s.values), set(s.better), set(s.rounds))
            for s in _own_metrics(runs, ("ops_per_sec",), declared)["r"]}
    assert kept == {"zstd_compress": ({"wall_s"},) * 3, "zstd_bench": ({"compress_mb_s"},) * 3,
                    "readrandom": ({"ops_per_sec"},) * 3}


def test_a_series_left_with_no_metric_is_not_compared():
    runs = {"r": [samples("other", wall_s=[1.0])]}
    assert _own_metrics(runs, ("ops_per_sec",), {"zstd_bench": ["compress_mb_s"]}) == {"r": []}
    assert _own_metrics(runs, ("ops_per_sec",), {}) == runs  # nothing declared: as loaded
