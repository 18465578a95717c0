"""`tidemark import`: an existing result file becomes one run in history, marked imported.

The file is read and parsed completely (validation) before anything is written; the whole run
is then written in one transaction. The run's id comes from the file's sha256, and a file whose
sha256 is already in the DB adds nothing, so importing the same file twice is harmless.

Mapping: every row of the file (a Google Benchmark repetition, a hyperfine sample, a JSONL
record, a db_bench result line) is one measured invocation with the row's metrics; imported rows
have no process, so command, exit code and resource usage are empty. Tool statistics go to the
aggregates table. Series keys use the given machine name (not a probed fingerprint), build
variant "imported" and no compiler, so imported series never mix with measured ones. A file
that names the commit it measured (asv's `commit_hash`: the report's context `commit`) gives
the run a build record of that commit, so the Commits page and the named key `commit` show it.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import yaml

from ..adapters.json_map import parse_map_config
from ..adapters.registry import parse_result_file
from ..adapters.results import (ROW_FAILED, ROW_OK, ParseRequest, ResultRow, StoredAggregate,
                                ToolReport)
from ..analysis.identity import series_key
from ..errors import ConfigError
from ..plan.runplan import PHASE_MEASURED
from ..record import STATUS_FAILED, STATUS_OK, STATUS_SKIPPED, Invocation
from ..store import ImportBatch
from .asv_results import folder_of, result_files

_STATUS = {ROW_OK: STATUS_OK, ROW_FAILED: STATUS_FAILED}
_DEFAULT_ENGINE = {"db_bench_rocksdb": "rocksdb", "db_bench_leveldb": "leveldb"}
IMPORTED_VARIANT = "imported"


@dataclass(frozen=True)
class ImportMeta:
    """What the user tells about the file; empty strings fall back to what the file says."""

    fmt: str
    source_path: str
    sha256: str
    machine: str = ""
    engine: str = ""
    engine_version: str = ""
    date: str = ""  # ISO 8601
    label: str = ""
    workload: str = ""
    tidemark_sha: str = ""
    argv: tuple[str, ...] = ()


def check_date(text: str) -> str:
    """An ISO 8601 date/time → normalized UTC ISO text; ConfigError names the bad value."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"--date {text!r} is not ISO 8601; use e.g. 2024-05-01 or "
                          f"2024-05-01T12:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat()


def default_workload(fmt: str, name: str) -> str:
    """Google Benchmark family (BM_Put of BM_Put/1024), pytest-benchmark's test module
    (test_sorting.py of test_sorting.py::test_sort), asv's module and class, 'hyperfine',
    else the row's name."""
    if fmt == "gbench_json":
        return name.split("/")[0]
    if fmt == "pytest_benchmark_json":
        return name.split("::")[0]
    if fmt == "asv_json":  # benchmarks.Suite of benchmarks.Suite.time_join
        return name.rsplit(".", 1)[0] if "." in name else name
    return "hyperfine" if fmt == "hyperfine_json" else name


def _identity(engine: str, workload: str, row_name: str, params: dict, threads: int,
              machine: str) -> dict[str, Any]:
    return {"engine": engine, "workload": workload, "benchmark": row_name, "params": params,
            "threads": threads, "cache_state": "", "build_variant": IMPORTED_VARIANT,
            "machine_fingerprint": machine}


def _invocation(run_id: str, seq: int, row: ResultRow, workload: str, key: str,
                meta: ImportMeta) -> Invocation:
    return Invocation(
        run_id=run_id, seq=seq, workload=workload, benchmark=row.name, phase=PHASE_MEASURED,
        repetition=row.repetition, threads=row.threads, params=row.params_dict, cache_state="",
        series_key=key, status=_STATUS.get(row.status, STATUS_SKIPPED), error=row.error,
        exit_code=None, wall_s=0.0, user_s=0.0, sys_s=0.0, max_rss_kb=0, started_at=None,
        ended_at=None, command=(), log_path=meta.source_path, metrics=row.metrics,
        histograms=row.histograms, series=row.series, notes=row.notes, conditions={"imported_from": meta.source_path, "format": meta.fmt})


def _commit_build(commit: Any, engine: str, meta: ImportMeta,
                  imported_at: str) -> dict[str, Any] | None:
    """The build record of the commit a file measured (context `commit`: sha, date), shared by
    every import of that commit; None when the file names none."""
    if not isinstance(commit, dict) or not commit.get("sha"):
        return None
    return {"build_id": f"import-{meta.fmt}-{commit['sha'][:12]}", "engine": engine,
            "version": meta.engine_version, "variant": IMPORTED_VARIANT, "source_kind": "import",
            "provenance": {"format": meta.fmt, "revision": commit}, "created_at": imported_at,
            "commit_sha": commit["sha"], "commit_date": commit.get("date")}


def build_import_batch(report: ToolReport, meta: ImportMeta, imported_at: str) -> ImportBatch:
    """The run, machine, series, invocations and aggregates of one file (pure)."""
    run_id = f"import-{meta.sha256[:12]}"
    context = report.context
    machine = meta.machine or str(context.get("host_name") or "unknown")
    fingerprint = f"import:{machine}"
    engine = meta.engine or _DEFAULT_ENGINE.get(meta.fmt, "unknown")
    started = meta.date or imported_at
    series: dict[str, dict[str, Any]] = {}
    invocations = []
    for seq, row in enumerate(report.rows, start=1):
        workload = meta.workload or default_workload(meta.fmt, row.name)
        identity = _identity(engine, workload, row.name, row.params_dict, row.threads, fingerprint)
        key = series_key(identity)
        series[key] = identity
        invocations.append(_invocation(run_id, seq, row, workload, key, meta))
    aggregates = []
    for agg in report.aggregates:
        workload = meta.workload or default_workload(meta.fmt, agg.name)
        identity = _identity(engine, workload, agg.name, dict(agg.params), agg.threads, fingerprint)
        aggregates.append(StoredAggregate(run_id, series_key(identity), workload, agg))
    failed = sum(1 for inv in invocations if inv.status != STATUS_OK)
    build = _commit_build(context.get("commit"), engine, meta, imported_at)
    source_meta = {"format": meta.fmt, "file": meta.source_path, "sha256": meta.sha256,
                   "imported_at": imported_at, "context": context}
    run = {"run_id": run_id, "started_at": started, "status": "ok" if not failed else "partial",
           "engine": engine, "engine_version": meta.engine_version, "build_variant": IMPORTED_VARIANT,
           "build_id": build and build["build_id"], "build_cached": False, "machine_fingerprint": fingerprint, "suite": "",
           "label": meta.label, "cache_state": "", "config": {"import": source_meta | {"context": None}},
           "overrides": list(meta.argv), "tidemark_sha": meta.tidemark_sha, "machine_state": {},
           "planned_invocations": len(invocations), "verified": False,
           "notes": [f"imported from {Path(meta.source_path).name} ({meta.fmt})"]}
    facts = {"fingerprint": fingerprint, "hostname": machine, "source": "import",
             "logical_cpus": context.get("num_cpus"), "cpu_mhz": context.get("mhz_per_cpu"),
             "caches": context.get("caches")}
    return ImportBatch(meta.sha256, run, facts, tuple(series.items()), tuple(invocations),
                       tuple(aggregates), source_meta, build)


def read_map(path: str) -> Any:
    try:
        return parse_map_config(yaml.safe_load(Path(path).read_text()))
    except OSError as exc:
        raise ConfigError(f"--map {path}: {exc.strerror}; pass a YAML json_map config") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"--map {path} is not valid YAML: {str(exc).splitlines()[0]}") from None


def read_import_paths(path: Path, meta: ImportMeta, map_path: str = "",
                      threads: int = 1) -> list[ImportBatch]:
    """One batch per result file `path` names: itself, or for asv_json the result files of a
    results folder; all are read and parsed before the caller writes any."""
    if meta.fmt != "asv_json":
        if path.is_dir():
            raise ConfigError(f"{path} is a folder; --format {meta.fmt} imports one file "
                              f"(only asv_json imports a results folder)")
        return [read_import_file(path, meta, map_path, threads)]
    return [read_import_file(file, meta) for file in result_files(path)]


def read_import_file(path: Path, meta: ImportMeta, map_path: str = "",
                     threads: int = 1) -> ImportBatch:
    """Read and parse the whole file (validation) before anything is written."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    meta = ImportMeta(**{**meta.__dict__, "sha256": hashlib.sha256(data).hexdigest(),
                         "source_path": str(path.resolve())})
    json_map = read_map(map_path) if map_path else None
    asv = folder_of(path) if meta.fmt == "asv_json" else None
    request = ParseRequest(source=path.name, threads=threads, json_map=json_map, asv=asv)
    report = parse_result_file(meta.fmt, data.decode("utf-8", errors="replace"), request)
    if meta.date == "" and isinstance(report.context.get("date"), str):
        meta = ImportMeta(**{**meta.__dict__, "date": check_date(report.context["date"])})
    return build_import_batch(report, meta, datetime.now(timezone.utc).isoformat())


class ImportStore(Protocol):
    """The part of store.Store an import writes through (one transaction per file)."""

    def find_import(self, sha256: str) -> str | None: ...
    def add_import(self, batch: ImportBatch) -> None: ...


def store_import(store: ImportStore, batch: ImportBatch) -> tuple[str, bool]:
    """(run_id, added): a file already imported (same sha256) adds nothing."""
    existing = store.find_import(batch.sha256)
    if existing:
        return existing, False
    store.add_import(batch)
    return batch.run["run_id"], True
