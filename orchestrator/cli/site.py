"""`tidemark site`: the report site from the results DB (reports/build/site.py builds it)."""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
from pathlib import Path

from .output import console


def site_command(argv: list[str]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    # Before numpy loads OpenBLAS (orchestrator.gate imports it): its matrices here are tiny, and after
    # each call its second thread spun, waiting for more, on the core the build's other
    # processes need (0.1 CPU-s of a build).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from ..gate import DEFAULT_GATE, load_gate_conf

    parser = argparse.ArgumentParser(prog="tidemark site",
                                     description="Render the report site from the results DB.")
    parser.add_argument("--db", default="results/tidemark.duckdb", help="results database")
    parser.add_argument("--out", default="build", help="folder for docs/ and site/")
    parser.add_argument("--baseline", help="run selector the summary and Gate page compare with "
                        "(default: `baseline` in conf/gate/default.yaml)")
    args = parser.parse_args(argv)
    gate = load_gate_conf(DEFAULT_GATE)
    if args.baseline is not None:
        gate = dataclasses.replace(gate, baseline=args.baseline)
    # The DB's copy is a kernel copy (no GIL): taken in a thread while the site's modules
    # import (0.7 s). The thread has ended before the build forks its processes. MkDocs' child
    # imports meanwhile too (0.5 CPU-s), on the core the copy leaves idle, not later beside
    # the build's first reads.
    from reports.build import mkdocs_child, site_snapshot
    db, out = Path(args.db), Path(args.out)
    pool, mkdocs = ThreadPoolExecutor(1), None
    try:
        try:
            copy = pool.submit(site_snapshot.take_snapshot, db, out)
            if db.exists():  # else the build says so, leaving no folder behind
                with contextlib.suppress(OSError):  # --out not a folder: the build says so
                    mkdocs = mkdocs_child.start_mkdocs(out / "mkdocs.log")
            from reports.build.site import BuildTimes, build_site
        finally:
            pool.shutdown()  # waits for the copy
        times = BuildTimes()
        index = build_site(db, out, gate, times, copy.result, mkdocs)  # it ends the child
    except BaseException:
        if mkdocs is not None:  # stopped before the build took it
            mkdocs_child.stop_mkdocs(mkdocs)
        raise
    console.print(f"site: {index} ({times.summary()})", soft_wrap=True, markup=False)
