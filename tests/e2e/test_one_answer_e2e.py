"""One question, one answer: `tidemark compare`/`gate` and the data behind the site's Summary,
Gate, Targets, Noise and workload pages agree on real runs (LevelDB and RocksDB, tiny data).

Every check is agreement between two places that read the same stored repetitions, never a
verdict drawn from this noisy machine's timings: whatever the core decides, the CLI and the
site must decide the same.
"""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from orchestrator.gate import GateConf, load_gate_conf
from reports.data.comparisons import read_verdicts
from reports.pages.noise_table import noise_table
from reports.pages.labels import Labeler
from reports.pages.verdict_words import mark, verdict_css
from reports.pages.workload_page import newest_per_series, workload_page
from reports.build.site import read_results
from reports.pages.tables import describe
from tests.e2e.fixtures import add_other_machine, query, tidemark

pytestmark = pytest.mark.engine

LEVELDB = ["engine=leveldb", "counters=false"]
READRANDOM = [*LEVELDB, "workload=readrandom", "workload.params.num=5000"]
ROCKSDB = ["engine=rocksdb", "counters=false", "workload=readrandom", "workload.params.num=5000"]


def run_id(proc) -> str:
    return proc.stdout.rsplit("run ", 1)[-1].split(":")[0]


def cli_compare(tmp: Path, base: str, cand: str, *extra: str) -> dict:
    proc = tidemark(tmp, "compare", base, cand, "--db", str(tmp / "tidemark.duckdb"),
                    "--format", "json", *extra)
    return json.loads(proc.stdout)


def cli_gate(tmp: Path, *args: str):
    return tidemark(tmp, "gate", "--db", str(tmp / "tidemark.duckdb"), *args, check=False)


def verdict_rows(rows) -> list[tuple]:
    """(series, metric, verdict, threshold) per row, from a JSON report or a Report."""
    out = []
    for row in rows:
        if isinstance(row, dict):
            out.append((row["series_key"], row["metric"], row["comparison"]["verdict"],
                        round(row["comparison"]["threshold"], 6)))
        else:
            out.append((row.series_key, row.metric, row.comparison.verdict,
                        round(row.comparison.threshold, 6)))
    return sorted(out)


def site_verdicts(db: Path, conf: GateConf):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return read_verdicts(con, conf, [])
    finally:
        con.close()


def one_build_pair(tmp: Path) -> tuple[str, str]:
    base = run_id(tidemark(tmp, "run", *READRANDOM))
    return base, run_id(tidemark(tmp, "run", *READRANDOM))


def other_flags_pair(tmp: Path) -> tuple[str, str]:
    # A second CMake flag set of RocksDB 7.8.3 (a flag the build already has, repeated by the
    # build variant: another build key and provenance, the same objects, so ccache serves it).
    base = run_id(tidemark(tmp, "run", *ROCKSDB))
    return base, run_id(tidemark(tmp, "run", *ROCKSDB, "build.cmake_flags=['-DWITH_JNI=OFF']"))


def aa_pair(tmp: Path) -> tuple[str, str]:
    tidemark(tmp, "ab", "--seed", "3", "--", *READRANDOM, f"db={tmp / 'tidemark.duckdb'}",
             f"results_dir={tmp}", f"data_dir={tmp / 'data'}")
    (a, b), = query(tmp, "SELECT run_a, run_b FROM ab_pairs")
    return a, b


def machines_pair(tmp: Path) -> tuple[str, str]:
    base = run_id(tidemark(tmp, "run", *READRANDOM))
    return base, add_other_machine(tmp, base)


@pytest.mark.parametrize("make_pair,named", [
    (one_build_pair, None), (other_flags_pair, "cmake_flags"), (aa_pair, None),
    (machines_pair, "REFUSED")])
def test_cli_and_site_give_the_same_verdicts_and_gate_code(tmp_path, make_pair, named):
    base, cand = make_pair(tmp_path)
    db = tmp_path / "tidemark.duckdb"
    conf_file = tmp_path / "gate.yaml"
    conf_file.write_text(f"baseline: run_id={base}\n")
    conf = load_gate_conf(conf_file)
    site = site_verdicts(db, conf)
    gate = cli_gate(tmp_path, "--config", str(conf_file), "--candidate", cand)
    if named == "REFUSED":  # another machine: refused and named, by the CLI and on the site
        proc = tidemark(tmp_path, "compare", base, cand, "--db", str(db), check=False)
        assert proc.returncode == 2 and "machine_fingerprint" in proc.stderr
        assert gate.returncode == 2 and "machine_fingerprint" in gate.stderr
        assert site.candidate == cand and site.gate is None
        assert "machine_fingerprint" in site.gate_problem
        assert "machine_fingerprint" in site.against_baseline.problem
        return
    assert site.candidate == cand and site.gate is not None and site.gate.partner.configured
    report = cli_compare(tmp_path, base, cand)
    assert verdict_rows(report["rows"]) == verdict_rows(site.gate.report.rows)
    assert verdict_rows(report["rows"]) == verdict_rows(site.against_baseline.report.rows)
    assert gate.returncode == site.gate.decision.code, gate.stdout + gate.stderr
    assert f"gate: {site.gate.decision.word}" in gate.stdout.lower()
    if named:
        assert any(n.startswith(named) for n in report["named"])
        assert any(n.startswith(named) for n in site.gate.report.named)


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    """make bench ×2, a cold/warm/hot × threads sweep, then a nightly-shaped run (LevelDB)."""
    tmp = tmp_path_factory.mktemp("history")
    for _ in range(2):
        tidemark(tmp, "run", *LEVELDB, "suite=tiny")
    tidemark(tmp, "run", "-m", *READRANDOM, "cache=cold,warm,hot", "threads=1,2")
    tidemark(tmp, "run", *LEVELDB, "suite=tiny_nightly")
    return tmp


def test_history_pages_and_cli_agree_on_every_shared_series(history):
    db = history / "tidemark.duckdb"
    conf = load_gate_conf(Path(__file__).resolve().parents[2] / "conf" / "gate" / "default.yaml")
    results = read_results(db, conf)
    verdicts, points = results.verdicts, results.points
    runs = [r for (r,) in query(history, "SELECT run_id FROM runs ORDER BY started_at, run_id")]
    nightly, bench2 = runs[-1], runs[1]
    # The summary and the gate compare the nightly run with the last full run, not a sweep run.
    assert verdicts.candidate == nightly and verdicts.previous.base == bench2
    assert verdicts.gate.report.base["run_id"] == bench2 and not verdicts.gate.partner.configured
    # Summary (previous comparable) == `tidemark compare` == Gate page == `tidemark gate`.
    cli = cli_compare(history, bench2, nightly)
    assert verdict_rows(cli["rows"]) == verdict_rows(verdicts.previous.report.rows) == \
        verdict_rows(verdicts.gate.report.rows)
    gate = cli_gate(history, "--targets")
    assert gate.returncode == verdicts.gate.decision.code, gate.stdout + gate.stderr
    assert "previous comparable run" in gate.stdout
    # Targets: each series judged on its own, as `tidemark gate --targets` judged it.
    printed = {line for line in gate.stdout.splitlines() if line.startswith("target ")}
    assert printed and printed == {f"target {t.series}: {t.target} → {t.status}"
                                   for t in verdicts.targets[nightly]}
    # Workload pages: the verdict of each series of the nightly run is the summary's.
    by_key = {row.series_key: row.comparison.verdict for row in verdicts.previous.report.rows}
    latest = points[points["run_id"] == nightly]
    for workload in latest["workload"].unique():
        page = workload_page(workload, points, verdicts.latest)
        mine = latest[latest["workload"] == workload]
        labeler = Labeler.of(newest_per_series(points[points["workload"] == workload])
                             .to_dict("records"))
        labels = {labeler.label(p): p["series_key"] for p in mine.to_dict("records")}
        assert len(labels) == len(mine)  # rows of one workload page are told apart
        judged = [row for row in page["latest"].rows if labels[row[0]] in by_key]
        assert len(judged) == sum(1 for k in by_key if k in set(mine["series_key"]))
        for row in judged:  # the Verdict column says the summary's verdict, in its colour
            assert row[3].text == mark(by_key[labels[row[0]]])
            assert row[3].css == verdict_css(by_key[labels[row[0]]])
    # Noise page and Methodology: the threshold of each series is the one the gate used.
    table = noise_table(points, results.aa_pairs, conf.thresholds, "")
    thresholds = {row[0].text: row[-1] for row in table.rows}
    for row in verdicts.gate.report.rows:
        point = latest[latest["series_key"] == row.series_key].iloc[0]
        assert thresholds[f"{point['workload']} · {describe(point)}"] == \
            f"{row.comparison.threshold * 100:.1f}%"
