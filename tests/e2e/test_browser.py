"""The built site in a real browser: Debian's Chromium driven by Playwright, served over HTTP.

The DB holds two real LevelDB runs (a threads sweep, so the scaling page has a curve), a cold
and a warm run (the cache-states page), an imported db_bench log and two hostile runs written
through the store whose names are HTML, the newest and the oldest. Only the newest two runs'
pages are detailed; the others are drawn by one shared page's script from data files. For every
page type: no console errors, plots render with data, local links resolve, and the hostile
names stay text; the headline pages fit 1,400 px without a sideways scrollbar, the imported
run has a page with its numbers, and an older run's page shows every invocation.
"""
from __future__ import annotations

import functools
from datetime import datetime, timezone
import hashlib
import http.server
import re
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlparse

import duckdb
import pytest

from orchestrator.record import Invocation, Metric
from reports.pages.format import slug
from reports.build import run_site
from reports.build.site import build_site
from tests.e2e.fixtures import add_stored_run, tidemark

pytestmark = [pytest.mark.browser, pytest.mark.engine]

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
CACHE_DIR = Path.home() / ".cache" / "tidemark"
SCRIPT = "<script>window.__xss=1;alert(1)</script>"
IMG = "<img src=x onerror=\"window.__xss=1;alert(1)\">"
HOSTILE_RUN = "29991231T235959-xss001"
# The oldest run: an older run, its page drawn by the shared page's script from its data file.
OLD_HOSTILE_RUN = "19991231T235959-xss000"
DETAILED_RUN_PAGES = 2  # the newest two runs' pages in detail, the others older runs' data
SWEEP = "suite.items=[{workload: readrandom, threads: [1, 2], params: {num: 5000}}]"
DATA = Path(__file__).resolve().parents[1] / "data"
IMPORTED = DATA / "leveldb" / "readrandom_t2.stdout"
IMPORT_RUN = f"import-{hashlib.sha256(IMPORTED.read_bytes()).hexdigest()[:12]}"  # history/importer.py
PAGES_WITH_PLOTS = ("index.html", "scaling.html", "workloads/readrandom.html", "fleet/index.html")
# The headline pages a reader opens first: each must fit a 1,400 px window.
HEADLINE_PAGES = ("index.html", "summary.html", "latest.html", "workloads/readrandom.html",
                  "cache-states.html")
PAGE_TYPES = ("index.html", "summary.html", "latest.html", "history.html", "gate.html",
              "percentiles.html",
              "cache-states.html", "scaling.html", "sustained.html", "sweeps.html",
              "variants.html", "workloads/readrandom.html", "machines/index.html",
              "fleet/index.html",
              "runs/index.html", "methodology.html", "matrix.html", "power.html",
              "statistics/noise.html", "statistics/change-points.html", "statistics/ab.html",
              "statistics/targets.html", "statistics/confirmations.html", "statistics/bisects.html",
              "statistics/alerts.html", "commits.html",
              f"workloads/{slug(SCRIPT)}.html", f"runs/{HOSTILE_RUN}.html",
              f"runs/{OLD_HOSTILE_RUN}.html", f"runs/{IMPORT_RUN}.html")


def add_hostile_run(db: Path, run_id: str = HOSTILE_RUN, **run: object) -> None:
    """A run whose workload, benchmark, label, error and notes are HTML that would run script."""
    add_stored_run(db, {
        **run, "run_id": run_id, "label": SCRIPT, "config": {"workload": {"name": SCRIPT}},
        "overrides": [f"workload={IMG}"], "machine_state": {}, "verified": False,
        "notes": [f"unverified: {IMG}"]}, [Invocation(
            run_id=run_id, seq=1, workload=SCRIPT, benchmark=IMG, phase="measured",
            repetition=1, threads=1, params={"num": 5000, "value_size": IMG}, cache_state="warm",
            series_key=f"hostile-{run_id}", status="ok", error="", exit_code=0, wall_s=0.1, user_s=0.1,
            sys_s=0.0, max_rss_kb=1024, started_at=None, ended_at=None,
            command=("db_bench", f"--benchmarks={SCRIPT}"), log_path="",
            metrics=(Metric("ops_per_sec", 1000.0, "ops/s", "higher"),
                     Metric("p50_us", 1.0, "us", "lower")))], "ok")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib's name)
        """No access log on the test's output."""


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    for _ in range(2):
        tidemark(tmp, "run", "engine=leveldb", "suite=tiny", SWEEP, "repetitions=2",
                 f"cache_dir={CACHE_DIR}")
    tidemark(tmp, "run", "-m", "engine=leveldb", "workload=readrandom", "cache=cold,warm",
             "workload.params.num=5000", "repetitions=2", f"cache_dir={CACHE_DIR}")
    tidemark(tmp, "import", str(IMPORTED), "--format", "db_bench_leveldb", "--threads", "2",
             "--machine", "lab-box", "--engine-version", "1.23", "--date", "2024-06-02",
             "--db", str(tmp / "tidemark.duckdb"))
    add_hostile_run(tmp / "tidemark.duckdb")
    add_hostile_run(tmp / "tidemark.duckdb", OLD_HOSTILE_RUN,
                    started_at=datetime(1999, 12, 31, tzinfo=timezone.utc))
    return tmp / "tidemark.duckdb"


@pytest.fixture(scope="module")
def base_url(history: Path) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:  # a few runs, pages of both kinds
        patch.setattr(run_site, "DETAILED_RUN_PAGES", DETAILED_RUN_PAGES)
        site = build_site(history, history.parent / "out").parent
    yield from served(site)


def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on a free local port, for as long as the generator lives."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


def visit(browser, url: str) -> tuple[object, list[str], list[str]]:
    """Open url; return the page, console/page errors and any dialog the page opened."""
    page = browser.new_page()
    errors: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    response = page.goto(url, wait_until="load")
    assert response is not None and response.status == 200, url
    page.wait_for_timeout(300)  # inline plot scripts run on DOMContentLoaded
    return page, errors, dialogs


@pytest.mark.parametrize("path", PAGE_TYPES)
def test_page_loads_without_errors_or_script_injection(browser, base_url: str, path: str) -> None:
    page, errors, dialogs = visit(browser, base_url + path)
    assert errors == [], f"{path}: {errors}"
    assert dialogs == [], f"{path} opened a dialog: {dialogs}"
    assert page.evaluate("window.__xss === undefined"), f"{path} ran injected script"
    page.close()


@pytest.mark.parametrize("path", PAGES_WITH_PLOTS)
def test_plots_render_with_data(browser, base_url: str, path: str) -> None:
    page, errors, _ = visit(browser, base_url + path)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=15000)
    # Points per plot, over its traces: a plot with traces but no points draws nothing.
    points = page.evaluate("Array.from(document.querySelectorAll('.js-plotly-plot'))"
                           ".map(div => div.data.reduce((n, t) => n + (t.x || []).length, 0))")
    assert points and all(n > 0 for n in points), f"{path}: {points}"
    assert errors == []
    page.close()


def test_a_trend_point_carries_its_run_version_range_and_page(browser, base_url: str) -> None:
    """tidemark.js makes each point's hover and click data from the chart's tables of runs
    and anchors: the run, its engine version, the band's min and max at that point, and the
    run page's href with the point's invocation anchor (a page that exists)."""
    page, errors, _ = visit(browser, base_url + "workloads/readrandom.html")
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=15000)
    point = page.evaluate("""(() => {
        const data = document.querySelector('.js-plotly-plot').data;
        return {custom: data[2].customdata[0], high: data[0].y[0], low: data[1].y[0]};
    })()""")
    run, version, low, high, href = point["custom"]
    assert (low, high) == (point["low"], point["high"]) and version, point
    assert re.fullmatch(rf"\.\./runs/{re.escape(run)}\.html#inv-\d+", href), point
    target = browser.new_page()
    assert target.goto(urljoin(base_url + "workloads/readrandom.html", href)).status == 200
    target.close()
    assert errors == []
    page.close()


def test_dashboard_draws_a_small_trend_per_headline_series(browser, base_url: str) -> None:
    page, errors, _ = visit(browser, base_url + "index.html")
    page.wait_for_selector(".tm-spark .js-plotly-plot .main-svg", timeout=15000)
    cards = page.evaluate("""Array.from(document.querySelectorAll('.tm-spark')).map(card => ({
        title: card.querySelector('.tm-spark-title').textContent.trim(),
        points: card.querySelector('.js-plotly-plot').data[2].x.length,
        drawn: card.querySelectorAll('.js-plotly-plot .scatterlayer .point').length}))""")
    assert len(cards) >= 2 and all(c["points"] >= 1 and c["drawn"] >= 1 for c in cards), cards
    # The readrandom series measured twice (two runs of the threads sweep) shows both runs.
    assert any(c["title"].startswith("readrandom") and c["points"] >= 2 for c in cards), cards
    assert errors == []
    page.close()


SIDEWAYS = """() => {
    const wide = [];
    if (document.scrollingElement.scrollWidth > window.innerWidth) wide.push('the page');
    for (const el of document.querySelectorAll('body *')) {
        const overflow = getComputedStyle(el).overflowX;
        if ((overflow === 'auto' || overflow === 'scroll') && el.scrollWidth > el.clientWidth + 1)
            wide.push(el.tagName + ': ' + (el.textContent || '').trim().slice(0, 60));
    }
    return wide;
}"""


@pytest.mark.parametrize("path", HEADLINE_PAGES)
def test_headline_pages_fit_1400_px_without_a_sideways_scrollbar(browser, base_url: str,
                                                                  path: str) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(base_url + path, wait_until="load")
    page.wait_for_timeout(500)  # plots draw after DOMContentLoaded
    assert page.locator("table").count() > 0, f"{path} has no table to check"
    assert page.evaluate(SIDEWAYS) == [], path
    page.close()


def test_an_imported_run_has_its_page_with_its_numbers(browser, base_url: str) -> None:
    page, errors, _ = visit(browser, base_url + f"runs/{IMPORT_RUN}.html")
    body = page.inner_text("body")
    assert "imported from readrandom_t2.stdout (db_bench_leveldb)" in body
    # The log's own result line: 3.224 micros/op over 2 threads is 620,347 ops/s.
    assert "ops_per_sec" in body and "620,347" in body and "micros_per_op" in body
    assert f"tidemark import {IMPORTED}" in body  # how to import it again
    page.close()
    runs, _, _ = visit(browser, base_url + "runs/index.html")
    assert IMPORT_RUN in runs.inner_text("body") and "(imported)" in runs.inner_text("body")
    runs.close()
    assert errors == []


def test_internal_links_resolve(browser, base_url: str) -> None:
    """Every link of every kind of page, as Chromium resolves it, answers 200 from the site's
    server (HEAD requests: fetching every linked download whole took ~80 s)."""
    checked: set[str] = set()
    page = browser.new_page()  # one page, and only the DOM: the other tests wait for the plots
    links: dict[str, list[str]] = {}
    for path in PAGE_TYPES + ("machines/index.html",):
        page.goto(base_url + path, wait_until="domcontentloaded")
        links[path] = page.evaluate("Array.from(document.querySelectorAll('a[href]'))"
                                    ".map(a => a.href)")
    page.close()
    for path, hrefs in links.items():
        for href in hrefs:
            target = urljoin(base_url + path, href).split("#")[0]
            if urlparse(target).netloc != urlparse(base_url).netloc or target in checked:
                continue
            checked.add(target)
            head = urllib.request.Request(target, method="HEAD")  # the status, not the body
            with urllib.request.urlopen(head) as response:  # an HTTPError fails the test
                assert response.status == 200, f"{path} links to {target}: {response.status}"
    assert len(checked) > 10


def test_search_finds_a_workload(browser, base_url: str) -> None:
    page, errors, _ = visit(browser, base_url + "index.html")
    page.click("label.md-search__icon, .md-search__input", timeout=5000)
    # Key by key, as a reader types: Material's search listens to keyboard events.
    page.type("input.md-search__input", "readrandom", delay=50)
    page.wait_for_selector(".md-search-result__item", timeout=30000)
    results = page.inner_text(".md-search-result__list")
    assert "readrandom" in results.lower()
    assert errors == []
    page.close()


def test_hostile_names_show_as_text(browser, base_url: str) -> None:
    for path in (f"runs/{HOSTILE_RUN}.html", f"runs/{OLD_HOSTILE_RUN}.html",
                 f"workloads/{slug(SCRIPT)}.html", "index.html"):
        page, _, dialogs = visit(browser, base_url + path)
        if path.startswith("runs/"):  # an older run's page is drawn from its data file
            page.wait_for_selector("table.tm-invocations tbody tr", timeout=15000)
        body = page.inner_text("body")
        assert SCRIPT in body, path
        assert dialogs == [] and page.evaluate("window.__xss === undefined")
        if path.startswith("runs/"):  # its notes: an <img onerror> shown as text
            assert IMG in body and page.locator("img[src='x']").count() == 0, path
        page.close()


FIRST_HISTORY_TABLE = """() => {
    const marker = document.querySelector('.tm-delta-picker:has(select)');
    let node = marker.nextElementSibling;
    while (node && !(node.matches('table') || node.querySelector('table'))) node = node.nextElementSibling;
    const table = node.matches('table') ? node : node.querySelector('table');
    return {header: Array.from(table.tHead.rows[0].cells).map(c => c.textContent.trim()),
            rows: Array.from(table.tBodies[0].rows).map(r => Array.from(r.cells).map(c => ({
                text: c.textContent.trim(), href: c.querySelector('a') && c.querySelector('a').getAttribute('href')})))};
}"""


def _number(cell: dict) -> float | None:
    try:
        return float(cell["text"].replace(",", ""))
    except ValueError:
        return None


def test_history_delta_between_two_chosen_columns(browser, base_url: str) -> None:
    page, errors, _ = visit(browser, base_url + "history.html")
    selects = page.locator(".tm-delta-picker:has(select)").first.locator("select")
    assert selects.count() == 2 and selects.nth(0).input_value() == "1"
    before = page.evaluate(FIRST_HISTORY_TABLE)
    columns = len(before["header"]) - 2
    assert columns >= 2 and before["header"][-1] == f"Δ% column 1 → {columns}"
    # A series with values in two columns: the Δ% between them, picked the other way round.
    index, a, b = next((i, a, b) for i, row in enumerate(before["rows"])
                       for a in range(1, columns + 1) for b in range(a + 1, columns + 1)
                       if _number(row[a]) and _number(row[b]))
    selects.nth(0).select_option(str(b))
    selects.nth(1).select_option(str(a))
    after = page.evaluate(FIRST_HISTORY_TABLE)
    assert after["header"][-1] == f"Δ% column {b} → {a}"
    row = after["rows"][index]
    assert row[-1]["text"] == f"{(_number(row[a]) / _number(row[b]) - 1) * 100:+.1f}%"
    assert row[-1]["href"] == row[a]["href"]  # the new Δ% links to the run of the "to" column
    assert errors == []
    page.close()


def test_an_older_run_page_is_drawn_from_its_data_file(browser, base_url: str,
                                                      history: Path) -> None:
    """An older run (not among the newest) has no page of its own: its address sends the
    reader, with the anchor, to the page older runs share, whose script draws the run from its
    data file. Its facts are there, every invocation gets its row with the page's columns, a
    number links to its own row, and the anchor lands on that row once it exists."""
    con = duckdb.connect(str(history), read_only=True)
    try:  # the oldest run measured here: an older run
        (run_id, engine, version), = con.execute(
            "SELECT run_id, engine, engine_version FROM runs WHERE source = 'run' AND run_id "
            "NOT LIKE '%xss%' ORDER BY started_at LIMIT 1").fetchall()
        seqs = [seq for (seq,) in con.execute(
            "SELECT seq FROM invocations WHERE run_id = ? ORDER BY seq", [run_id]).fetchall()]
        ops = con.execute("SELECT m.value FROM metrics m JOIN invocations i USING "
                          "(invocation_id) WHERE i.run_id = ? AND m.name = 'ops_per_sec' "
                          "ORDER BY i.seq LIMIT 1", [run_id]).fetchone()[0]
    finally:
        con.close()
    last = f"inv-{seqs[-1]:04d}"
    page = browser.new_page(viewport={"width": 1400, "height": 300})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base_url}runs/{run_id}.html#{last}", wait_until="load")
    page.wait_for_selector(f"table.tm-invocations tbody tr#{last}", timeout=15000)
    assert page.url == f"{base_url}runs/_run.html?run={run_id}#{last}"
    rows = page.evaluate("""Array.from(document.querySelectorAll('table.tm-invocations tbody tr'))
        .map(tr => ({id: tr.id, cells: Array.from(tr.cells).map(td => td.textContent),
                     links: Array.from(tr.querySelectorAll('a')).map(a => a.getAttribute('href'))
        }))""")
    header = page.evaluate("Array.from(document.querySelectorAll('table.tm-invocations th'))"
                           ".map(th => th.textContent)")
    assert [row["id"] for row in rows] == [f"inv-{seq:04d}" for seq in seqs]
    assert all(len(row["cells"]) == len(header) and set(row["links"]) == {f"#{row['id']}"}
               for row in rows), rows[:2]
    assert rows[0]["cells"][header.index("ops/s")] == f"{ops:,.0f}"
    top = page.evaluate(f"document.getElementById('{last}').getBoundingClientRect().top")
    assert page.evaluate("window.scrollY") > 0 and -2 < top < 300, top  # scrolled to it
    article = page.inner_text("article")
    assert article.startswith(f"Run {run_id}") and page.title().startswith(f"Run {run_id}")
    assert f"{engine} {version}" in article and "How to reproduce" in article
    # The command block has Material's copy button, as a built page's code blocks do: the
    # theme's clipboard handler copies it and says so.
    page.click(".tm-reproduce button.md-clipboard")
    page.wait_for_selector(".md-dialog--active", timeout=5000)
    assert page.inner_text(".md-dialog") == "Copied to clipboard"
    # Every table but the invocations (in the Parquet files) has its CSV, as the site's
    # other tables: numbers without separators, a link column beside a column that links.
    csv = page.evaluate("""Promise.all(Array.from(document.querySelectorAll('.tm-csv a'))
        .map(a => fetch(a.href).then(r => r.text())))""")
    assert len(csv) == len(page.query_selector_all("article table")) - 1
    assert csv[0].splitlines()[:2] == ["Field,Value,Value link",
                                       f"Run,{run_id},runs/{run_id}.html"]
    assert f"Invocations ok / failed,{len(seqs)} / 0 of {len(seqs)}," in csv[0]
    assert errors == []
    page.close()
