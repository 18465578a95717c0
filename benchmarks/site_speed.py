"""Time `tidemark site` on a synthetic history (a benchmark, not a test): a full build into a
fresh folder, then the incremental case, a rebuild into the same folder after one run was added.
Each size of history given with --runs (1,000 by default; the issue's scale goal is 10,000) is
measured the same way: wall and CPU seconds, the memory the build held at its peak, and the size
of the published site (what a static host such as GitHub Pages would be given).

Builds the history with synthetic_history.py when the DB is missing, copies it (the history
stays as generated, so the figures can be measured again), runs `tidemark site` on the copy
into a fresh --out, then INCREMENTAL_BUILDS times adds one run to the copy through the store
(`synthetic_history.add_run`) and runs `tidemark site` again into the same --out, then
`mkdocs build` alone on the generated pages (to say how much of the time is MkDocs). The
incremental figure is the median build of those: on a shared machine one build's wall clock
moves by a third from one minute to the next; every build's figures are kept beside it. Each
build's wall-clock and CPU seconds (its process and every process it waited for: MkDocs, the
forked page workers) go to benchmarks/site_speed.json, which the methodology page and the
README show. CPU seconds say what a build costs when the machine is shared; wall-clock figures
are for a quiet machine.

Memory: `peak_rss_mb` is the largest resident set of one process of the build (the kernel's
ru_maxrss of its descendants); `peak_tree_rss_mb` the largest sum of the resident sets of the
build's processes, sampled every 0.2 s (pages a forked child shares with its parent are counted
in both, so this overstates what the build needs). The 1,000-run figures are the file's top
level (the methodology page shows them); other sizes go under `scale`, keyed by run count.

    .venv/bin/python benchmarks/site_speed.py [--runs 1000,10000]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import duckdb
import psutil

REPO = Path(__file__).resolve().parents[1]
RESULT = REPO / "benchmarks" / "site_speed.json"
INCREMENTAL_BUILDS = 3  # each adds its own run: every one is the "one run added" case
sys.path.insert(0, str(REPO / "benchmarks"))

from synthetic_history import add_run  # noqa: E402

from orchestrator.store import Store  # noqa: E402


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _tree_rss(root: psutil.Process) -> int:
    total = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            total += proc.memory_info().rss
        except psutil.Error:  # ended between the listing and the read
            pass
    return total


# The largest resident set among a command's descendants (ru_maxrss, KiB), read in a fresh
# process per command: RUSAGE_CHILDREN keeps the maximum of every child a process ever waited.
_MAXRSS = ("import resource, subprocess, sys; rc = subprocess.run(sys.argv[1:]).returncode; "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
           "sys.exit(rc)")


def timed(argv: list[str]) -> dict[str, object]:
    """Wall and CPU seconds of one command (and its descendants), its peak memory (largest
    process, and the largest sum over its processes sampled every 0.2 s), and its stdout."""
    cpu, began = _children_cpu(), time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _MAXRSS, *argv], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    root, tree_peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        tree_peak = max(tree_peak, _tree_rss(root))
        time.sleep(0.2)
    out, err = proc.communicate()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv, out, err)
    maxrss_kib = int(err.strip().splitlines()[-1])
    return {"seconds": round(time.perf_counter() - began, 1),
            "cpu_seconds": round(_children_cpu() - cpu, 1), "output": out,
            "peak_rss_mb": round(maxrss_kib / 1024), "peak_tree_rss_mb": round(tree_peak / 2**20)}


def site_size(site_dir: Path) -> dict[str, int]:
    """The published site: its files and their bytes, each file counted (a host is given every
    file, hard links or not)."""
    files = [p for p in site_dir.rglob("*") if p.is_file()]
    return {"site_files": len(files), "site_mb": round(sum(p.stat().st_size for p in files) / 1e6)}


def phases(output: str) -> dict[str, float]:
    """The per-phase seconds `tidemark site` prints: 'site: … (read 3.8 s, pages 14.5 s, …)'."""
    inside = output.rsplit("(", 1)[-1].rstrip().rstrip(")")
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"([a-z][a-z ,]*?) (\d+\.\d) s", inside)}


def counts(db: Path) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {name: con.execute(sql).fetchone()[0] for name, sql in (
            ("runs", "SELECT count(*) FROM runs"),
            ("series", "SELECT count(DISTINCT series_key) FROM invocations"),
            ("invocations", "SELECT count(*) FROM invocations"),
            ("metrics", "SELECT count(*) FROM metrics"))}
    finally:
        con.close()


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def site(db: Path, out: Path) -> dict[str, object]:
    result = timed([str(Path(sys.executable).parent / "tidemark"), "site", "--db", str(db),
                    "--out", str(out)])
    rebuilt = re.search(r"(\d+) of \d+ run pages rebuilt", str(result["output"]))
    return {"seconds": result["seconds"], "cpu_seconds": result["cpu_seconds"],
            "peak_rss_mb": result["peak_rss_mb"], "peak_tree_rss_mb": result["peak_tree_rss_mb"],
            "phases": phases(str(result["output"])),
            "run_pages_rebuilt": int(rebuilt.group(1)) if rebuilt else None}


def _median_build(builds: list[dict[str, object]]) -> dict[str, object]:
    """The build of median wall-clock time (its own CPU seconds and phases, not medians of
    each figure taken from different builds)."""
    return sorted(builds, key=lambda build: build["seconds"])[len(builds) // 2]


def measure(db: Path, out: Path, runs: int) -> dict[str, object]:
    """One history size: a full build into a fresh --out, INCREMENTAL_BUILDS builds each after
    one added run, MkDocs alone; the history at `db` is generated first when missing."""
    if not db.exists():
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "synthetic_history.py"),
                        str(db), "--runs", str(runs)], check=True)
    load = os.getloadavg()[0]
    work = out.with_name(out.name + ".duckdb")  # the copy that gains a run
    shutil.copyfile(db, work)
    # A history generated by an older Tidemark: migrate it now, not in add_run, or the
    # migration (new columns in every run's row) would pass for a change to all its runs.
    Store(work).close()
    shutil.rmtree(out, ignore_errors=True)
    try:
        figures = {**counts(work), "load_average_before": round(load, 2)}
        full = site(work, out)
        size = site_size(out / "site")
        incremental = []
        for _ in range(INCREMENTAL_BUILDS):
            added = add_run(work)
            incremental.append({**site(work, out), "added_run": added})
        # MkDocs alone, into its own folder: rebuilding out/site would undo the run pages.
        alone = out / "mkdocs-alone"
        mkdocs = timed([sys.executable, "-m", "mkdocs", "build", "-q", "-f",
                        str(out / "mkdocs.yml"), "-d", str(alone.resolve())])
        shutil.rmtree(alone, ignore_errors=True)
    finally:
        work.unlink(missing_ok=True)
    figures.update({"seconds": full["seconds"], "cpu_seconds": full["cpu_seconds"],
                    "peak_rss_mb": full["peak_rss_mb"],
                    "peak_tree_rss_mb": full["peak_tree_rss_mb"], **size,
                    "phases": full["phases"], "run_pages_rebuilt": full["run_pages_rebuilt"],
                    "incremental": {**_median_build(incremental), "builds": incremental},
                    "mkdocs_seconds": mkdocs["seconds"],
                    "machine": f"{cpu_model()}, {os.cpu_count()} logical CPUs (shared)",
                    "date": date.today().isoformat()})
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="1000",
                        help="history sizes, comma-separated (e.g. 1000,10000)")
    args = parser.parse_args()
    result = json.loads(RESULT.read_text()) if RESULT.is_file() else {}
    for runs in (int(n) for n in args.runs.split(",")):
        suffix = "" if runs == 1000 else f"-{runs}"  # the 1,000-run paths as they always were
        figures = measure(REPO / "build" / f"synthetic{suffix}.duckdb",
                          REPO / "build" / f"synthetic-site{suffix}", runs)
        if runs == 1000:
            result = {**figures, "scale": result.get("scale", {})}
        else:
            result.setdefault("scale", {})[str(runs)] = figures
        RESULT.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
