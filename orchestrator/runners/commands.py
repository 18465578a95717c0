"""db_bench command lines (pure): one function per db_bench flavour (an engine recipe's
`db_bench`), the same Step in, argv out."""
from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from ..plan.runplan import PHASE_CALLGRIND, Step

# The RNG seed is fixed so repeated invocations read the same key sequence.
SEED = 301



def _common_flags(binary: Path, step: Step, db_dir: Path, cache_size: int) -> list[str]:
    """The flags both engines' db_bench understand, in the same spelling."""
    p = step.params_dict
    return [
        str(binary),
        f"--benchmarks={','.join((*step.prelude, step.benchmark))}",
        f"--db={db_dir}",
        f"--num={p['num']}",
        f"--value_size={p['value_size']}",
        f"--threads={step.threads}",
        f"--cache_size={cache_size}",
        f"--use_existing_db={0 if step.fresh_db else 1}",
        # A callgrind step counts instructions, which must not move with timings: LevelDB's
        # histogram finds each latency's bucket by a linear scan, so a slower (valgrind-slowed,
        # planted) read would cost more instructions in bookkeeping alone.
        f"--histogram={0 if step.phase == PHASE_CALLGRIND else 1}",
    ]


def rocksdb_command(binary: Path, step: Step, db_dir: Path, report_file: Path,
                    cache_size_override: int | None = None) -> list[str]:
    p = step.params_dict
    argv = _common_flags(binary, step, db_dir, cache_size_override or p["cache_size"]) + [
        f"--key_size={p['key_size']}",
        f"--compression_type={p['compression']}",
        f"--seed={SEED}",
    ]
    if step.phase != PHASE_CALLGRIND:  # the reporter thread wakes on the clock (see above)
        argv += [f"--report_file={report_file}",
                 f"--report_interval_seconds={p.get('report_interval_seconds') or 1}"]
    if p.get("reads") is not None:
        argv.append(f"--reads={p['reads']}")
    if p.get("duration") is not None:
        argv.append(f"--duration={p['duration']}")
    argv.extend(_extra_flags(p))
    return argv


def leveldb_command(binary: Path, step: Step, db_dir: Path, report_file: Path,
                    cache_size_override: int | None = None) -> list[str]:
    del report_file  # LevelDB's db_bench has no interval report
    p = step.params_dict
    # No compression flag: the build compresses with Snappy (param_checks refuses the others).
    argv = _common_flags(binary, step, db_dir, cache_size_override or p["cache_size"])
    if p.get("reads") is not None:
        argv.append(f"--reads={p['reads']}")
    argv.extend(_extra_flags(p))
    return argv


def _extra_flags(params: dict) -> list[str]:
    return [f"--{k.removeprefix('extra.')}={v}" for k, v in sorted(params.items())
            if k.startswith("extra.")]


COMMAND_BUILDERS = {"rocksdb": rocksdb_command, "leveldb": leveldb_command}


def engine_command(flavour: str, binary: Path, step: Step, db_dir: Path, report_file: Path,
                   cache_size_override: int | None = None) -> list[str]:
    try:
        builder = COMMAND_BUILDERS[flavour]
    except KeyError:
        raise ConfigError(f"engine.db_bench={flavour!r} has no db_bench command line; known: "
                          f"{', '.join(COMMAND_BUILDERS)}") from None
    return builder(binary, step, db_dir, report_file, cache_size_override)


def record_exit_status(argv: list[str], status_file: Path) -> list[str]:
    """Run argv through a shell that writes its exit status to status_file.

    `perf stat` sometimes exits 0 although the command it ran failed (seen here: 2 of 30 runs of
    a db_bench rejecting a flag), so the engine's own status is taken from this file.
    """
    script = 'status_file=$1; shift; "$@"; code=$?; echo "$code" > "$status_file"; exit "$code"'
    return ["/bin/sh", "-c", script, "tidemark-exit", str(status_file), *argv]


def exit_code_from_status(text: str) -> int | None:
    """A shell's status → Popen's convention: 128+N (killed by signal N) becomes -N."""
    text = text.strip()
    if not text.isdigit():
        return None
    code = int(text)
    return -(code - 128) if code > 128 else code
