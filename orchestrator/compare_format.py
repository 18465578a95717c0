"""A comparison Report as a terminal table, Markdown (a PR comment), JSON, or a gate's report
as JUnit XML for CI systems (pure text)."""
from __future__ import annotations

import dataclasses
import json
import math
import re
import xml.etree.ElementTree as ET
from typing import Any, Mapping, Sequence

from rich.table import Table

from .analysis.compare import Report, Row
from .analysis.confirm import Confirmation, judged_row, unchecked
from .analysis.stats import FASTER, NO_CHANGE, SLOWER

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


# JUnit XML (the schema Jenkins, GitLab and GitHub's test reporters read: testsuite > testcase,
# with a failure or skipped child). One test case per series: a regression of any of its
# metrics fails it; a metric the gate cannot tell (too few repetitions, an adaptive budget
# spent, failed invocations, a flagged regression left unconfirmed) skips it; else it passed.


def _row_line(row: Row) -> str:
    c = row.comparison
    return (f"{row.metric}: {num(c.base_median)} → {num(c.cand_median)} ({change_text(row)}, "
            f"95% CI {ci_text(row)}, p {num(c.p_value)}, threshold "
            f"{c.threshold * 100:.1f}%): {c.verdict}")


def _outcome(rows: Sequence[Row], confirmations: Mapping[tuple[str, str], Confirmation]
             ) -> tuple[str, str]:
    """('failure' | 'skipped' | 'passed', the message) of one series' rows, as the gate judged
    them (after `gate --confirm`: analysis.confirm.judged_row)."""
    done = [confirmations.get((r.series_key, r.metric)) for r in rows]
    held = [(r, d) for r, d in zip(rows, done) if d is not None and unchecked(d)]
    judged = [judged_row(r, d) for r, d in zip(rows, done) if d is None or not unchecked(d)]
    slower = [r for r in judged if r.comparison.verdict == SLOWER]
    if slower:
        return "failure", "; ".join(f"{r.metric} {change_text(r)} (threshold "
                                    f"{r.comparison.threshold * 100:.1f}%)" for r in slower)
    unknown = [f"{r.metric}: {d.text()}" for r, d in held]
    unknown += [f"{r.metric}: {r.comparison.verdict} (n={r.comparison.base_n}/"
                f"{r.comparison.cand_n})" for r in judged
                if r.comparison.verdict not in (SLOWER, FASTER, NO_CHANGE)]
    failed = max(r.failed[1] for r in rows)
    if failed:
        unknown.append(f"{failed} failed invocations in the candidate")
    return ("skipped", "cannot tell: " + "; ".join(unknown)) if unknown else ("passed", "")


# What XML 1.0 cannot hold (control characters, lone surrogates): an imported benchmark's name
# may carry them, and one would make the whole report unreadable to the CI system.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _case(suite: ET.Element, classname: str, name: str, kind: str, message: str,
          text: str) -> None:
    case = ET.SubElement(suite, "testcase", classname=_xml(classname), name=_xml(name))
    if kind != "passed":
        ET.SubElement(case, kind, message=_xml(message), type="regression"
                      if kind == "failure" else "cannot tell").text = _xml(text)
    ET.SubElement(case, "system-out").text = _xml(text)


def _params_text(params: Any) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted((params or {}).items()))


def junit_xml(report: Report, identities: Mapping[str, Mapping[str, Any]],
              confirmations: Sequence[Confirmation] = (), decision: str = "") -> str:
    """The gate's report as one JUnit testsuite; `identities`: series key → its workload and
    params (store.reads.series_identities), which name the test cases."""
    confirmed = {(c.series_key, c.metric): c for c in confirmations}
    suite = ET.Element("testsuite", name="tidemark gate")
    props = ET.SubElement(suite, "properties")
    for name, value in (("baseline", report.base.get("run_id")),
                        ("candidate", report.cand.get("run_id")), ("decision", decision)):
        ET.SubElement(props, "property", name=name, value=_xml(str(value or "")))
    by_series: dict[str, list[Row]] = {}
    for row in report.rows:
        by_series.setdefault(row.series_key, []).append(row)
    counts = {"failure": 0, "skipped": 0, "passed": 0}
    for key, rows in by_series.items():
        identity = identities.get(key, {})
        name = " ".join(filter(None, (rows[0].label, _params_text(identity.get("params")))))
        kind, message = _outcome(rows, confirmed)
        counts[kind] += 1
        _case(suite, str(identity.get("workload") or rows[0].label), name, kind, message,
              "\n".join(_row_line(r) for r in rows))
    for label in report.only_base:
        counts["skipped"] += 1
        _case(suite, "tidemark.gate", label, "skipped", "cannot tell: missing from the "
              "candidate", f"{label}: in the baseline, not in the candidate")
    suite.set("tests", str(sum(counts.values())))
    suite.set("failures", str(counts["failure"]))
    suite.set("errors", "0")
    suite.set("skipped", str(counts["skipped"]))
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, "unicode") + "\n"
