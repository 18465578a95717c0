"""Command line of the Google Benchmark harness for one Step (pure).

Google Benchmark runs the step's repetitions itself and writes JSON to `out_json`; the `--tm_*`
flags are the harness's own (engine/harness/harness_flags.h). Extra params pass through as
flags, e.g. `extra: {benchmark_min_time: "0.1"}` → `--benchmark_min_time=0.1` (Debian's
libbenchmark 1.7.1 takes plain seconds; the `0.1s` form needs 1.8+).
"""
from __future__ import annotations

from pathlib import Path

from ..plan.runplan import Step


def gbench_command(binary: Path, step: Step, db_dir: Path, out_json: Path) -> list[str]:
    p = step.params_dict
    argv = [
        str(binary),
        f"--benchmark_filter={step.benchmark}",
        f"--benchmark_repetitions={step.repetitions}",
        "--benchmark_out_format=json",
        f"--benchmark_out={out_json}",
        f"--tm_db={db_dir}",
        f"--tm_threads={step.threads}",
        f"--tm_keys={p['num']}",
        f"--tm_cache_size={p['cache_size']}",
        f"--tm_compression={p['compression']}",
    ]
    argv += [f"--{k.removeprefix('extra.')}={v}" for k, v in sorted(p.items())
             if k.startswith("extra.")]
    return argv
