"""The analysts' tools of the built site in a real browser (Debian's Chromium through
Playwright, the site served over HTTP): the Compare page gives the verdicts `tidemark compare`
prints for the same pair, a table's CSV download parses, the SQL page runs DuckDB-WASM over the
published Parquet files.

The DB holds three real LevelDB runs (4 repetitions each; the first labelled as the configured
baseline) and one hostile run whose names are HTML. Verdicts drawn from these timings are never
asserted as values: the page must equal the CLI, whatever the noise made of them.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from orchestrator.gate import GateConf
from reports.build import history_parquet
from reports.build.site import build_site
from reports.pages.sql_page import EXAMPLES
from tests.e2e.fixtures import tidemark
from tests.e2e.test_browser import (CACHE_DIR, SCRIPT, add_hostile_run,  # noqa: F401 - a fixture
                                browser, served)

pytestmark = [pytest.mark.browser, pytest.mark.engine]

ROWS_JS = """() => Array.from(document.querySelectorAll('.tm-compare-result tbody tr')).map(tr => ({
    key: tr.dataset.seriesKey, metric: tr.dataset.metric,
    verdict: tr.querySelector('.tm-verdict').textContent,
    change: tr.cells[2].textContent,
    links: Array.from(tr.querySelectorAll('a')).map(a => a.getAttribute('href'))}))"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results folder: tidemark.duckdb and out/site."""
    tmp = tmp_path_factory.mktemp("tools")
    for _ in range(3):
        tidemark(tmp, "run", "engine=leveldb", "suite=tiny", "repetitions=4",
                 f"cache_dir={CACHE_DIR}")
    tidemark(tmp, "label", "latest~2", "baseline", "--db", str(tmp / "tidemark.duckdb"))
    add_hostile_run(tmp / "tidemark.duckdb")
    with pytest.MonkeyPatch.context() as patch:  # the metrics in two files, as a long history's
        patch.setattr(history_parquet, "BLOCK_RUNS", 2)
        build_site(tmp / "tidemark.duckdb", tmp / "out", GateConf(baseline="label=baseline"))
    return tmp


@pytest.fixture(scope="module")
def base_url(built: Path) -> Iterator[str]:
    yield from served(built / "out" / "site")


def open_page(browser, url: str) -> tuple[object, list[str]]:
    """The page at 1,400 px; its errors list gets console errors, page errors, dialogs and any
    request to another host (the site serves everything it uses itself)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    errors: list[str] = []
    origin = url.split("/", 3)[:3]
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: (errors.append(dialog.message), dialog.dismiss()))
    page.context.on("request", lambda request: None if request.url.split("/", 3)[:3] == origin
                    or request.url.startswith(("blob:", "data:")) else
                    errors.append(f"request to another host: {request.url}"))
    response = page.goto(url, wait_until="load")
    assert response is not None and response.status == 200, url
    return page, errors


def runs_oldest_first(built: Path) -> list[str]:
    con = duckdb.connect(str(built / "tidemark.duckdb"), read_only=True)
    try:
        return [r for (r,) in con.execute("SELECT run_id FROM runs WHERE run_id NOT LIKE '2999%' "
                                          "ORDER BY started_at").fetchall()]
    finally:
        con.close()


def cli_rows(built: Path, base: str, cand: str) -> dict[tuple[str, str], dict]:
    """`tidemark compare BASE CAND --format json`, per (series key, metric)."""
    out = tidemark(built, "compare", base, cand, "--db", str(built / "tidemark.duckdb"),
                   "--format", "json").stdout
    return {(r["series_key"], r["metric"]): r for r in json.loads(out)["rows"]}


def shown_rows(page) -> dict[tuple[str, str], dict]:
    page.wait_for_function("['shown', 'problem'].includes("
                           "document.querySelector('.tm-compare').dataset.state)", timeout=15000)
    return {(r["key"], r["metric"]): r for r in page.evaluate(ROWS_JS)}


def assert_same_as_cli(built: Path, page, base: str, cand: str) -> None:
    shown, cli = shown_rows(page), cli_rows(built, base, cand)
    assert shown.keys() == cli.keys() and shown, (shown.keys(), cli.keys())
    for key, row in cli.items():
        c = row["comparison"]
        assert shown[key]["verdict"] == c["verdict"], key
        expected = "–" if c["change_pct"] is None else f"{c['change_pct']:+.1f}%"
        assert shown[key]["change"] == expected, key
        base_link, cand_link = shown[key]["links"]
        assert base_link.startswith(f"runs/{base}.html#inv-"), base_link
        assert cand_link.startswith(f"runs/{cand}.html#inv-"), cand_link


def test_compare_two_picked_runs_equals_the_cli(browser, base_url: str, built: Path) -> None:
    first, second, third = runs_oldest_first(built)
    page, errors = open_page(browser, base_url + "compare.html")
    selects = page.locator(".tm-compare-controls select")
    selects.nth(0).select_option(first)
    selects.nth(1).select_option(third)
    assert_same_as_cli(built, page, first, third)
    # The choice is in the address: opening it again shows the same pair.
    assert f"base={first}" in page.url and f"cand={third}" in page.url
    again, _ = open_page(browser, page.url)
    assert_same_as_cli(built, again, first, third)
    assert errors == []
    page.close()
    again.close()


def test_candidate_against_the_configured_baseline_and_its_previous_run(
        browser, base_url: str, built: Path) -> None:
    first, second, third = runs_oldest_first(built)
    page, errors = open_page(browser, base_url + f"compare.html#base={first}&cand={second}")
    page.locator(".tm-compare-controls select").nth(1).select_option(third)
    page.get_by_role("button", name="Candidate vs its previous run").click()
    assert f"base={second}" in page.url
    assert_same_as_cli(built, page, second, third)
    page.get_by_role("button", name="Candidate vs the configured baseline").click()
    assert f"base={first}" in page.url  # the run labelled baseline
    assert_same_as_cli(built, page, first, third)
    assert errors == []
    page.close()


def test_a_pair_not_precomputed_shows_its_command(browser, base_url: str, built: Path) -> None:
    first, _, third = runs_oldest_first(built)
    page, errors = open_page(browser, base_url + f"compare.html#base={third}&cand={first}")
    page.wait_for_function("document.querySelector('.tm-compare').dataset.state === "
                           "'not-computed'", timeout=15000)
    text = page.inner_text(".tm-compare-result")
    assert f"tidemark compare {third} {first}" in text
    page.get_by_role("link", name="swap baseline and candidate").click()
    assert_same_as_cli(built, page, first, third)
    # The hostile run's names are in the run list as text, never markup.
    options = page.evaluate("Array.from(document.querySelectorAll('.tm-compare-controls option'))"
                            ".map(o => o.textContent).join(' ')")
    assert SCRIPT in options
    assert page.evaluate("window.__xss === undefined") and errors == []
    page.close()


def download(page, link) -> Path:
    with page.expect_download() as info:
        link.click()
    return Path(info.value.path())


TABLE_BEFORE_LINK = """link => {
    const node = link.closest('p').previousElementSibling;
    const table = node.matches('table') ? node : node.querySelector('table');
    return {header: Array.from(table.tHead.rows[0].cells).map(c => c.textContent.trim()),
            rows: table.tBodies[0].rows.length};
}"""


def test_a_table_csv_download_parses(browser, base_url: str, built: Path) -> None:
    page, errors = open_page(browser, base_url + "summary.html")
    link = page.get_by_role("link", name="Download this table as CSV").first
    shown = link.evaluate(TABLE_BEFORE_LINK)
    table = pd.read_csv(download(page, link))
    # The table's columns, each that links followed by its run page's address.
    assert [c for c in table.columns if not c.endswith(" link")] == shown["header"]
    assert len(table) == shown["rows"] > 0
    links = [c for c in table.columns if c.endswith(" link")]
    assert links and table[links[0]].str.match(r"runs/[^/]+\.html#inv-\d{4}$").all()
    # Numbers are numbers (no thousands separators): medians of ops/s are in the table.
    assert any(pd.api.types.is_numeric_dtype(table[c]) and table[c].max() > 1000
               for c in table.columns)
    assert errors == []
    page.close()


def test_raw_repetitions_and_invocations_as_csv(browser, base_url: str, built: Path) -> None:
    page, _ = open_page(browser, base_url + "downloads.html")
    row = page.locator("tr", has=page.locator("td", has_text="readrandom")).first
    series = pd.read_csv(download(page, row.locator("a[href^='data/series/']")))
    assert {"run_id", "repetition", "status", "ops_per_sec", "run_page"} <= set(series.columns)
    assert set(series["run_id"]) >= set(runs_oldest_first(built))
    page.close()
    run = runs_oldest_first(built)[-1]
    page, _ = open_page(browser, base_url + f"runs/{run}.html")
    link = page.locator("a[href$='.invocations.csv']")
    invocations = pd.read_csv(download(page, link))
    assert {"seq", "phase", "status", "ops_per_sec"} <= set(invocations.columns)
    assert (invocations["phase"] == "measured").sum() == 8  # 2 workloads × 4 repetitions
    page.close()


def test_sql_page_queries_the_published_parquet(browser, base_url: str, built: Path) -> None:
    page, errors = open_page(browser, base_url + "sql.html")
    page.wait_for_selector(".tm-sql[data-ready='yes']", state="attached", timeout=120000)
    page.click("#tm-sql-run")  # the first example: median ops/s of every series
    page.wait_for_selector("#tm-sql-result tbody tr", timeout=60000)
    header = page.evaluate("Array.from(document.querySelectorAll('#tm-sql-result th'))"
                           ".map(th => th.textContent)")
    assert "median_ops_per_sec" in header
    # The same SQL on the results DB itself gives the same rows.
    con = duckdb.connect(str(built / "tidemark.duckdb"), read_only=True)
    expected = con.execute(EXAMPLES[0].sql).fetchall()
    stored = con.execute("SELECT count(*) FROM invocations").fetchone()[0]
    metrics = con.execute("SELECT count(*), sum(value) FROM metrics").fetchone()
    con.close()
    shown = page.evaluate("Array.from(document.querySelectorAll('#tm-sql-result tbody tr'))"
                          ".map(tr => tr.cells[0].textContent)")
    assert sorted(shown) == sorted(row[0] for row in expected) and shown
    page.wait_for_selector("#tm-sql-chart .main-svg", timeout=15000)
    page.fill("#tm-sql-query", "SELECT count(*) AS invocations FROM invocations")
    page.click("#tm-sql-run")
    page.wait_for_function("document.querySelector('#tm-sql-result th').textContent === "
                           "'invocations'", timeout=30000)
    assert page.inner_text("#tm-sql-result tbody td") == f"{stored:,}"
    # The metrics table is a view over its files (one per block of runs): every row, once.
    page.fill("#tm-sql-query", "SELECT count(*) AS metric_rows, sum(value)::VARCHAR AS total "
                               "FROM metrics")
    page.click("#tm-sql-run")
    page.wait_for_function("document.querySelector('#tm-sql-result th').textContent === "
                           "'metric_rows'", timeout=30000)
    cells = page.evaluate("Array.from(document.querySelectorAll('#tm-sql-result tbody td'))"
                          ".map(td => td.textContent)")
    assert cells[0] == f"{metrics[0]:,}" and float(cells[1]) == pytest.approx(metrics[1])
    manifest = json.loads((built / "out" / "site" / "data" / "manifest.json").read_text())
    assert [len(t["files"]) for t in manifest["tables"] if t["name"] == "metrics"] == [2]
    # Nothing was asked of another host: every request stayed on the site.
    assert errors == []
    page.close()


def test_every_precomputed_pair_is_what_compare_gives(built: Path) -> None:
    """Each pair file holds the core's answer to `tidemark compare BASE CAND` (read in-process:
    the same functions the CLI calls), row by row."""
    from orchestrator import verdicts
    from orchestrator.errors import UserError
    from orchestrator.store import connect

    folder = built / "out" / "site" / "compare"
    index = json.loads((folder / "index.json").read_text())
    assert len(index["pairs"]) >= 3 and index["complete"]
    gate = GateConf()
    con = connect(built / "tidemark.duckdb", read_only=True)
    try:
        for base, cand, name in index["pairs"]:
            pair = json.loads((folder / name).read_text())
            try:
                report = verdicts.compare_runs(con, base, cand, gate.summary_metrics,
                                               gate.thresholds)
            except UserError as error:
                assert pair["problem"] == str(error)
                continue
            assert [(r["series_key"], r["metric"], r["verdict"]) for r in pair["rows"]] == \
                [(r.series_key, r.metric, r.comparison.verdict) for r in report.rows]
    finally:
        con.close()


def test_pages_opened_from_disk_say_how_to_serve_them(browser, built: Path) -> None:
    """DuckDB-WASM and the pair files need HTTP: from file:// the pages say so, never hang."""
    site = built / "out" / "site"
    page = browser.new_page()
    page.goto((site / "sql.html").as_uri())
    assert "serve the site over HTTP" in page.inner_text("#tm-sql-status")
    page.goto((site / "compare.html").as_uri())
    page.wait_for_selector(".tm-compare .tm-error", timeout=10000)
    assert "Serve the site over HTTP" in page.inner_text(".tm-compare")
    page.close()
