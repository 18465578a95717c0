"""An older run's page as data (pure): the blocks the site's script draws into the one page all
older runs share (runs/_run.html, site/assets/tidemark.js), from the same context a detailed run
page is rendered from (run_page.run_page).

A long history's run pages were most of its site build: each page's Markdown rendered, converted
by MkDocs' pipeline, put in the theme's shell and written with a CSV file per table (10,000 runs:
~135 CPU-s of ~300). An older run now costs a gzipped JSON file of its facts and invocation
rows, and a page at its address that sends the reader to the shared page (run_site.stub_html).
The newest runs and imported runs keep their pages in Markdown: the newest show each invocation
in detail, an imported run is found by its page in the site's search.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from .format import Link, built_href, safe_href, shown
from .tables import Table

# Headings and words of the page, in the order the page shows them (run.md.j2 says the same
# for a detailed page, with each invocation's detail).
RESULTS_TEXT = ("This run's medians are in the trend tables of its workloads' pages (each cell "
                "links here); every invocation is listed below.")
INVOCATIONS_TEXT = ("Each invocation is one engine process. Setup and warm-up invocations are "
                    "listed but never counted in statistics. The command line, conditions and log "
                    "of each invocation are shown on the pages of the newest runs only; they are "
                    "in the results database for every run, and every invocation is in the "
                    "invocations' Parquet files (see Downloads).")
UNVERIFIED_TEXT = ("The host did not match the machine profile this run asked for; its numbers "
                   "are kept but flagged. See the notes below.")


def cell_data(value: Any, own_page: str) -> str | list[str]:
    """A table cell as the script draws it: text, or [text, href] for a link (a page link as
    MkDocs writes it; one to an anchor of this run's own page keeps only the anchor)."""
    value = shown(value)
    if isinstance(value, Link):
        href = built_href(safe_href(value.href))
        path, hash_, fragment = href.partition("#")
        if fragment and path.rsplit("/", 1)[-1] == own_page:
            href = hash_ + fragment
        return [value.text, href]
    return str(value)


def table_data(table: Table, own_page: str, csv: list[str]) -> dict[str, Any]:
    """A tables.Table for the script: its columns, which are right-aligned, its rows, and its
    CSV download ([file name, text])."""
    return {"table": [list(table.columns), table.right_aligned,
                      [[cell_data(value, own_page) for value in row] for row in table.rows]],
            "csv": csv}


def older_run_document(page: dict[str, Any], own_page: str,
                       csv_of: Callable[[Table], str]) -> dict[str, Any]:
    """The blocks of an older run's page from its run_page context (`own_page`: the file name
    of its address, runs/<own_page>; `csv_of`: a table's CSV text, as the site writes every
    other table's)."""
    stem = own_page.removesuffix(".html")

    def table(t: Table, name: str) -> dict[str, Any]:
        return table_data(t, own_page, [f"{stem}.{name}.csv", csv_of(t)])

    blocks: list[dict[str, Any]] = [table(Table(("Field", "Value"), [list(r) for r in
                                                                     page["summary"]],
                                                (False, False)), "run")]
    if page["caveat"]:
        blocks.append({"note": "warning", "title": "Not a release run", "text": page["caveat"]})
    if not page["verified"]:
        blocks.append({"note": "warning", "title": "Unverified run", "text": UNVERIFIED_TEXT})
    blocks += [{"note": "note", "title": "Run note", "text": note} for note in page["user_notes"]]
    blocks += [{"note": "info", "title": "Recorded by Tidemark", "text": note}
               for note in page["notes"]]
    blocks += [{"reproduce": list(page["reproduce"])},
               {"h2": "Results", "id": "results"}, {"p": RESULTS_TEXT}]
    if page["phases"]:
        blocks += [{"h2": "Phases", "id": "phases"}, table(page["phases"], "phases")]
    blocks += [{"h2": "Invocations", "id": "invocations"}, {"p": INVOCATIONS_TEXT},
               {"invocations": True},
               {"h2": "Build provenance", "id": "build-provenance"},
               table(page["build_table"], "build-provenance"),
               {"h2": "Machine", "id": "machine"}, table(page["hardware"], "machine"),
               table(page["software"], "machine-2")]
    for title, key in (("Memory, load and busy processes before and after the run", "state"),
                       ("Machine check when the run started", "check"),
                       ("Set up around the processes", "conditions")):
        if page[key]:
            blocks += [{"h3": title}, table(page[key], key)]
    blocks += [{"h2": "Configuration", "id": "configuration"},
               {"details": "The resolved configuration (JSON)", "pre": page["config"]}]
    return {"title": page["title"], "blocks": blocks}


def older_run_json(page: dict[str, Any], own_page: str, rows_json: str,
                   csv_of: Callable[[Table], str]) -> str:
    """The run's data file: its page's blocks and its invocation rows (run_tables'
    compact_rows_json text, or no_rows_json's, put in as it is: 600 rows are 72 KB of JSON)."""
    head = json.dumps({"page": older_run_document(page, own_page, csv_of)},
                      ensure_ascii=False, separators=(",", ":"))
    return head[:-1] + "," + rows_json.lstrip().removeprefix("{")
