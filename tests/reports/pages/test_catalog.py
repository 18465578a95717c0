"""The one list of the site's pages of sections (reports/pages/catalog.py): each page once,
written by a process the build has, listed under a nav section the build places."""
from __future__ import annotations

from reports.pages import catalog


def test_each_listed_page_has_one_file_a_process_and_a_nav_section():
    paths = [page.path for page in catalog.PAGES]
    assert len(paths) == len(set(paths))
    assert all(p.endswith(".md") for p in paths)
    processes = {catalog.EARLY, catalog.VERDICTS, catalog.ANALYSIS, catalog.MACHINES}
    assert {page.process for page in catalog.PAGES} <= processes
    assert {page.nav for page in catalog.PAGES} <= set(catalog.NAV_SECTIONS)


def test_the_build_places_every_nav_section_of_the_list():
    """A section the build's nav does not place would be written and never linked."""
    from pathlib import Path

    source = (Path(catalog.__file__).parents[1] / "build" / "site_pages.py").read_text()
    for section in catalog.NAV_SECTIONS:
        assert f'_listed_nav(written, "{section}")' in source, section
