"""Time `tidemark site` on a synthetic history (a benchmark, not a test): a full build into a
fresh folder, then the incremental case, a rebuild into the same folder after one run was added.

Builds the history with synthetic_history.py when the DB is missing, copies it (the history
stays as generated, so the figures can be measured again), runs `tidemark site` on the copy
into a fresh --out, adds one run to the copy through the store (`synthetic_history.add_run`),
runs `tidemark site` again into the same --out, then `mkdocs build` alone on the generated
pages (to say how much of the time is MkDocs). Each build's wall-clock and CPU seconds (its
process and every process it waited for: MkDocs, the forked page workers) go to
benchmarks/site_speed.json, which the methodology page and the README show. CPU seconds say
what a build costs when the machine is shared; wall-clock figures are for a quiet machine.

    .venv/bin/python benchmarks/site_speed.py [--db build/synthetic.duckdb] [--out build/synthetic-site]
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

REPO = Path(__file__).resolve().parents[1]
RESULT = REPO / "benchmarks" / "site_speed.json"
sys.path.insert(0, str(REPO / "benchmarks"))

from synthetic_history import add_run  # noqa: E402


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str]) -> dict[str, object]:
    """Wall and CPU seconds of one command (and its descendants), and its stdout."""
    cpu, began = _children_cpu(), time.perf_counter()
    proc = subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          text=True)
    return {"seconds": round(time.perf_counter() - began, 1),
            "cpu_seconds": round(_children_cpu() - cpu, 1), "output": proc.stdout}


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
            "phases": phases(str(result["output"])),
            "run_pages_rebuilt": int(rebuilt.group(1)) if rebuilt else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=REPO / "build" / "synthetic.duckdb")
    parser.add_argument("--out", type=Path, default=REPO / "build" / "synthetic-site")
    args = parser.parse_args()
    if not args.db.exists():
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "synthetic_history.py"),
                        str(args.db)], check=True)
    load = os.getloadavg()[0]
    work = args.out.with_name(args.out.name + ".duckdb")  # the copy that gains a run
    shutil.copyfile(args.db, work)
    shutil.rmtree(args.out, ignore_errors=True)
    try:
        figures = {**counts(work), "load_average_before": round(load, 2)}
        full = site(work, args.out)
        added = add_run(work)
        incremental = site(work, args.out)
        # MkDocs alone, into its own folder: rebuilding out/site would undo the run pages.
        alone = args.out / "mkdocs-alone"
        mkdocs = timed([sys.executable, "-m", "mkdocs", "build", "-q", "-f",
                        str(args.out / "mkdocs.yml"), "-d", str(alone.resolve())])
        shutil.rmtree(alone, ignore_errors=True)
    finally:
        work.unlink(missing_ok=True)
    figures.update({"seconds": full["seconds"], "cpu_seconds": full["cpu_seconds"],
                    "phases": full["phases"], "run_pages_rebuilt": full["run_pages_rebuilt"],
                    "incremental": {**incremental, "added_run": added},
                    "mkdocs_seconds": mkdocs["seconds"],
                    "machine": f"{cpu_model()}, {os.cpu_count()} logical CPUs (shared)",
                    "date": date.today().isoformat()})
    RESULT.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
