"""The site's build cache: a rebuild into the same out folder after the DB changed gives the
same site as a build from scratch, and rebuilds exactly the run pages whose inputs changed.

The history is written through the store (no engine: the pages only read what it wrote), with
real log files for the detailed run pages' log tails; every build is a real `mkdocs build`.
"""
from __future__ import annotations

import filecmp
import gzip
import json
import os
import pickle
import shutil
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest

from orchestrator.build.engine import Build
from orchestrator.errors import UserError
from orchestrator.gate import GateConf
from orchestrator.record import HIGHER, LOWER, Invocation, Metric
from orchestrator.store import Store, reads
from reports.data import history_cache, queries, read_cache, site_cache
from reports.build import run_site, site, tools_site
from reports.build import run_assembly
from reports.data.caveats import caveat_column
from reports.build.mkdocs_hooks import compiled_templates
from reports.build.render import TEMPLATES
from reports.build.run_assembly import BODIES
from reports.build.site import build_site
from reports.data.site_cache import SiteCache

MACHINE = "ab" * 32
BUILD = Build(build_id="leveldb-1.23-release-test", engine="leveldb", version="1.23",
              variant="release", source_kind="debian", source_package="leveldb",
              source_version="1.23-1", source_dir="", compiler="g++", compiler_version="12.2.0",
              cmake_version="3.25.1", cmake_flags=(), build_seconds=60.0, binary_path="/x",
              binary_sha256="0" * 64, linked_libraries=(), created_at="2026-01-01T00:00:00Z",
              cached=True)
SERIES = [(workload, threads) for workload in ("fillrandom", "readrandom") for threads in (1, 2)]


def run_id(index: int) -> str:
    return f"2026010{index}T100000-c{index}"


def _invocations(run: str, index: int, logs: Path) -> list[Invocation]:
    out, seq = [], 1
    for workload, threads in SERIES:
        for repetition in (1, 2, 3):
            log = logs / f"{run}-{seq:04d}.stdout"
            log.write_text(f"{workload} rep {repetition}\n")
            ops = 1000.0 * threads * (1 + index / 100) + repetition
            status = "failed" if (index, seq) == (2, 4) else "ok"
            out.append(Invocation(
                run_id=run, seq=seq, workload=workload, benchmark=workload, phase="measured",
                repetition=repetition, threads=threads, params={"num": 1000}, cache_state="warm",
                series_key=f"{workload}-{threads}", status=status,
                error="exit code 1" if status != "ok" else "", exit_code=0, wall_s=1.0,
                user_s=0.9, sys_s=0.1, max_rss_kb=1000, started_at=None, ended_at=None,
                command=("db_bench", f"--benchmarks={workload}"), log_path=str(log),
                metrics=(Metric("ops_per_sec", ops, "ops/s", HIGHER),
                         Metric("p50_us", 1e6 / ops, "us", LOWER)) if status == "ok" else ()))
            seq += 1
    return out


def add_run(db: Path, index: int, finished: bool = True) -> str:
    """Run `index` of the history (a day apart), written through the store."""
    run = run_id(index)
    store = Store(db)
    try:
        store.record_machine({"fingerprint": MACHINE, "hostname": "test", "cpu_model": "CPU",
                              "logical_cpus": 2, "ram_gib": 24.0})
        store.record_build(BUILD)
        for workload, threads in SERIES:
            store.record_series(f"{workload}-{threads}", {
                "engine": "leveldb", "workload": workload, "benchmark": workload,
                "params": {"num": 1000}, "threads": threads, "cache_state": "warm",
                "build_variant": "release", "machine_fingerprint": MACHINE})
        store.start_run({"run_id": run, "status": "running", "engine": "leveldb",
                         "started_at": datetime(2026, 1, 1, 10, tzinfo=timezone.utc)
                         + timedelta(days=index), "engine_version": "1.23",
                         "build_variant": "release", "build_id": BUILD.build_id,
                         "build_cached": True, "machine_fingerprint": MACHINE, "suite": "t",
                         "label": "nightly", "cache_state": "warm", "config": {},
                         "overrides": [], "tidemark_sha": "test", "machine_state": {},
                         "planned_invocations": 12, "verified": True, "notes": []})
        store.add_invocations_bulk(_invocations(run, index, db.parent / "logs"))
        if finished:
            store.finish_run(run, "ok", {})
    finally:
        store.close()
    return run


@pytest.fixture(autouse=True)
def one_generation_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every build says it was generated at the same time: a build from scratch and a rebuild
    are compared file by file, and the header and the data's manifest name that time."""
    monkeypatch.setattr(site, "generation_time",
                        lambda: datetime(2026, 2, 1, 12, tzinfo=timezone.utc))


@pytest.fixture()
def history(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    db = tmp_path / "tidemark.duckdb"
    for index in range(6):
        add_run(db, index)
    return db


def differences(a: Path, b: Path) -> list[str]:
    """Files that differ or exist on one side only (the sitemap's gzip holds a build time)."""
    found: list[str] = []

    def walk(compared: filecmp.dircmp, prefix: str) -> None:
        found.extend(prefix + name for name in compared.left_only + compared.right_only)
        _, mismatch, errors = filecmp.cmpfiles(compared.left, compared.right,
                                               compared.common_files, shallow=False)
        found.extend(prefix + name for name in mismatch + errors)
        for name, sub in compared.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(a, b), "")
    return sorted(name for name in found if not name.endswith(".gz"))


def published(out: Path) -> dict[str, str]:
    """Published data file (Parquet, CSV, by name) → the file it was written to in the cache
    (a new one when it was written again)."""
    return {name: facts["files"][0] for name, (_, facts) in
            SiteCache(out / "cache").entries(tools_site.KIND).items()}


def tools_outputs(site_dir: Path) -> list[str]:
    """The tools' files a site has: Parquet tables, series and run CSV, compare pairs, older
    runs' data files."""
    return sorted(str(p.relative_to(site_dir)) for pattern in (
        "data/*.parquet", "data/*/*.parquet", "data/manifest.json", "data/series/*.csv",
        "runs/*.csv", "compare/*.json", f"runs/*{run_site.DATA_SUFFIX}")
        for p in site_dir.glob(pattern))


def bodies(out: Path) -> dict[str, str]:
    """run id → the file its page's body was built into (a new one when it is rebuilt)."""
    return {run: facts["body"] for run, (_, facts) in
            SiteCache(out / "cache").entries(BODIES).items()}


def site_verdicts(db: Path) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    """The runs, the points and the site's verdicts with run 1 as the baseline, read once."""
    from reports.data.comparisons import read_verdicts

    con = queries.open_results(db)
    try:
        runs, points, latest = (queries.read_runs(con), queries.read_points(con),
                                queries.read_latest_runs(con))
        # Read without the points (while they are): each workload's run of its newest point.
        assert latest == dict(zip(points["workload"], points["run_id"]))
        found = read_verdicts(con, GateConf(baseline=run_id(1)), latest.values())
    finally:
        con.close()
    return runs, points, found


@pytest.mark.parametrize("change", ["none", "no start", "tied starts", "rejected", "newest gone"])
def test_each_workload_s_newest_run_is_the_run_of_its_newest_point(history: Path,
                                                                   change: str) -> None:
    """queries.read_latest_runs, read without the points, names each workload's run of its
    last point whatever the start times (a run without one sorts last; runs started together
    by run id) and whichever invocations make points (a rejected attempt makes none)."""
    con = duckdb.connect(str(history))
    try:
        if change == "no start":
            con.execute("UPDATE runs SET started_at = NULL WHERE run_id = ?", [run_id(2)])
        elif change == "tied starts":
            con.execute("UPDATE runs SET started_at = (SELECT started_at FROM runs WHERE "
                        "run_id = ?) WHERE run_id IN (?, ?)", [run_id(5), run_id(3), run_id(4)])
        elif change == "rejected":  # the newest run's readrandom attempts all rejected
            con.execute("UPDATE invocations SET conditions = "
                        "'{\"interference\": {\"kept\": false}}' "
                        "WHERE run_id = ? AND workload = 'readrandom'", [run_id(5)])
        elif change == "newest gone":
            con.execute("DELETE FROM runs WHERE run_id = ?", [run_id(5)])
        points = queries.read_points(con)
        latest = queries.read_latest_runs(con)
    finally:
        con.close()
    assert latest == dict(zip(points["workload"], points["run_id"]))
    assert set(latest) == {"fillrandom", "readrandom"}
    expected = {"none": run_id(5), "no start": run_id(2), "tied starts": run_id(5),
                "rejected": run_id(4), "newest gone": run_id(4)}[change]
    assert latest["readrandom"] == expected


def points_through_the_cache(history: Path, cache_dir: Path, zone: str = "UTC",
                             caveats: dict[str, str] | None = None) -> pd.DataFrame:
    """One build's read of the points with the cache in `cache_dir`, checked equal to a read
    of every run (in the session time zone `zone`: DuckDB gives the start times in it) with
    the runs' `caveats` (none by default), and in one block per dtype that stays one when
    rows are appended."""
    con = duckdb.connect(str(history), read_only=True)
    try:
        con.execute(f"SET TimeZone = '{zone}'")
        cache = SiteCache(cache_dir)
        read = read_cache.read_points(con, cache, read_cache.run_fingerprints(con, cache),
                                      caveats or {})
        assert read_cache.keep_points(cache, read) is None
        cache.save()
        pd.testing.assert_frame_equal(read.frame,
                                      caveat_column(queries.read_points(con), caveats or {}))
        assert read.frame._mgr.is_consolidated()
        # The next build appends rows to it: one copy, no blocks to merge again after.
        assert pd.concat([read.frame, read.frame.tail(1)])._mgr.is_consolidated()
        return read.frame
    finally:
        con.close()


def test_points_from_the_cache_equal_a_full_read_after_every_change(history: Path,
                                                                   tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"

    def both() -> pd.DataFrame:
        return points_through_the_cache(history, cache_dir)

    assert len(both()) == 6 * len(SERIES)
    both()  # every run from the cache
    store = Store(history)
    store.set_label(run_id(1), "baseline")
    store.remove_run(run_id(2))
    store.close()
    add_run(history, 7)
    assert set(both()["run_id"]) == {run_id(i) for i in (0, 1, 3, 4, 5, 7)}
    # A metric changed under an unchanged run (no writer does this; a migration might): the
    # metrics' total no longer adds up, every run is read again.
    con = duckdb.connect(str(history))
    con.execute("UPDATE metrics SET value = value * 2 WHERE invocation_id = ?",
                [f"{run_id(0)}-0001"])
    con.close()
    both()


def test_points_kept_are_one_file_and_read_again_when_a_part_cannot_be_trusted(
        history: Path, tmp_path: Path) -> None:
    """One pickled file of points after each build (the same file while nothing changed);
    an old run changed goes back to its place, an integer column is nullable only while a
    NULL is among the points, and a damaged file or a run without a start time costs a read
    of every run, never a different frame (points_through_the_cache compares each)."""
    cache_dir = tmp_path / "cache"

    def both() -> list[Path]:
        points_through_the_cache(history, cache_dir)
        return sorted((cache_dir / read_cache.POINTS).iterdir())

    first = both()
    assert len(first) == 1 and both() == first
    written = first[0].stat().st_mtime_ns
    assert both() == first and first[0].stat().st_mtime_ns == written  # not written again
    store = Store(history)
    store.set_label(run_id(0), "baseline")  # the oldest run: read again, put first
    store.close()
    add_run(history, 6)
    con = duckdb.connect(str(history))
    con.execute("UPDATE invocations SET max_rss_kb = NULL WHERE run_id = ?", [run_id(6)])
    con.close()
    assert both() != first
    assert str(points_through_the_cache(history, cache_dir)["rss_max_kb"].dtype) == "Int64"
    store = Store(history)
    store.remove_run(run_id(6))  # the only NULL gone: int64 again, as one read gives
    store.close()
    assert str(points_through_the_cache(history, cache_dir)["rss_max_kb"].dtype) == "int64"
    (files := both())[0].write_bytes(b"damaged")
    assert both() == files and pickle.loads(files[0].read_bytes()) is not None  # written again
    add_run(history, 7)
    assert both() != files
    con = duckdb.connect(str(history))
    con.execute("UPDATE runs SET started_at = NULL WHERE run_id = ?", [run_id(3)])
    con.close()
    both()


def test_points_of_another_version_or_time_zone_are_not_reused(
        history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept points hold what this version read in this time zone: a new version of the
    code reads every run again, even where the last version's file has the very name it would
    write (here: the same runs), and so does a session in another zone (its start times)."""
    cache_dir = tmp_path / "cache"
    points_through_the_cache(history, cache_dir)
    (kept,) = (cache_dir / read_cache.POINTS).iterdir()
    old = pickle.loads(kept.read_bytes())
    old["ops_median"] *= 2  # what an older version might have computed
    monkeypatch.setattr(site_cache, "generator_fingerprint", lambda: "a newer version")
    kept.write_bytes(pickle.dumps(old))
    points_through_the_cache(history, cache_dir)  # every run read: equal to one read
    points_through_the_cache(history, cache_dir)  # this version's file: equal again
    points_through_the_cache(history, cache_dir, "Europe/Paris")
    assert str(points_through_the_cache(history, cache_dir, "UTC")["started_at"].dtype) == \
        "datetime64[us, UTC]"


def test_points_from_the_cache_carry_the_caveats_of_this_build(history: Path,
                                                                tmp_path: Path) -> None:
    """A run's caveat comes from its build variant and the configs' instrumented builds: a
    config that now calls a variant instrumented changes kept runs' caveats, never left as the
    last build had them."""
    cache_dir = tmp_path / "cache"
    points_through_the_cache(history, cache_dir)
    marked = {run_id(1): "debug build (instrumented): its numbers measure the instrumentation"}
    frame = points_through_the_cache(history, cache_dir, caveats=marked)
    assert set(frame.loc[frame["caveat"] != "", "run_id"]) == {run_id(1)}
    assert set(points_through_the_cache(history, cache_dir)["caveat"]) == {""}


def test_points_not_kept_are_said_and_read_again(history: Path, tmp_path: Path) -> None:
    """A cache that cannot be written (a full disk) costs the next build a read of every run;
    the site is built all the same, and the build says so."""
    cache_dir = tmp_path / "cache"
    (cache_dir / read_cache.POINTS).mkdir(parents=True)
    (cache_dir / read_cache.POINTS).chmod(0o500)
    con = duckdb.connect(str(history), read_only=True)
    try:
        cache = SiteCache(cache_dir)
        read = read_cache.read_points(con, cache, read_cache.run_fingerprints(con, cache), {})
        if os.geteuid() == 0:  # root writes anyway: a file where the folder should be
            (cache_dir / read_cache.POINTS).chmod(0o700)
            (cache_dir / read_cache.POINTS).rmdir()
            (cache_dir / read_cache.POINTS).write_text("not a folder")
        said = read_cache.keep_points(cache, read)
    finally:
        con.close()
    assert said is not None and said.startswith("the points were not kept for the next build (")


def test_history_from_the_cache_equals_the_cores_read_after_every_change(history: Path,
                                                                         tmp_path: Path) -> None:
    cache_dir, metrics = tmp_path / "cache", ["ops_per_sec", "p50_us"]

    def both() -> None:
        con = duckdb.connect(str(history), read_only=True)
        try:
            cache = SiteCache(cache_dir)
            keys = sorted(k for (k,) in con.execute(
                "SELECT DISTINCT series_key FROM invocations").fetchall())
            cached = history_cache.read_history(
                con, keys, metrics, cache=cache,
                fingerprints=read_cache.run_fingerprints(con, cache))
            cache.save()
            assert cached == reads.load_history(con, keys, metrics)
            assert cached.medians  # a history with rows, not two empty ones
        finally:
            con.close()

    both()
    both()  # every run's rows from the cache
    store = Store(history)
    store.set_label(run_id(1), "baseline")
    store.remove_run(run_id(2))
    store.close()
    add_run(history, 7)
    both()
    con = duckdb.connect(str(history))  # a metric changed under an unchanged run
    con.execute("UPDATE metrics SET value = value * 2 WHERE invocation_id = ?",
                [f"{run_id(0)}-0001"])
    con.close()
    both()
    (cache_dir / history_cache.KIND).rename(tmp_path / "gone")  # its file lost: read again
    both()


def test_coverage_from_the_cache_equals_the_cores_read_after_every_change(history: Path,
                                                                          tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"

    def both() -> list[Any]:
        con = duckdb.connect(str(history), read_only=True)
        try:
            cache = SiteCache(cache_dir)
            cached = history_cache.read_coverage(
                con, cache=cache, fingerprints=read_cache.run_fingerprints(con, cache))
            cache.save()
            assert cached == reads.load_coverage(con)  # the same runs, series, order
            assert any(run.series for run in cached)
            return cached
        finally:
            con.close()

    both()
    both()  # every run's from the cache
    store = Store(history)
    store.remove_run(run_id(2))
    store.close()
    add_run(history, 7)
    assert both()[0].run_id == run_id(7)
    con = duckdb.connect(str(history))  # a run's invocations no longer ok; two starts tied,
    con.execute("UPDATE invocations SET status = 'failed' WHERE run_id = ?", [run_id(3)])
    con.execute("UPDATE runs SET started_at = (SELECT started_at FROM runs WHERE run_id = ?) "
                "WHERE run_id = ?", [run_id(4), run_id(5)])
    con.execute("UPDATE runs SET started_at = NULL WHERE run_id = ?", [run_id(0)])  # and none
    con.close()
    assert both()[-1].run_id == run_id(0)
    (cache_dir / history_cache.COVERAGE).rename(tmp_path / "gone")  # its file lost: read again
    both()


def test_coverage_not_kept_costs_the_next_build_a_read_not_this_one(history: Path,
                                                                     tmp_path: Path) -> None:
    """A coverage file that cannot be written (a file where its folder should be, as a full
    disk would) leaves the build going and nothing for the next build to trust."""
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / history_cache.COVERAGE).write_text("not a folder")
    con = duckdb.connect(str(history), read_only=True)
    try:
        cache = SiteCache(cache_dir)
        fingerprints = read_cache.run_fingerprints(con, cache)
        assert history_cache.read_coverage(con, cache=cache, fingerprints=fingerprints) == \
            reads.load_coverage(con)
        assert history_cache.COVERAGE not in cache.entries(history_cache.COVERAGE) and \
            cache.stored(history_cache.COVERAGE) == {}
    finally:
        con.close()


def test_a_rebuild_equals_a_full_build_and_rebuilds_only_changed_run_pages(
        history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_site, "DETAILED_RUN_PAGES", 3)  # so a new run makes one an older run
    out = tmp_path / "out"
    build_site(history, out)
    first_files = published(out)
    build_site(history, tmp_path / "again")
    assert build_site(history, out) and differences(out / "site", tmp_path / "again" / "site") == []
    assert published(out) == first_files  # nothing changed: every published file reused
    before = bodies(out)
    assert set(before) == {run_id(i) for i in range(6)}
    outputs = tools_outputs(out / "site")
    # Every kind of published file is there (the comparisons below cover them all): the
    # invocations' and results' CSV of the detailed runs, an older run's data file.
    assert {"data/invocations/invocations-0000.parquet", "data/metrics/metrics-0000.parquet",
            "data/runs.parquet",
            "data/manifest.json", "compare/index.json", f"runs/{run_id(5)}.invocations.csv",
            f"runs/{run_id(5)}.results.csv", "data/series/fillrandom-1.csv",
            f"runs/{run_id(0)}{run_site.DATA_SUFFIX}"} <= set(outputs)
    assert any(name.startswith("compare/") and "__" in name for name in outputs)
    assert f"runs/{run_id(0)}.invocations.csv" not in outputs  # not a detailed run: no export

    # A new run (still running), a label, a removed run; run 2 drops out of the detailed three.
    store = Store(history)
    store.set_label(run_id(0), "baseline")
    store.remove_run(run_id(1))
    store.close()
    add_run(history, 6, finished=False)
    # The next build starts from this runs/ folder, keeping the files that are links to the
    # cache's right files: one that is not (edited by hand) is linked again, a stray one goes.
    runs_folder = out / "site" / "runs"
    edited = runs_folder / f"{run_id(4)}.html"
    edited.unlink()
    edited.write_text("edited by hand", encoding="utf-8")
    (runs_folder / "stray.html").write_text("not a run", encoding="utf-8")
    folder = runs_folder.stat().st_ino
    build_site(history, out)
    # The last build's runs/ folder, moved out of MkDocs' way, became this build's (renamed,
    # never copied: the same directory).
    assert runs_folder.stat().st_ino == folder and not (out / run_assembly.RETIRED).exists()
    build_site(history, tmp_path / "fresh")
    assert differences(out / "site", tmp_path / "fresh" / "site") == []
    assert tools_outputs(out / "site") == tools_outputs(tmp_path / "fresh" / "site")
    # Written again: the tables that changed, the new run's files, the series it measured.
    # Reused: the files of runs unchanged (run 4's invocations CSV).
    files = published(out)
    assert files["parquet series"] == first_files["parquet series"]
    assert files[f"invocations {run_id(4)}"] == first_files[f"invocations {run_id(4)}"]
    assert all(files[name] != first_files.get(name) for name in (
        "parquet runs", "parquet invocations 0", "parquet metrics 0", f"invocations {run_id(6)}",
        "series fillrandom-1"))
    after = bodies(out)
    rebuilt = {run for run in after if after[run] != before.get(run)}
    assert rebuilt == {run_id(6), run_id(0), run_id(3)}
    assert not (out / "site" / "runs" / f"{run_id(1)}.html").exists()
    assert not (out / "docs" / "runs" / f"{run_id(1)}.md").exists()

    # The run ends (its status and end time change) and a detailed page's log grows.
    store = Store(history)
    store.finish_run(run_id(6), "ok", {})
    store.close()
    with open(history.parent / "logs" / f"{run_id(5)}-0001.stdout", "a") as log:
        log.write("one more line\n")
    build_site(history, out)
    shutil.rmtree(tmp_path / "fresh")
    build_site(history, tmp_path / "fresh")
    assert differences(out / "site", tmp_path / "fresh" / "site") == []
    final = bodies(out)
    assert {run for run in final if final[run] != after.get(run)} == {run_id(6), run_id(5)}
    assert "one more line" in (out / "site" / "runs" / f"{run_id(5)}.html").read_text()


def test_a_new_build_time_rewrites_no_unchanged_run_page(history: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The header's date and newest run live in one script, not in the pages: a page that
    shows nothing new stays the file the cache holds (a thousand run pages are not rewritten
    for one run added)."""
    out = tmp_path / "out"
    build_site(history, out)
    page = out / "site" / "runs" / f"{run_id(2)}.html"
    before = page.stat().st_ino, page.read_bytes()
    monkeypatch.setattr(site, "generation_time",
                        lambda: datetime(2026, 2, 2, 9, tzinfo=timezone.utc))
    add_run(history, 6)
    build_site(history, out)
    assert (page.stat().st_ino, page.read_bytes()) == before
    header = (out / "site" / "assets" / "generated.js").read_text()
    assert "Generated 2026-02-02 09:00 UTC from 7 runs" in header and run_id(6) in header


def test_templates_are_kept_compiled_between_builds(history: Path, tmp_path: Path) -> None:
    """Our page templates and the theme's are compiled once, into out/cache, and loaded from
    there by the next build (Jinja2's bytecode cache checks each template's source)."""
    out = tmp_path / "out"
    build_site(history, out)
    kept = compiled_templates(out)
    ours = [Path(kept.directory) / (kept.pattern % kept.get_cache_key(name, str(TEMPLATES / name)))
            for name in ("index.md.j2", "sections.md.j2", "run.md.j2")]
    assert all(path.is_file() for path in ours)
    assert len(list(Path(kept.directory).iterdir())) > len(ours)  # the theme's too
    written = [path.stat().st_mtime_ns for path in ours]
    add_run(history, 6)
    build_site(history, out)
    assert [path.stat().st_mtime_ns for path in ours] == written  # loaded, not compiled again


def test_a_new_version_of_the_code_rebuilds_every_run_page(history: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A new Tidemark (or Markdown, Jinja2…) that changes what a run page says: every page is
    made again and shows it, none is last version's file kept in the cache under its name."""
    from reports.data import site_cache

    out = tmp_path / "out"
    build_site(history, out)
    render_page = run_site._render_run_page

    def new_version(env, page):  # what a changed template would write on every run page
        markdown, tables = render_page(env, page)
        return markdown + "\nMade by the new version.\n", tables

    monkeypatch.setattr(run_site, "_render_run_page", new_version)
    for module in (site_cache, run_site):
        monkeypatch.setattr(module, "generator_fingerprint", lambda: "a new version")
    build_site(history, out)
    pages = sorted((out / "site" / "runs").glob("20*.html"))
    assert len(pages) == 6
    assert all("Made by the new version." in page.read_text() for page in pages)


def test_run_pages_staged_for_last_builds_shell_are_used_only_if_mkdocs_built_it_again(
        history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker links the run pages around the shell MkDocs built last time while MkDocs
    builds the site; the parent takes them only when the shell it built is that one: a shell
    that changed (here: the one kept is another) gives the pages a build from scratch gives."""
    from reports.build.page_shell import Shell

    taken: list[bool] = []
    into_staged = run_assembly._into_staged
    monkeypatch.setattr(run_assembly, "_into_staged",
                        lambda *args: taken.append(into_staged(*args)) or taken[-1])
    out = tmp_path / "out"
    build_site(history, out)
    add_run(history, 6)
    build_site(history, out)
    assert taken == [True] and not (out / run_assembly.STAGED).exists()
    index = out / "cache" / f"{run_assembly.SHELLS}.pkl"
    stored = pickle.loads(index.read_bytes())
    (key, facts), = stored["entries"].values()
    shell = facts["shell"]
    other = Shell((shell.pieces[0] + "<!-- another theme -->", *shell.pieces[1:]), shell.parts)
    index.write_bytes(pickle.dumps({**stored, "entries": {
        run_assembly.SHELLS: (key, {"shell": other})}}))
    add_run(history, 7)
    build_site(history, out)
    build_site(history, tmp_path / "fresh")
    assert taken == [True] and differences(out / "site", tmp_path / "fresh" / "site") == []
    assert "another theme" not in (out / "site" / "runs" / f"{run_id(2)}.html").read_text()


def test_a_damaged_or_foreign_cache_is_not_trusted(history: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build_site(history, out)
    (out / "cache" / f"{BODIES}.pkl").write_bytes(b"not a pickle")
    for points in (out / "cache" / read_cache.POINTS).iterdir():
        points.write_bytes(points.read_bytes()[:100])  # cut short
    index = out / "cache" / f"{read_cache.FINGERPRINTS}.pkl"
    stored = pickle.loads(index.read_bytes())
    index.write_bytes(pickle.dumps({**stored, "generator": "another version"}))
    add_run(history, 6)
    build_site(history, out)
    build_site(history, tmp_path / "fresh")
    assert differences(out / "site", tmp_path / "fresh" / "site") == []


def test_run_pages_from_the_shell_equal_the_pages_mkdocs_renders(history: Path,
                                                                 tmp_path: Path) -> None:
    """Each run page as the shell makes it == the theme's whole template rendered for it the
    way `mkdocs build` renders a page (nav, context, page events), byte for byte."""
    import subprocess
    import sys

    from mkdocs.commands.build import get_context
    from mkdocs.structure.nav import get_navigation

    from reports.build.page_shell import SHELL, MkDocsPages, Shell

    out = tmp_path / "out"
    build_site(history, out)
    built = tmp_path / "mkdocs"  # MkDocs alone on the same config: the shell is kept there
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(out / "mkdocs.yml"),
                    "-d", str(built)], check=True)
    pages = MkDocsPages(out / "mkdocs.yml")
    shell = Shell.split((built / "runs" / f"{SHELL}.html").read_text(),
                        pages.convert(f"runs/{SHELL}.md"))
    config, files = pages.config, pages.files
    nav = config.plugins.on_nav(get_navigation(files, config), config=config, files=files)
    template = pages.env.get_template("main.html")
    sources = sorted(f"runs/{run_id(i)}.md" for i in range(6))
    for source in sources:
        converted = pages.convert(source)
        page = files.get_file_from_path(source).page
        page.content, page.active = converted.content, True
        reference = config.plugins.on_post_page(template.render(get_context(nav, files, config,
                                                                            page)),
                                                page=page, config=config)
        assert shell.wrap(converted, converted.content) == reference, source
        # The built page: the same page around the content, whose slots hold their tables.
        before, after = reference.split(converted.content)
        built_page = (out / "site" / source.replace(".md", ".html")).read_text()
        assert built_page.startswith(before) and built_page.endswith(after), source
        assert "tm-slot" in converted.content and "tm-slot" not in built_page


def test_change_points_are_remembered_per_window_of_values(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.analysis import changepoints
    from reports.data.site_cache import RememberedSteps

    step = [100.0] * 10 + [150.0] * 10
    flat = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 100.2, 99.8]
    first = RememberedSteps(SiteCache(tmp_path))
    found = first.detect(step)
    assert found == changepoints.detect_change_points(step) and found[0].index == 10
    assert first.detect(flat) == changepoints.detect_change_points(flat)
    cache = SiteCache(tmp_path)
    RememberedSteps(cache).keep(first.used)
    cache.save()

    def not_again(values: list[float]) -> None:
        raise AssertionError(f"computed again: {values}")

    monkeypatch.setattr(changepoints, "detect_change_points", not_again)
    second = RememberedSteps(SiteCache(tmp_path))
    assert second.detect(step) == found and second.detect(flat) == first.detect(flat)
    with pytest.raises(AssertionError, match="computed again"):
        second.detect(step + [150.0])  # one more run: another window, computed


def test_the_history_read_once_answers_every_smaller_question_alike(history: Path) -> None:

    keys = sorted(f"{w}-{t}" for w, t in SERIES)
    con = duckdb.connect(str(history), read_only=True)
    try:
        questions = [(tuple(k), tuple(m)) for k in (keys, keys[:2])
                     for m in (["ops_per_sec"], ["p50_us"], ["ops_per_sec", "p50_us"])]
        alone = {question: reads.load_history(con, *question) for question in questions}
        with reads.remembering_history(con):
            reads.load_history(con, keys, ["ops_per_sec", "p50_us"])
            remembered = {question: reads.load_history(con, *question) for question in alone}
        assert remembered == alone and all(h.medians for h in alone.values())
    finally:
        con.close()


def test_the_compare_data_reuses_the_site_verdicts_and_equals_a_read_of_its_own(
        history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Compare page's child is given what the site's verdicts read from the same snapshot
    (the runs' series, the history, the pairs they compared) and not the points: it reads the
    chosen pairs' own, as in a build, with their runs' caveats (here every run's build is
    counted as instrumented: its rows say so). Its files are those of the whole points frame,
    and the core is not asked those pairs again."""
    from orchestrator import verdicts
    from reports.data.caveats import with_caveats
    from reports.build.compare_site import write_comparisons
    from reports.data.comparisons import summary_reports
    from reports.build.site_reads import points_of_runs, read_runs

    gate, (runs, points, found) = GateConf(baseline=run_id(1)), site_verdicts(history)
    first = read_runs(history, SiteCache(tmp_path / "cache"), {"release"})
    reused = summary_reports(found)
    assert {(run_id(4), run_id(5)), (run_id(1), run_id(5))} <= set(reused)
    alone, given = tmp_path / "alone", tmp_path / "given"
    write_comparisons(history, alone, runs, with_caveats(runs, points, {"release"})[1], gate,
                      run_id(1), found.candidate)
    asked: list[tuple[str, str]] = []
    compare_pairs = verdicts.compare_pairs

    def recorded(con, pairs, *args):  # type: ignore[no-untyped-def]
        asked.extend(pairs)
        return compare_pairs(con, pairs, *args)

    monkeypatch.setattr(verdicts, "compare_pairs", recorded)
    pairs = write_comparisons(history, given, runs, partial(points_of_runs, history, first=first), gate,
                              run_id(1), found.candidate, found)
    assert asked and not set(asked) & set(reused) and len(asked) < pairs
    assert not differences(alone, given) and len(list((given / "compare").iterdir())) == pairs + 1
    # The caveat's mark on the rows, as JSON escapes it.
    assert any("release \\u26a0" in path.read_text(encoding="utf-8")
               for path in (given / "compare").iterdir())


def test_run_pages_tables_in_slots_equal_their_markdown_tables(history: Path,
                                                               tmp_path: Path) -> None:
    """A run page's tables go into its body as HTML slots: the body is the one MkDocs' pipeline
    makes of the page with its tables in Markdown, byte for byte; a page kept from the last
    build (converted again when a link target came or went) gets the same slots again."""
    from reports.build import render
    from reports.build.page_shell import MkDocsPages
    from reports.build.site_reads import points_of_runs, read_runs

    out = tmp_path / "out"
    build_site(history, out)
    env = render.environment()
    first = read_runs(history, SiteCache(tmp_path / "cache"), set())

    def contexts() -> run_site.RunContexts:
        return run_site.RunContexts(first.runs, first.phases, first.imported,
                                    partial(points_of_runs, history, first=first))

    written = run_site.write_run_pages(env, out / "docs", first.runs, contexts(),
                                       first.fingerprints, first.logs, {})
    kept = run_site.write_run_pages(env, out / "docs", first.runs, contexts(), first.fingerprints,
                                    first.logs, {page.run_id: page.key for page in written.pages})
    assert not kept.written
    for page in written.pages:  # beside each page: the same page with Markdown tables
        markdown = env.get_template("run.md.j2").render(page=written.contexts.of(page.run_id),
                                                        slots=None)
        (out / "docs" / page.src.replace(".md", "-tables.md")).write_text(markdown)
    pages = MkDocsPages(out / "mkdocs.yml")
    for page in written.pages:
        tables = kept.table_slots(env, page.run_id)
        assert tables == written.written[page.run_id] and len(tables) >= 3, page.run_id
        body = run_site.fill_table_slots(pages.convert(page.src).content, tables, page.src)
        assert body == pages.convert(page.src.replace(".md", "-tables.md")).content


@pytest.mark.parametrize("table", [*[t for t in read_cache.READ_IN_FULL if t != "run_notes"],
                                   "builds", "machines"])
def test_a_damaged_block_stops_the_build_in_one_line_naming_the_db(history: Path, tmp_path: Path,
                                                                   table: str) -> None:
    """The check skips the tables the build reads in full itself (read_cache.READ_IN_FULL; this
    history has no notes) and reads the others: either way the error names the user's file and
    the restore."""
    con = duckdb.connect(str(history), read_only=True)
    (block,) = con.execute(f"SELECT min(block_id) FROM pragma_storage_info('{table}') "
                           "WHERE block_id >= 0").fetchone()
    con.close()
    with history.open("r+b") as handle:  # DuckDB: 3 headers of 4 KiB, then 256 KiB blocks
        handle.seek(3 * 4096 + block * 262144 + 64)
        handle.write(b"\xff" * 4096)
    with pytest.raises(UserError) as raised:
        build_site(history, tmp_path / "out")
    said = str(raised.value)
    assert f"results database {history} is damaged" in said and "\n" not in said
    assert f"tidemark db restore --db {history}" in said


def test_points_read_in_blocks_of_runs_are_the_points_of_one_read(history: Path,
                                                                  monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    """A long history's points are read a block of runs at a time (the one query's pivot of
    every metric was most of a 10,000-run build's memory): joined, they are one read's."""
    con = duckdb.connect(str(history), read_only=True)
    try:
        whole = queries.read_points(con)
        some = queries.read_points(con, [run_id(4), run_id(1)])
        monkeypatch.setattr(queries, "POINTS_BLOCK_INVOCATIONS", 1)  # a block per run
        assert len(queries._point_blocks(con, None)) == 6
        pd.testing.assert_frame_equal(queries.read_points(con), whole)
        pd.testing.assert_frame_equal(queries.read_points(con, [run_id(4), run_id(1)]), some)
    finally:
        con.close()
    assert list(dict.fromkeys(some["run_id"])) == [run_id(1), run_id(4)]  # oldest run first


def invocations_of(db: Path, run: str) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM invocations WHERE run_id = ?", [run]).fetchone()[0]
    finally:
        con.close()


def test_older_runs_data_files_read_a_block_of_runs_at_a_time_are_the_same(
        history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_site, "DETAILED_RUN_PAGES", 1)  # five older runs
    build_site(history, tmp_path / "one")
    monkeypatch.setattr(run_site, "ROWS_BLOCK_RUNS", 2)  # their rows read in three blocks
    build_site(history, tmp_path / "blocks")
    runs = tmp_path / "blocks" / "site" / "runs"
    data_files = sorted(p.name for p in runs.glob(f"*{run_site.DATA_SUFFIX}"))
    assert data_files == sorted(f"{run_id(i)}{run_site.DATA_SUFFIX}" for i in range(5))
    for i in range(5):  # each older run's address sends the reader to the shared page
        assert f'"{run_site.OLDER}.html?run={run_id(i)}" + location.hash' in \
            (runs / f"{run_id(i)}.html").read_text(encoding="utf-8")
        data = json.loads(gzip.decompress((runs / f"{run_id(i)}{run_site.DATA_SUFFIX}")
                                          .read_bytes()))
        assert data["page"]["title"] == f"Run {run_id(i)}" and len(data["rows"]) == \
            invocations_of(history, run_id(i))
    assert differences(tmp_path / "one" / "site", tmp_path / "blocks" / "site") == []
