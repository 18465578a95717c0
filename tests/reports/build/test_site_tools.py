"""The analysts' tools' pure parts: which pairs the Compare page precomputes, a pair's page
data, and a built table as CSV (tables and pages written here, no engine, no browser)."""
from __future__ import annotations

import csv
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from orchestrator.analysis.compare import SeriesSamples, build_report
from orchestrator.analysis.identity import SeriesIdentity
from orchestrator.analysis.noise import History
from orchestrator.analysis.partner import RunCoverage
from orchestrator.analysis.stats import Thresholds
from orchestrator.errors import NotComparableError
from reports.pages.compare_pairs import choose_pairs, pair_file, pair_payload
from reports.build.table_csv import add_all_csv_downloads, add_csv_downloads, cell_text, table_rows

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def coverage(*series: str) -> list[RunCoverage]:
    """Runs r0 (oldest) … rN, each measuring the series named by its letters; newest first."""
    runs = [RunCoverage(f"r{i}", T0 + timedelta(days=i), frozenset(s)) for i, s in enumerate(series)]
    return runs[::-1]


@pytest.mark.parametrize("runs, baseline, newest, budget, pairs", [
    # Every pair among the newest runs, each after its previous run and the baseline.
    (coverage("ab", "ab", "ab"), None, 8, 100,
     [("r1", "r2"), ("r0", "r1"), ("r0", "r2")]),
    # The configured baseline comes right after each run's previous run.
    (coverage("a", "a", "a", "a"), "r0", 8, 100,
     [("r2", "r3"), ("r0", "r3"), ("r1", "r2"), ("r0", "r2"), ("r0", "r1"), ("r1", "r3")]),
    # Runs that share no series are never paired.
    (coverage("a", "b", "a"), None, 8, 100, [("r0", "r2")]),
    # Older runs, beyond the newest, only against their previous run and the baseline.
    (coverage("a", "a", "a", "a"), None, 2, 100, [("r2", "r3"), ("r1", "r2"), ("r0", "r1")]),
    # The budget (series comparisons) stops the choice; the first pair always fits.
    (coverage("ab", "ab", "ab"), None, 8, 3, [("r1", "r2")]),
    (coverage("abc", "abc"), None, 8, 1, [("r0", "r1")]),
    # A baseline newer than a run is the pair's candidate: the older run is the baseline.
    (coverage("a", "a", "a"), "r2", 8, 100, [("r1", "r2"), ("r0", "r1"), ("r0", "r2")]),
])
def test_choose_pairs(runs, baseline, newest, budget, pairs) -> None:
    plan = choose_pairs(runs, baseline, newest, budget)
    assert list(plan.pairs) == pairs
    assert plan.comparisons <= max(budget, len(runs[0].series))


def test_choose_pairs_says_when_the_budget_stopped_it() -> None:
    assert choose_pairs(coverage("a", "a", "a"), None, 8, 100).complete
    stopped = choose_pairs(coverage("a", "a", "a"), None, 8, 1)
    assert not stopped.complete and stopped.comparisons == 1


def test_pair_files_never_collide() -> None:
    assert pair_file("a_b", "c") != pair_file("a", "b_c")
    assert "__" not in pair_file("a_b", "c")[:-len(".json")].replace("__", "", 1)


def samples(run: str, values: list[float]) -> SeriesSamples:
    identity = {"engine": "leveldb", "workload": "readrandom", "benchmark": "readrandom",
                "params": {"num": 5000}, "threads": 1, "cache_state": "warm",
                "build_variant": "release", "machine_fingerprint": "m"}
    return SeriesSamples(SeriesIdentity("k1", identity, {"engine_version": run}),
                         {"ops_per_sec": values}, {"ops_per_sec": "higher"})


def test_pair_payload_carries_the_core_verdict_and_links_both_runs() -> None:
    report = build_report({"run_id": "A", "engine_version": "1"}, {"run_id": "B", "engine_version": "2"},
                          [samples("1", [100.0, 101, 99, 100])], [samples("2", [80.0, 81, 79, 80])],
                          ["ops_per_sec"], Thresholds(), History())
    points = {("A", "k1"): {"first_seq": 3, "engine": "leveldb", "workload": "readrandom",
                            "benchmark": "readrandom", "threads": 1, "cache_state": "warm",
                            "params": {"num": 5000}, "build_variant": "release"}}
    payload = pair_payload("A", "B", report, points)
    row, = payload["rows"]
    assert row["verdict"] == report.rows[0].comparison.verdict
    assert row["change"] == "-20.0%" and row["base"]["href"] == "runs/A.html#inv-0003"
    assert row["cand"]["href"] == "runs/B.html"  # no point to anchor to: the run page
    assert row["series"].startswith("readrandom · leveldb · 1 thr · warm")
    assert "engine_version: 1 vs 2" in payload["named"]
    assert payload["command"] == "tidemark compare A B"


def test_pair_payload_of_a_refused_pair_is_the_cli_error() -> None:
    payload = pair_payload("A", "B", NotComparableError("nothing in common"), {})
    assert payload == {"base": "A", "cand": "B", "command": "tidemark compare A B",
                       "problem": "nothing in common"}


TABLE = """<table>
<thead><tr><th>Series</th><th>Old</th><th>New</th><th>Δ</th><th>New</th></tr></thead>
<tbody>
<tr><td>read &amp; <code>write</code></td><td><a href="../runs/r1.html#inv-0001">1,234,567</a></td>
<td><a href="../runs/r2.html#inv-0004">980.5</a></td><td><a href="../runs/r2.html#inv-0004">-20.5%</a></td><td>–</td></tr>
<tr><td>seek</td><td>12</td><td><a href="#x">3,4</a></td><td></td><td>7</td></tr>
</tbody></table>"""


def test_table_rows_keep_what_is_shown_and_where_it_links() -> None:
    columns, rows = table_rows(TABLE, "workloads/w.html")
    assert columns == ["Series", "Old", "Old link", "New", "New link", "Δ", "New (2)"]
    assert rows[0] == ["read & write", "1234567", "runs/r1.html#inv-0001", "980.5",
                       "runs/r2.html#inv-0004", "-20.5%", ""]
    assert rows[1] == ["seek", "12", "", "3,4", "workloads/w.html#x", "", "7"]


@pytest.mark.parametrize("cell, text", [
    ("1,234", "1234"), ("-1,234.5", "-1234.5"), ("+12", "+12"), ("12,34", "12,34"),
    ("–", ""), ("<a href='x'>383,171</a> (n=4)", "383,171 (n=4)"), ("a<br>b", "a b"),
    ("&lt;script&gt;", "<script>"),
])
def test_cell_text(cell: str, text: str) -> None:
    assert cell_text(cell) == text


def test_every_table_of_a_page_gets_a_csv_and_a_link(tmp_path: Path) -> None:
    site = tmp_path / "site"
    page = site / "runs" / "r1.html"
    page.parent.mkdir(parents=True)
    page.write_text(f'<h2 id="results">Results</h2>{TABLE}<h2 id="invocations">Inv</h2>'
                    f'<table class="tm-invocations"><tr><td>1</td></tr></table>{TABLE}')
    html = add_csv_downloads(page, site)
    assert html.count('class="tm-csv"') == 3
    assert add_csv_downloads(page, site, html) == html  # a second pass adds nothing
    assert 'href="r1.results.csv" download' in html and 'href="r1.invocations.csv"' not in html
    assert "invocations' Parquet files" in html  # no CSV from the database for this run: where
    assert 'href="../downloads.html"' in html  # the invocations are
    # The table after it never takes the name of the invocations' CSV from the database.
    with (page.parent / "r1.invocations-2.csv").open() as handle:
        assert next(csv.reader(handle))[0] == "Series"
    (site / "runs" / "r1.invocations.csv").write_text("seq\n1\n")
    html = add_csv_downloads(page, site, '<table class="tm-invocations"><tr><td>1</td></tr></table>')
    assert 'href="r1.invocations.csv" download' in html


def test_the_pages_left_get_their_links_once(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "w").mkdir(parents=True)
    for name in ("index.html", "w/a.html", "w/b.html", "404.html"):
        (site / name).write_text(TABLE)
    assert add_all_csv_downloads(site, {site / "w" / "b.html"}) == 2
    assert "tm-csv" in (site / "w" / "a.html").read_text()
    assert "tm-csv" not in (site / "w" / "b.html").read_text() + (site / "404.html").read_text()
    assert (site / "w" / "a.table.csv").is_file()


@pytest.mark.parametrize("name, column", [
    ("ops_per_sec", '"ops_per_sec"'), ("status", '"metric_status"'),
    ("Run_Page", '"metric_Run_Page"'), ('a"b', '"ab"')])
def test_a_metric_never_takes_the_name_of_another_csv_column(name: str, column: str) -> None:
    from orchestrator.store.run_table import metric_column

    assert metric_column(name, {"status", "run_page"}) == column


def test_each_part_of_a_csv_export_keeps_the_query_order_and_its_quoting(tmp_path: Path) -> None:
    """Every part's file holds the rows DuckDB writes for that part alone, in the query's
    order (DuckDB's PARTITION_BY wrote a long part's rows out of order), error text with
    commas, quotes and newlines included; a part without rows gets the header."""
    import duckdb

    from reports.build.downloads import _partitioned

    con = duckdb.connect()
    con.execute("""CREATE TABLE t AS SELECT 'r' || (i % 3) AS part, 3000 - i AS seq,
                   CASE WHEN i % 7 = 0 THEN 'err, "q"' || chr(10) || 'line ' || i END AS error
                   FROM range(3000) r(i)""")
    names = [(part, tmp_path / f"{part}.csv") for part in ("r0", "r1", "r2", "r9")]
    _partitioned(con, "SELECT * FROM t ORDER BY part, seq", tmp_path / "staging", names)
    for part, path in names:
        alone = tmp_path / f"alone-{part}.csv"
        con.execute(f"COPY (SELECT seq, error FROM t WHERE part = '{part}' ORDER BY seq) "
                    f"TO '{alone}' (FORMAT csv, HEADER)")
        assert path.read_bytes() == alone.read_bytes()
    rows = list(csv.reader(names[0][1].open(newline="")))
    assert [int(seq) for seq, _ in rows[1:]] == sorted(int(seq) for seq, _ in rows[1:])
    assert rows[1][1] == "" and rows[6][1] == 'err, "q"\nline 2982'
    assert names[3][1].read_text() == "seq,error\n"
    assert sorted(p.name for p in (tmp_path / "staging").iterdir()) == []
