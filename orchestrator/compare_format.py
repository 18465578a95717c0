"""A comparison Report as a terminal table, Markdown (a PR comment) or JSON (pure text)."""
from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from rich.table import Table

from .analysis.compare import Report, Row
from .analysis.stats import FASTER, SLOWER

MARK = {FASTER: "✅ faster", SLOWER: "❌ slower"}


def num(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def ci_text(row: Row) -> str:
    c = row.comparison
    if not math.isfinite(c.ci_low):
        return "–"
    return f"{(c.ci_low - 1) * 100:+.1f}% … {(c.ci_high - 1) * 100:+.1f}%"


def change_text(row: Row) -> str:
    c = row.comparison
    return f"{c.change_pct:+.1f}%" if math.isfinite(c.ratio) else "–"


def _side(facts: dict[str, Any]) -> str:
    label = f" ({facts['label']})" if facts.get("label") else ""
    return f"{facts.get('run_id')} — {facts.get('engine')} {facts.get('engine_version')} " \
           f"{facts.get('build_variant')}{label}"


def headline(report: Report) -> str:
    slower = sum(1 for r in report.rows if r.comparison.verdict == SLOWER)
    faster = sum(1 for r in report.rows if r.comparison.verdict == FASTER)
    gm = report.geomean
    gm_text = f"{(gm - 1) * 100:+.1f}%" if math.isfinite(gm) else "–"
    return (f"{slower} slower, {faster} faster, {len(report.rows) - slower - faster} other; "
            f"geometric mean of performance ratios {gm_text} (positive: candidate better)")


def rich_table(report: Report) -> Table:
    table = Table(title=f"base {_side(report.base)}\ncand {_side(report.cand)}",
                  caption=headline(report))
    for col in ("benchmark", "metric", "base median", "cand median", "change", "95% CI",
                "p", "test", "threshold", "verdict"):
        table.add_column(col, justify="left" if col in ("benchmark", "metric", "test", "verdict")
                         else "right")
    for row in report.rows:
        c = row.comparison
        style = {SLOWER: "red", FASTER: "green"}.get(c.verdict, "")
        table.add_row(row.label, row.metric, num(c.base_median), num(c.cand_median), change_text(row),
                      ci_text(row), num(c.p_value), c.test, f"{row.comparison.threshold * 100:.1f}%",
                      f"[{style}]{c.verdict}[/]" if style else c.verdict)
    return table


def footer_lines(report: Report) -> list[str]:
    lines = [f"different (allowed): {d}" for d in report.differences]
    lines += [f"differs (named, compared anyway): {n}" for n in report.named]
    lines += [f"only in base: {x}" for x in report.only_base]
    lines += [f"only in candidate: {x}" for x in report.only_cand]
    if report.extra.get("design"):
        budget = report.extra.get("max_rounds")
        lines.append(f"A/B design: {report.extra['design']}, analysed as per-round pairs" +
                     (f", adaptive (at most {budget} rounds)" if budget else ""))
    lines += [f"{row.label} {row.metric}: {note}" for row in report.rows
              for note in row.comparison.notes]
    return lines


def markdown(report: Report, link_prefix: str = "runs/") -> str:
    """A PR comment; every median links to the run page that produced it."""
    base_id, cand_id = report.base.get("run_id"), report.cand.get("run_id")
    out = [f"**Baseline** [{base_id}]({link_prefix}{base_id}.md): {_side(report.base)}  ",
           f"**Candidate** [{cand_id}]({link_prefix}{cand_id}.md): {_side(report.cand)}", "",
           f"{headline(report)}", "",
           "| benchmark | metric | base median | cand median | change | 95% CI | p | test | threshold | verdict |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |"]
    for row in report.rows:
        c = row.comparison
        out.append(f"| {row.label} | {row.metric} | [{num(c.base_median)}]({link_prefix}{base_id}.md) "
                   f"(n={c.base_n}) | [{num(c.cand_median)}]({link_prefix}{cand_id}.md) (n={c.cand_n}) "
                   f"| {change_text(row)} | {ci_text(row)} | {num(c.p_value)} | {c.test} | {c.threshold * 100:.1f}% "
                   f"| {MARK.get(c.verdict, c.verdict)} |")
    extra = footer_lines(report)
    if extra:
        out += ["", *[f"- {line}" for line in extra]]
    return "\n".join(out) + "\n"


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def as_json(report: Report) -> str:
    data = dataclasses.asdict(report)
    for row, src in zip(data["rows"], report.rows):
        row["comparison"]["change_pct"] = src.comparison.change_pct
    return json.dumps(_clean(data), indent=2, default=str)
