"""Structured-config schemas: every YAML file under conf/ extends one of these.

Hydra composes the YAML onto these dataclasses, so an unknown key or a wrong type fails at
composition time, before anything is built or run. Required fields are MISSING.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from omegaconf import MISSING


@dataclass
class MachineConf:
    name: str = MISSING
    description: str = ""
    # CPUs the engine process is pinned to; empty means "all CPUs, unpinned".
    pin_cpus: List[int] = field(default_factory=list)
    # CPUs the orchestrator itself stays on, away from the engine where the host allows.
    orchestrator_cpus: List[int] = field(default_factory=list)
    expect_cpu_model: str = ""  # regular expression matched against the CPU model name
    expect_logical_cpus: Optional[int] = None
    expect_ram_gib: Optional[float] = None
    # strict: a mismatch with the expectations refuses to run; otherwise the run is "unverified".
    strict: bool = False
    allow_drop_caches: bool = True
    # Run the engine inside a cgroup (v1 cpuset/cpu/memory, or v2 where mounted with them).
    cgroup: bool = False
    cgroup_memory_mb: Optional[int] = None  # memory limit of the engine's cgroup
    cgroup_cpu_quota_pct: Optional[int] = None  # CPU bandwidth cap, 100 = one full CPU
    # Keep other tasks off pin_cpus while the run lasts (cgroup v1 cpusets, as `cset shield`):
    # none | own (Tidemark and the tasks it started) | system (every task: a dedicated host only).
    shield: str = "none"
    shield_irqs: bool = True  # with a shield, also move IRQ affinity off pin_cpus where writable
    # Other tasks' share of the benchmark CPUs during an invocation above which the policy acts
    # (None: measured and recorded only); flag = a note, rerun = up to interference_reruns more.
    interference_max_pct: Optional[float] = None
    interference_policy: str = "flag"
    interference_reruns: int = 2


@dataclass
class SourceConf:
    kind: str = MISSING  # debian | local | git | tarball
    package: str = ""  # debian: the source package name
    package_version: str = ""  # debian: the exact source version, e.g. 7.8.3-2
    path: str = ""  # local: a checkout; git: the repository; tarball: the .tar.* file
    ref: str = ""  # git: the commit or tag
    sha256: str = ""  # tarball: its digest, checked before unpacking (part of the build key)


@dataclass
class EngineVersionConf:
    """One known version of an engine: where its source comes from and how it differs to build."""

    package_version: str = MISSING  # debian: the exact source version, e.g. 9.10.0-1
    suite: str = ""  # the Debian suite that carries it (its deb-src is in scripts/setup-system.sh)
    cmake_flags: Optional[List[str]] = None  # replaces the engine's cmake_flags when set
    patches: Optional[List[str]] = None  # replaces the engine's patches when set ([] for none)


@dataclass
class EngineConf:
    """An engine recipe: where its source comes from, how it builds and what it produces.
    Nothing in Tidemark branches on `name`; what differs between engines is in these fields."""

    name: str = MISSING  # names the engine: its series, builds and patches folder
    version: str = MISSING  # upstream version, the trend's x-axis
    source: SourceConf = field(default_factory=SourceConf)
    # version → recipe; when not empty, `version` must be one of its keys (engine.version=9.10.0).
    versions: Dict[str, EngineVersionConf] = field(default_factory=dict)
    # cmake | meson (both configured into <build>/build and built with Ninja) | make (run in a
    # private copy of the source, <build>/src) | commands (`build_commands`, shell lines run in
    # that copy with $JOBS, $SOURCE and $BUILD set).
    build_system: str = "cmake"
    source_subdir: str = ""  # the build system's root inside the source, e.g. build/meson
    targets: List[str] = field(default_factory=list)  # ninja / make targets; empty: the default
    # The binaries the build produces: name → path inside <build>/build (cmake, meson) or the
    # source copy <build>/src (make, commands). Workloads name them ({binary:NAME}, `binary:`).
    binaries: Dict[str, str] = field(default_factory=dict)
    cmake_flags: List[str] = field(default_factory=list)
    meson_options: List[str] = field(default_factory=list)  # e.g. -Dbin_programs=true
    make_args: List[str] = field(default_factory=list)  # e.g. [-C, programs]
    build_commands: List[str] = field(default_factory=list)
    # The engine's db_bench flavour (rocksdb | leveldb): its command line and output parser;
    # empty for an engine without db_bench (db_bench workloads then refuse to run on it).
    db_bench: str = ""
    # The compressions db_bench workloads may ask of this engine (empty: not checked).
    compressions: List[str] = field(default_factory=list)
    # The name under which Tidemark's Google Benchmark harness (engine/harness, written against
    # this engine's API) is one of the binaries; empty: the engine has no harness.
    harness: str = ""
    # Library names the binary must NOT load dynamically (a system copy of the engine).
    forbid_shared: List[str] = field(default_factory=list)
    # Our own patches, files under engine/patches/<name>/, applied in order (patch -p1) to a
    # copy of the fetched source before configuring; part of the build key and provenance.
    patches: List[str] = field(default_factory=list)


@dataclass
class BuildConf:
    name: str = MISSING  # release | debug | asan | ...
    description: str = ""
    cmake_build_type: str = "Release"
    cmake_flags: List[str] = field(default_factory=list)
    cxx_flags: str = ""
    # Environment for the engine process (e.g. ASAN_OPTIONS); recorded with each run.
    run_env: Dict[str, str] = field(default_factory=dict)
    # Marks instrumented builds whose numbers must never be compared with release numbers.
    instrumented: bool = False


@dataclass
class WorkloadParams:
    num: int = 100000
    value_size: int = 100
    key_size: int = 16
    cache_size: int = 8388608  # block cache bytes
    compression: str = "snappy"  # none | snappy | lz4 | zstd | zlib
    reads: Optional[int] = None  # read ops per thread; None means num
    duration: Optional[int] = None  # seconds; for time-bounded workloads
    report_interval_seconds: Optional[int] = None  # RocksDB time series
    # db_bench and gbench: more flags, verbatim (--NAME=VALUE); any kind: {param:NAME}
    extra: Dict[str, str] = field(default_factory=dict)


@dataclass
class MetricSpec:
    """A metric a workload's output names: its unit and which direction is better."""

    metric: str = ""  # the stored name, when not the group's or field's own
    unit: str = ""
    better: str = "lower"  # lower | higher


@dataclass
class OutputConf:
    """How a `command` workload's result is read besides Tidemark's own timing."""

    # "" (timing only) | regex | a registry format: json_map, gbench_json, hyperfine_json,
    # pyperf_json, pytest_benchmark_json, bmf_json, ...
    format: str = ""
    source: str = "stdout"  # stdout | out (the file the program writes at {out})
    regex: str = ""  # regex: named groups are metrics; the last match in the output counts
    # regex: group → unit and direction (a group not listed is a unitless lower-is-better value)
    metrics: Dict[str, MetricSpec] = field(default_factory=dict)
    map: Dict[str, Any] = field(default_factory=dict)  # json_map: the map (adapters/json_map.py)


@dataclass
class DerivedMetric:
    """A metric computed from a measured one: `bytes_of` (the size of a file or folder, at run
    time) divided by the metric `per`, times `scale`: MB/s = input bytes / wall_s × 1e-6."""

    name: str = MISSING
    bytes_of: str = MISSING  # a template, e.g. "{data_dir}/corpus.txt"
    per: str = "wall_s"
    scale: float = 1e-6
    unit: str = "MB/s"
    better: str = "higher"


@dataclass
class WorkloadConf:
    name: str = MISSING
    description: str = ""
    answers: str = ""  # the question this workload answers, for the benchmark matrix
    # db_bench: the engine's db_bench | gbench: a Google Benchmark binary (its JSON is the
    # output) | command: any command line, timed by Tidemark (wall, user, sys, max RSS) and
    # optionally parsed (`output`). orchestrator/plan/templates.py lists the placeholders.
    kind: str = "db_bench"
    # db_bench: the benchmark measured; gbench: the --benchmark_filter; command: the series'
    # benchmark name (default: the workload's name).
    benchmark: str = ""
    # db_bench: untimed benchmarks that build the data set first (e.g. [fillseq]); gbench and
    # command: untimed command lines run once per point before its repetitions.
    setup: List[str] = field(default_factory=list)
    # True for writers that need an empty database each repetition (fillseq, fillrandom).
    fresh_db: bool = False
    engines: List[str] = field(default_factory=list)  # the engines it runs on; empty: any
    params: WorkloadParams = field(default_factory=WorkloadParams)
    binary: str = ""  # gbench: which of the engine's binaries (default: its only one)
    args: List[str] = field(default_factory=list)  # gbench: arguments after the filter
    command: List[str] = field(default_factory=list)  # command: the argv
    env: Dict[str, str] = field(default_factory=dict)  # gbench, command: the environment
    # Files or folders the measured process reads (templates): cache states evict them and
    # measure their page-cache residency, as a db_bench database's files.
    data: List[str] = field(default_factory=list)
    output: OutputConf = field(default_factory=OutputConf)
    derived: List[DerivedMetric] = field(default_factory=list)
    # The metrics verdicts judge on this workload's series (gate, compare, ab, the site),
    # besides the gate config's `metrics`: e.g. [bytes_per_second] for a compressor's Google
    # Benchmark, [wall_s] for a command; empty: the gate config's alone (ops_per_sec).
    metrics: List[str] = field(default_factory=list)
    # gbench, command: regex → replacement applied to the benchmark names the output reports,
    # so that one benchmark keeps one series across versions that name it differently.
    rename: Dict[str, str] = field(default_factory=dict)
    # gbench, command: the params that name a series (default: the ones the templates use,
    # and `params.extra`); db_bench: always every param.
    series_params: Optional[List[str]] = None
    # Absolute promises checked by `tidemark gate --targets`, e.g. ["p99_us < 50"].
    targets: List[str] = field(default_factory=list)
    # Headroom over the observed baseline, metric → factor: {p99_us: 1.5} = at most 1.5 × baseline.
    bars: Dict[str, float] = field(default_factory=dict)
    # Prose the site shows wherever this workload's numbers are (a known issue, how to read them).
    notes: List[str] = field(default_factory=list)
    # metric → why a target or bar on it is missed (a gap note), shown next to the miss.
    gap_notes: Dict[str, str] = field(default_factory=dict)


@dataclass
class CacheConf:
    name: str = MISSING  # cold | warm | hot
    description: str = ""
    evict_page_cache: bool = False  # sync + posix_fadvise(DONTNEED) the DB files first
    drop_caches: bool = False  # also echo 3 > /proc/sys/vm/drop_caches when allowed
    warm_passes: int = 0  # untimed reading passes (separate processes) before measuring
    # hot: the block cache is sized to the data set and filled by an untimed readseq inside the
    # measured process itself (a block cache does not outlive its process).
    block_cache_fits_data: bool = False
    # Verification right before each measured process: residency outside these bounds marks the
    # invocation condition_not_met.
    min_residency_pct: Optional[float] = None
    max_residency_pct: Optional[float] = None


@dataclass
class SuiteItem:
    workload: str = MISSING  # a key of the suite's workloads
    threads: List[int] = field(default_factory=list)  # empty: the run's `threads`
    caches: List[str] = field(default_factory=list)  # keys of the suite's caches; empty: the run's
    repetitions: Optional[int] = None
    params: Dict[str, Any] = field(default_factory=dict)  # overrides of the workload's params


@dataclass
class SuiteConf:
    name: str = MISSING
    description: str = ""
    workloads: Dict[str, WorkloadConf] = field(default_factory=dict)
    caches: Dict[str, CacheConf] = field(default_factory=dict)  # for items naming cache states
    items: List[SuiteItem] = field(default_factory=list)


@dataclass
class RunnerConf:
    """Where each engine process runs: on this host, or in a container through docker-py."""

    name: str = MISSING  # host | docker
    description: str = ""
    # docker: the image's base. scratch = the binary, the libraries `ldd` lists, the loader,
    # Tidemark's exec helper and valgrind's callgrind (docker/engine.Dockerfile); built locally,
    # never pulled (no image registry is reachable from the machines this targets).
    base: str = "scratch"
    # docker: the container's memory limit (memory and memory+swap: no swap); null = none.
    memory_mb: Optional[int] = 4096
    # docker: seconds given to the container to start and stop beyond the run's timeout_s,
    # before Tidemark kills it from the host (the exec helper inside already kills the engine
    # at timeout_s).
    grace_s: float = 20.0


@dataclass
class TidemarkConf:
    machine: MachineConf = MISSING
    engine: EngineConf = MISSING
    build: BuildConf = MISSING
    cache: CacheConf = MISSING
    runner: RunnerConf = MISSING
    # A single workload (workload=readrandom) runs alone; otherwise the suite's items run.
    workload: Optional[WorkloadConf] = None
    suite: Optional[SuiteConf] = None
    # Run only these workloads of the suite, by name (`only=[readrandom]`): what `tidemark gate
    # --confirm` re-measures of a suite run; empty: every item.
    only: List[str] = field(default_factory=list)
    threads: int = 1
    repetitions: int = 5  # conf/tidemark.yaml says why
    warmups: int = 0
    timeout_s: float = 600.0
    results_dir: str = "results"
    db: str = "${results_dir}/tidemark.duckdb"
    cache_dir: str = "~/.cache/tidemark"
    data_dir: str = "${cache_dir}/data"
    build_jobs: int = 2
    # Write the run as a bundle, a new folder `<bundle_dir>/<run_id>/` (orchestrator/history/bundle.py),
    # instead of into `db`: for a host that does not write the history itself (a fleet node, a
    # CI matrix job); `tidemark ingest` merges it. Empty: the run writes `db`.
    bundle_dir: str = ""
    keep_data: bool = False
    # How long a run waits for another process's hold on the results DB (an analyst's session,
    # a site build reading it) before it stops; readers only ever hold it briefly.
    db_lock_wait_s: float = 600.0
    label: str = ""  # free text shown with the run, e.g. "nightly" or a PR number
    # A note about this run in plain words (what changed and why), shown beside its numbers on
    # the site; `tidemark note RUN "text"` adds one afterwards.
    note: str = ""
    counters: bool = True  # perf stat around each invocation, where perf exists
    # Opt-in: callgrind_repetitions extra invocations per point under callgrind on callgrind_ops
    # operations; their instruction counts do not move with machine noise.
    callgrind: bool = False
    callgrind_ops: int = 20000
    # Callgrind invocations per point: the instruction-count verdict compares its change with
    # the spread between these repetitions (orchestrator/analysis/deterministic.py).
    callgrind_repetitions: int = 3
    # A planted cost per point read (DB::Get), for checking that a slowdown is detected: the
    # engine's planted patch spins a loop; planted_ns is converted to spins with a calibration
    # measured on this host (orchestrator/build/planted.py), planted_spins gives the count exactly
    # (for instruction counts). 0 = off. Both sides of an A/B run the same binary.
    planted_ns: float = 0.0
    planted_spins: int = 0
