"""The Methodology page says which threshold a verdict between runs had to beat: the tail of
run-to-run changes with its configured quantile, or nothing of it when it is left out."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from orchestrator.gate import DEFAULT_GATE, load_gate_conf
from reports.build import render
from reports.pages.config_pages import load_configs, methodology_context
from reports.pages.tables import Table
from tests.conftest import REPO


def _verdicts(tmp_path: Path, **gate_changes) -> str:
    gate = dataclasses.replace(load_gate_conf(DEFAULT_GATE), **gate_changes)
    configs = load_configs(REPO / "conf", tmp_path / "absent.json")
    out = render.write_page(render.environment(), "methodology.md.j2", tmp_path / "m.md",
                            **methodology_context(configs, Table((), []), gate))
    text = out.read_text()
    return " ".join(text[text.index("- **Verdicts**"):text.index("- **A/B designs**")].split())


def test_the_verdicts_paragraph_names_the_tail_and_its_quantile(tmp_path):
    text = _verdicts(tmp_path)
    assert "2.0 × the series' noise, the tail); otherwise" in text
    assert "The tail, when two separate runs are compared" in text and "the 90 % quantile" in text
    assert "consecutive runs of one build" in text and "`tail_quantile`" in text
    assert "the 75 % quantile" in _verdicts(tmp_path, tail_quantile=0.75)
    assert "tail" not in _verdicts(tmp_path, tail_quantile=0.0)
