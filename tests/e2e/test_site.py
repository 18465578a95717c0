"""The report site end to end: two real LevelDB runs, one hostile run written through the store
API, then `build_site` and the real `mkdocs build`; checks are made on the generated HTML."""
from __future__ import annotations

import gc
import re
import subprocess
from pathlib import Path

import duckdb
import pytest

from orchestrator.errors import UserError
from orchestrator.gate import GateConf
from orchestrator.record import Invocation, Metric
from orchestrator.store import Store
from reports.pages.format import slug
from reports.build.mkdocs_child import mkdocs_building
from reports.build.site import build_site
from tests.e2e.fixtures import TIDEMARK, add_stored_run, tidemark

pytestmark = pytest.mark.engine

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LINK = "1.23 [see](javascript:alert(1))"  # Markdown, not HTML: must not become a link
HOSTILE_RUN = "29991231T235959-bad001"
CACHE_DIR = Path.home() / ".cache" / "tidemark"  # the real build cache: LevelDB is built once
HREF = re.compile(r'(?:href|src)="([^"]*)"')


def _invocation(seq: int, status: str, error: str, metrics: tuple[Metric, ...]) -> Invocation:
    return Invocation(
        run_id=HOSTILE_RUN, seq=seq, workload=SCRIPT, benchmark=IMG, phase="measured",
        repetition=seq, threads=1, params={"num": 5000, "value_size": "<b>|x</b>"},
        cache_state="warm", series_key="hostile-series", status=status, error=error,
        exit_code=0 if status == "ok" else 1, wall_s=0.5, user_s=0.4, sys_s=0.1,
        max_rss_kb=2048, started_at="2999-12-31T23:59:59Z", ended_at="2999-12-31T23:59:59Z",
        command=("db_bench", f"--benchmarks={SCRIPT}", "--db=/tmp/a|b"),
        log_path=f"/tmp/{IMG}/0001.stdout", metrics=metrics,
        notes=(f"note {SCRIPT}",), conditions={"cpus_allowed": [0, 1], "residency_pct": 100.0})


def add_hostile_run(db: Path) -> None:
    """A run whose names, params, error, command and log path are all HTML and Markdown."""
    ok = (Metric("ops_per_sec", 1234.0, "ops/s", "higher"), Metric("p50_us", 1.5, "us", "lower"),
          Metric("p99_us", 9.5, "us", "lower"))
    add_stored_run(db, {
        "run_id": HOSTILE_RUN, "label": f"{SCRIPT} | label", "engine_version": LINK,
        "config": {"workload": {"name": SCRIPT}}, "overrides": [f"workload={IMG}"],
        "machine_state": {"before": {"loadavg": [0.1, 0.2, 0.3]}}, "verified": True,
        "notes": [f"note {IMG}"]}, [
        _invocation(1, "ok", "", ok),
        _invocation(2, "failed", f"exit code 1: {IMG} | pipe\n\nnext line", ())], "partial")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("site")
    for note in ("note=first run: the reference", "note="):
        tidemark(tmp, "run", "engine=leveldb", "workload=readrandom", "repetitions=2",
                 "workload.params.num=5000", f"cache_dir={CACHE_DIR}", "label=nightly", note)
    noted = tidemark(tmp, "note", "latest", "second run: same build, again",
                     "--db", str(tmp / "tidemark.duckdb"))
    assert "note added (1 note)" in noted.stdout
    # The first run becomes the configured baseline (label=baseline) after the fact.
    labelled = tidemark(tmp, "label", "latest~1", "baseline", "--db", str(tmp / "tidemark.duckdb"))
    assert "label 'baseline' (was 'nightly')" in labelled.stdout
    add_hostile_run(tmp / "tidemark.duckdb")
    index = build_site(tmp / "tidemark.duckdb", tmp / "out", GateConf(baseline="label=baseline"))
    assert index == tmp / "out" / "site" / "index.html"
    return index.parent


def html_pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def linking_pages(site: Path) -> list[Path]:
    """Pages with relative links (MkDocs' 404 page uses root-absolute ones, by design)."""
    return [page for page in html_pages(site) if page.name != "404.html"]


def test_site_has_home_workload_run_pages_and_offline_plotly(site: Path) -> None:
    assert (site / "index.html").is_file()
    assert (site / "methodology.html").is_file()
    assert (site / "runs" / "index.html").is_file()
    assert (site / "assets" / "plotly.min.js").stat().st_size > 1_000_000
    page = (site / "workloads" / "readrandom.html").read_text()
    assert 'class="plotly-graph-div"' in page
    assert "cdn.plot.ly" not in page and "unpkg.com" not in page


def test_every_local_link_and_anchor_resolves(site: Path) -> None:
    for page in linking_pages(site):
        for href in HREF.findall(page.read_text()):
            if href.startswith(("http://", "https://", "mailto:", "data:")) or href.startswith("#"):
                continue
            path, _, fragment = href.partition("#")
            target = (page.parent / path).resolve()
            assert target.is_file(), f"{page.relative_to(site)} links to missing {href}"
            if fragment.startswith("inv-"):
                assert f'id="{fragment}"' in target.read_text(), f"{href} has no anchor"


def test_home_links_to_workloads_runs_and_latest_run(site: Path) -> None:
    home = (site / "index.html").read_text()
    assert 'href="workloads/readrandom.html"' in home
    assert 'href="runs/index.html"' in home
    assert f'href="runs/{HOSTILE_RUN}.html"' in home


def test_trend_table_shows_each_series_newest_values_first(site: Path) -> None:
    page = (site / "workloads" / "readrandom.html").read_text()
    trend = page.split('id="trend"', 1)[1]
    table = trend[trend.index("<table>"):trend.index("</table>")]
    first_row = table[table.index("<tbody>"):].split("</tr>")[0]
    # Two runs of the series: the newest with its change from the one before, then that one.
    cells = re.findall(r'<a [^>]*href="../runs/([^"#]+)\.html#inv-\d+"[^>]*>([^<]+)</a>', first_row)
    assert len(cells) == 2 and re.search(r"\([+-]\d+\.\d%\)$", cells[0][1])
    assert first_row.rstrip().endswith(">2</td>")  # two runs of the series


def test_notes_are_shown_where_the_numbers_are(site: Path) -> None:
    first, second = _run_with_label(site, "baseline"), _run_with_label(site, "nightly")
    assert "first run: the reference" in (site / "runs" / f"{first}.html").read_text()
    assert "second run: same build, again" in (site / "runs" / f"{second}.html").read_text()
    workload = (site / "workloads" / "readrandom.html").read_text()
    assert "second run: same build, again" in workload  # its newest run's note
    assert "untimed fillseq" in workload  # the workload config's note
    summary = (site / "summary.html").read_text()  # both compared runs' notes
    assert "first run: the reference" in summary and "second run: same build, again" in summary
    # The header says when: its line comes from a script every page loads.
    assert "Generated " in (site / "assets" / "generated.js").read_text()
    assert '<script src="assets/generated.js">' in (site / "index.html").read_text()


def test_hostile_strings_are_text_everywhere(site: Path) -> None:
    for page in html_pages(site):
        text = page.read_text()
        assert SCRIPT not in text, page
        assert IMG not in text, page
        assert "<b>|x</b>" not in text, page
        # Shown as text is fine; a link to it is not.
        assert not re.search(r"href\s*=\s*[\"']?\s*javascript:", text, re.I), page
        title = re.search(r"<title>(.*?)</title>", text, re.S)
        assert title and "<" not in title.group(1) and ">" not in title.group(1), page
    run_page = (site / "runs" / f"{HOSTILE_RUN}.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in run_page
    assert "&lt;img src=x onerror=alert(1)&gt;" in run_page  # the failed invocation's error
    assert 'id="inv-0002"' in run_page and "failed" in run_page
    workload_page = site / "workloads" / f"{slug(SCRIPT)}.html"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in workload_page.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (site / "index.html").read_text()


def test_cli_site_command_prints_the_index(site: Path, tmp_path: Path) -> None:
    db = site.parents[1] / "tidemark.duckdb"
    proc = subprocess.run([TIDEMARK, "site", "--db", str(db), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert "index.html" in proc.stdout


def test_an_out_folder_that_cannot_be_made_is_one_line_naming_it(site: Path,
                                                                  tmp_path: Path) -> None:
    db = site.parents[1] / "tidemark.duckdb"
    (tmp_path / "a-file").write_text("")
    proc = subprocess.run([TIDEMARK, "site", "--db", str(db), "--out",
                           str(tmp_path / "a-file" / "out")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"tidemark: error: cannot make the site's folder {tmp_path / 'a-file' / 'out'} (Not a "
        f"directory); pass --out a folder that can be written"]


def test_missing_and_empty_databases_are_one_line_user_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="run 'tidemark run' first"):
        build_site(tmp_path / "absent.duckdb", tmp_path / "out")
    Store(tmp_path / "empty.duckdb").close()
    with pytest.raises(UserError, match="no runs") as caught:
        build_site(tmp_path / "empty.duckdb", tmp_path / "out")
    assert "\n" not in str(caught.value)


def test_a_build_that_stops_early_ends_its_waiting_mkdocs_child(tmp_path: Path,
                                                                monkeypatch) -> None:
    from reports.build import mkdocs_child
    started: list[subprocess.Popen] = []

    def start(log_path: Path) -> subprocess.Popen:
        started.append(original_start(log_path))
        return started[-1]

    original_start = mkdocs_child.start_mkdocs
    monkeypatch.setattr(mkdocs_child, "start_mkdocs", start)
    Store(tmp_path / "empty.duckdb").close()
    with pytest.raises(UserError, match="no runs"):
        build_site(tmp_path / "empty.duckdb", tmp_path / "out")
    assert len(started) == 1 and started[0].poll() is not None  # killed, not left waiting
    assert not (tmp_path / "out" / "site").exists()
    assert gc.isenabled()  # off during the build only (site._without_cycle_collection)


def test_a_build_that_cannot_fork_ends_the_mkdocs_child_it_was_given(site: Path,
                                                                     tmp_path: Path,
                                                                     monkeypatch) -> None:
    """The CLI starts MkDocs' child before the build: a build that fails before telling it
    the config (here: no process can be forked) ends it all the same."""
    from reports.build import forked, mkdocs_child

    def cannot_fork(*_: object, **__: object) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    child = mkdocs_child.start_mkdocs(tmp_path / "out" / "mkdocs.log")
    monkeypatch.setattr(forked, "start", cannot_fork)
    with pytest.raises(BlockingIOError):
        build_site(site.parents[1] / "tidemark.duckdb", tmp_path / "out", mkdocs=child)
    assert child.poll() is not None  # killed, not left waiting on its stdin


def test_failed_mkdocs_build_is_a_one_line_user_error(tmp_path: Path) -> None:
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: x\ntheme:\n  name: no-such-theme\n")
    with pytest.raises(UserError, match="mkdocs build failed") as caught:
        with mkdocs_building(config):
            pass
    assert "\n" not in str(caught.value)


def _run_with_label(site: Path, label: str) -> str:
    con = duckdb.connect(str(site.parents[1] / "tidemark.duckdb"), read_only=True)
    try:
        return con.execute("SELECT run_id FROM runs WHERE label = ?", [label]).fetchone()[0]
    finally:
        con.close()


def test_summary_and_gate_compare_with_the_configured_baseline(site: Path) -> None:
    baseline, candidate = _run_with_label(site, "baseline"), _run_with_label(site, "nightly")
    summary = (site / "summary.html").read_text()
    against = summary.split('id="against-the-configured-baseline"', 1)[1]
    assert "<code>label=baseline</code>" in against and f"runs/{baseline}.html" in against
    assert re.search(r"\d+ regressions?</strong>, <strong>\d+ improvements?</strong>(, \d+ [a-z ]+)*"
                     r", over 1 series", against), "the baseline section counts verdicts over the common series"
    assert "Against the configured baseline" in summary and "<table>" in against
    gate = (site / "gate.html").read_text()
    assert f"tidemark gate --baseline label=baseline --candidate {candidate}" in gate
    assert "configured baseline" in gate


def test_a_baseline_that_matches_no_run_is_named_and_a_malformed_one_refused(site: Path) -> None:
    from orchestrator.gate import GateConf
    from orchestrator.store import connect
    from orchestrator.verdicts import resolve_baseline
    from reports.build.site import read_results

    con = connect(site.parents[1] / "tidemark.duckdb", read_only=True)
    try:
        run, problem = resolve_baseline(con, "label=release-9")
        assert run is None and "'label=release-9' matches 0 run(s)" in problem
        assert resolve_baseline(con, "")[1].startswith("no baseline is configured")
    finally:
        con.close()
    with pytest.raises(UserError, match="unknown selector key 'colour'"):
        read_results(site.parents[1] / "tidemark.duckdb", GateConf(baseline="colour=blue"))
