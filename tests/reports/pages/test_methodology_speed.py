"""The methodology page's site-speed section (reports/pages/templates/methodology.md.j2): the
1,000-run figures with the build's memory and the published site's size, and a line per larger
history measured (benchmarks/site_speed.json's `scale`)."""
from __future__ import annotations

import json
from pathlib import Path

from orchestrator.gate import DEFAULT_GATE, load_gate_conf
from reports.build import render
from reports.pages.config_pages import load_configs, methodology_context
from reports.pages.tables import Table
from tests.conftest import REPO

FIGURES = {"runs": 1000, "series": 200, "invocations": 600000, "metrics": 6000000,
           "seconds": 17.0, "cpu_seconds": 31.7, "machine": "a CPU", "date": "2026-11-28",
           "mkdocs_seconds": 0.6, "phases": {"points": 2.0},
           "incremental": {"seconds": 4.0, "run_pages_rebuilt": 2, "builds": []}}


def _methodology(tmp_path: Path, speed: dict) -> str:
    (tmp_path / "speed.json").write_text(json.dumps(speed))
    configs = load_configs(REPO / "conf", tmp_path / "speed.json")
    gate = load_gate_conf(DEFAULT_GATE)
    noise = Table((), [])  # no series measured: the page says so
    out = render.write_page(render.environment(), "methodology.md.j2", tmp_path / "m.md",
                            **methodology_context(configs, noise, gate))
    return out.read_text()


def test_scale_figures_are_shown_when_measured(tmp_path):
    scaled = {**FIGURES, "runs": 10000, "invocations": 6000000, "seconds": 71.5,
              "peak_rss_mb": 2900, "peak_tree_rss_mb": 4100, "site_mb": 4650,
              "site_files": 52000, "incremental": {**FIGURES["incremental"], "seconds": 6.5}}
    text = _methodology(tmp_path, {**FIGURES, "peak_rss_mb": 640, "peak_tree_rss_mb": 1200,
                                   "site_mb": 472, "site_files": 5768,
                                   "scale": {"10000": scaled}})
    assert "held 640 MB at its peak" in text and "472 MB in 5768 files" in text
    assert "**71.5 s** into a fresh folder (goal ≤ 60 s)" in text
    assert "4650 MB in\n52000 files" in text


def test_a_file_measured_before_memory_and_scale_still_renders(tmp_path):
    text = _methodology(tmp_path, FIGURES)
    assert "**17.0 s**" in text and "at its peak" not in text and "At 10000" not in text
