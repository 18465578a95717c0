"""An older run's page as data (pages/run_data.py): what the shared page's script is given."""
from __future__ import annotations

import json

from reports.pages.format import MISSING, Link
from reports.pages.run_data import cell_data, older_run_document, older_run_json
from reports.pages.run_tables import no_rows_json
from reports.pages.tables import Table

OWN = "20240101T020000-r1.html"


def columns_csv(table: Table) -> str:
    """A stand-in for the site's CSV rule (build/table_csv.py): the columns only."""
    return ",".join(table.columns) + "\n"


def context(**changes: object) -> dict[str, object]:
    """A run_page context with what an older run's page reads."""
    facts = Table(("Fact", "Value"), [["CPU", "Synthetic CPU"]], (False, False))
    page = {"title": "Run 20240101T020000-r1",
            "summary": [("Run", Link("20240101T020000-r1", "../runs/20240101T020000-r1.md")),
                        ("Invocations ok / failed",
                         Link("3 / 0 of 3", "../runs/20240101T020000-r1.md#invocations")),
                        ("Machine page", Link("m1", "../machines/m1.md")), ("Label", None)],
            "caveat": "", "verified": True, "user_notes": [], "notes": [],
            "reproduce": ["make setup", ".venv/bin/tidemark run suite=x"], "phases": None,
            "build_table": Table(("Field", "Value"), [["Engine", "rocksdb 9"]], (False, False)),
            "hardware": facts, "software": facts, "state": None, "check": None,
            "conditions": None, "config": '{\n  "a": 1\n}'}
    return {**page, **changes}


def test_links_are_written_as_mkdocs_writes_them_and_an_own_anchor_stays_on_the_page() -> None:
    assert cell_data(Link("m1", "../machines/m1.md"), OWN) == ["m1", "../machines/m1.html"]
    assert cell_data(Link("run", "../runs/20240101T020000-r1.md#invocations"), OWN) == \
        ["run", "#invocations"]
    # The run's own address (its permalink) stays one: it sends the reader to this page.
    assert cell_data(Link("run", "../runs/20240101T020000-r1.md"), OWN) == \
        ["run", "../runs/20240101T020000-r1.html"]
    assert cell_data(None, OWN) == MISSING and cell_data(3.5, OWN) == "3.5"
    # A hostile href stays a relative path (format.safe_href), never a javascript: URL.
    assert cell_data(Link("x", "javascript:alert(1)"), OWN)[1] == "javascript%3Aalert%281%29"


def test_the_blocks_follow_the_page_and_only_its_present_parts() -> None:
    plain = older_run_document(context(), OWN, columns_csv)["blocks"]
    assert [next(iter(block)) for block in plain] == [
        "table", "reproduce", "h2", "p", "h2", "p", "invocations", "h2", "table", "h2", "table",
        "table", "h2", "details"]
    assert plain[0]["table"][2][3] == ["Label", MISSING]
    assert plain[0]["csv"] == ["20240101T020000-r1.run.csv", "Field,Value\n"]
    flagged = older_run_document(context(verified=False, caveat="debug build",
                                         notes=["resumed"], user_notes=["rerun"]), OWN,
                                 columns_csv)["blocks"]
    assert [(b["note"], b["title"]) for b in flagged if "note" in b] == [
        ("warning", "Not a release run"), ("warning", "Unverified run"), ("note", "Run note"),
        ("info", "Recorded by Tidemark")]


def test_the_data_file_holds_the_page_and_the_rows_as_given() -> None:
    rows = '{"header": ["#"], "linked": [true], "rows": [["inv-0001", 0, "1"]]}'
    data = json.loads(older_run_json(context(), OWN, rows, columns_csv))
    assert data["page"]["title"] == "Run 20240101T020000-r1"
    assert (data["header"], data["linked"], data["rows"]) == (["#"], [True], [["inv-0001", 0, "1"]])
    empty = json.loads(older_run_json(context(), OWN, no_rows_json(), columns_csv))
    assert empty["rows"] == [] and empty["header"] == json.loads(no_rows_json())["header"]
