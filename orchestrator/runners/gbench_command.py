"""Command line of a Google Benchmark binary for one Step (pure).

Google Benchmark runs the step's repetitions itself and writes JSON to `out_json`; the
workload's `args` follow (rendered templates: the RocksDB harness's `--tm_*` flags are
conf/workload/base/rocksdb_harness.yaml's), then the params under `extra` as flags, e.g.
`extra: {benchmark_min_time: "0.1"}` → `--benchmark_min_time=0.1` (Debian's libbenchmark
1.7.1 takes plain seconds; the `0.1s` form needs 1.8+).
"""
from __future__ import annotations

from pathlib import Path

from ..plan.runplan import Step


def gbench_command(binary: Path, step: Step, out_json: Path, args: list[str]) -> list[str]:
    p = step.params_dict
    argv = [
        str(binary),
        f"--benchmark_filter={step.benchmark}",
        f"--benchmark_repetitions={step.repetitions}",
        "--benchmark_out_format=json",
        f"--benchmark_out={out_json}",
        *args,
    ]
    argv += [f"--{k.removeprefix('extra.')}={v}" for k, v in sorted(p.items())
             if k.startswith("extra.")]
    return argv


def list_command(binary: Path, step_filter: str) -> list[str]:
    """The names of the binary's benchmarks the filter selects (a check before a run)."""
    return [str(binary), "--benchmark_list_tests=true", f"--benchmark_filter={step_filter}"]
