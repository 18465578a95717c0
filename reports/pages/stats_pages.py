"""Statistics pages (pure): series noise, change points, A/B comparisons, targets.

Every number links to the run that produced it (runs/<run_id>.md).
"""
from __future__ import annotations

import math

from typing import Any, Callable

import pandas as pd
from markupsafe import Markup

from orchestrator.analysis.changepoints import ChangePoint, detect_change_points
from orchestrator.analysis.stats import Thresholds

from ..data.comparisons import SiteVerdicts
from ..data.frames import records
from ..data.stats_data import AbPair, StatsData
from .format import MISSING, Link, escape_text, num
from .labels import describe
from .noise_table import measured_series, noise_intro, noise_table
from .shared import run_href
from .tables import Page, Section, Table

MIN_RUNS_FOR_STEPS = 6  # E-Divisive needs at least min_size (3) runs on each side of a step


def _series_label(row: dict[str, Any]) -> str:
    """The workload and the series (labels.describe)."""
    return f"{row['workload']} · {describe(row)}"


def noise_page(points: pd.DataFrame, aa_pairs: list[tuple[str, str]], thresholds: Thresholds,
               base: str = "../") -> Page:
    """Each series' noise and the threshold its newest run was judged with (noise_table)."""
    table = noise_table(points, aa_pairs, thresholds, base)
    return Page("Series noise", escape_text(noise_intro(thresholds)),
                [Section("Noise by series", tables=[table])] if table.rows else [], wide=True)


CHANGE_POINT_WINDOW = 200


def _steps(points: pd.DataFrame, detect: Callable[[list[float]], list[ChangePoint]]
           ) -> tuple[list[tuple[int, int, ChangePoint]], int, int]:
    """Each step found as (position in `points` of the last point before it, of the first
    after it, the step), the number of series searched and of all series."""
    series = measured_series(points)
    medians = points["ops_median"].to_numpy(dtype=float)
    steps = []
    searched = 0
    for mine in series.values():
        if len(mine) < MIN_RUNS_FOR_STEPS:
            continue
        searched += 1
        # The newest runs only: a step older than the window is history the trend already shows,
        # and E-Divisive's cost grows with the square of the series' length.
        window = mine[-CHANGE_POINT_WINDOW:]
        steps += [(int(window[cp.index - 1]), int(window[cp.index]), cp)
                  for cp in detect(medians[window].tolist())]
    return steps, searched, len(series)


def changepoints_page(points: pd.DataFrame, base: str = "../",
                      detect: Callable[[list[float]], list[ChangePoint]] = detect_change_points
                      ) -> Page:
    """Each significant step in a series' ops/s history, with the runs on either side;
    `detect`: the core's detector, or one that remembers its answers (site_cache)."""
    steps, searched, total = _steps(points, detect)
    run_ids, versions = points["run_id"].to_numpy(), points["engine_version"].to_numpy()
    firsts = records(points.iloc[[after for _, after, _ in steps]])
    rows = []
    for (before, after, cp), first in zip(steps, firsts):
        before_href, after_href = run_href(run_ids[before], base), run_href(run_ids[after], base)
        rows.append([_series_label(first),
                     Link(f"{run_ids[before]} ({versions[before]})", before_href),
                     Link(f"{run_ids[after]} ({versions[after]})", after_href),
                     Link(num(cp.before_median), before_href),
                     Link(num(cp.after_median), after_href),
                     f"{cp.change_pct:+.1f}%", f"{cp.p_value:.3f}"])
    table = Table(("series", "last run before", "first run after", "ops/s before (median)",
                   "ops/s after (median)", "change", "p (permutation)"), rows)
    intro = Markup(
        "Steps found by E-Divisive means (Matteson &amp; James) over each series' per-run ops/s "
        f"medians (the newest {CHANGE_POINT_WINDOW} runs), oldest first, with a 199-shuffle "
        "permutation test at p &lt; 0.05 (see the [methodology](../methodology.md)). Series with "
        f"fewer than {MIN_RUNS_FOR_STEPS} runs are not searched, and no step is claimed for them.")
    return Page("Change points", intro, [Section("Detected steps", text=Markup(
        searched_text(searched, total, len(rows))), tables=[table] if rows else [])])


def searched_text(searched: int, total: int, steps: int) -> str:
    """What was searched, so that 'no step' is never said of series that were not searched."""
    if searched == 0:
        return (f"None of the {total} series has the {MIN_RUNS_FOR_STEPS} runs a search needs "
                f"yet, so none was searched: no step can be claimed either way.")
    found = f"{steps} significant step{'s' if steps != 1 else ''}" if steps else \
        "no significant step"
    return (f"{searched} of {total} series had {MIN_RUNS_FOR_STEPS} or more runs and were "
            f"searched: {found}. The other {total - searched} have too few runs to tell.")


def _round_text(record: dict[str, Any]) -> str:
    """ab, ba, or a duet round's CPUs: a@0+b@1 (both at once)."""
    if record.get("together"):
        return "+".join(f"{side}@{cpu}" for side, cpu in sorted(record.get("cpus", {}).items()))
    return str(record.get("order", ""))


def _adaptive_text(adaptive: dict[str, Any] | None) -> str:
    if not adaptive:
        return ""
    used = ", ".join(f"{n} ({adaptive.get('stopped', {}).get(p, '')})"
                     for p, n in adaptive.get("rounds_used", {}).items())
    return f", adaptive: rounds used {used or MISSING} of at most {adaptive.get('max_rounds')}"


def _ab_section(pair: AbPair, base: str) -> Section:
    a, b = run_href(pair.run_a, base), run_href(pair.run_b, base)
    order = " ".join(_round_text(r) for r in pair.schedule)
    text = Markup("A: <code>{}</code><br>B: <code>{}</code><br>design {}{} · seed {} · "
                  "order per round: {}").format(
        escape_text(" ".join(pair.overrides_a)), escape_text(" ".join(pair.overrides_b)),
        escape_text(pair.design), escape_text(_adaptive_text(pair.adaptive)), pair.seed,
        escape_text(order))
    if pair.report is None:
        return Section(pair.ab_id, text=text, warnings=[pair.error or "no measurements"])
    rows = []
    for row in pair.report.rows:
        c = row.comparison
        rows.append([row.label, row.metric, Link(num(c.base_median), a), Link(num(c.cand_median), b),
                     f"{c.change_pct:+.1f}%",
                     f"{(c.ci_low - 1) * 100:+.1f}% … {(c.ci_high - 1) * 100:+.1f}%"
                     if math.isfinite(c.ci_low) else MISSING,
                     f"{c.p_value:.3g}" if math.isfinite(c.p_value) else MISSING, c.test, c.verdict])
    table = Table(("benchmark", "metric", "A median", "B median", "change", "95% CI", "p",
                   "test", "verdict"), rows, (False, False, True, True, True, True, True, False,
                                              False))
    warnings = [f"differs (allowed in ab): {d}" for d in pair.report.differences]
    warnings += [f"{row.label} {row.metric}: {note}" for row in pair.report.rows
                 for note in row.comparison.notes if note.startswith("round ")]
    return Section(f"{pair.ab_id}{' (A/A)' if pair.same_build else ''}", text=text, tables=[table],
                   warnings=warnings + [f"differs (named): {n}" for n in pair.report.named])


def ab_page(data: StatsData, base: str = "../") -> Page:
    intro = Markup(
        "Each `tidemark ab` job ran two configs in rounds on one machine: interleaved (A and B "
        "back to back, a seeded random order per round) or duet (A and B at once, each on its "
        "own CPU, swapped every round). Paired designs are judged on the per-round ratios B/A: "
        "p &lt; 0.05 (Wilcoxon signed-rank), a 95% bootstrap CI of the median ratio that "
        "excludes 0% change, and a change above the threshold; adaptive jobs by their stopping "
        "rule (see the [methodology](../methodology.md)); unpaired ones by the Mann–Whitney U test "
        "and the ratio of medians; instruction counts (callgrind) need a change above the "
        "threshold and the spread between repetitions, every repetition of B beyond every "
        "repetition of A (their CI column is that range of ratios). The test column names "
        "which. Keys that differ between the sides are named.")
    return Page("AB comparisons", intro, [_ab_section(p, base) for p in data.ab_pairs],
                empty="No `tidemark ab` job in this database yet.")


def targets_page(verdicts: SiteVerdicts, base: str = "../", points: pd.DataFrame | None = None,
                 gap_notes: dict[str, dict[str, str]] | None = None) -> Page:
    """Declared targets and bars of each workload's newest run, series by series; bars against
    the same series in the run it is compared with (the gate's partner for the summarized run).
    A miss carries its workload's gap note on its metric (`gap_notes` in the workload config)."""
    workload_of = dict(zip(points["series_key"], points["workload"])) if points is not None else {}
    sections = []
    for run_id, results in verdicts.targets.items():
        if not results:
            continue
        rows = []
        for t in results:
            notes = (gap_notes or {}).get(workload_of.get(t.series_key, ""), {})
            note = notes.get(t.target.split()[0], "") if t.status != "meets" else ""
            rows.append([t.series, t.target, Link(num(t.observed, 2), run_href(run_id, base))
                         if t.observed is not None else MISSING, t.status, note or MISSING])
        sections.append(Section(f"Run {run_id}", text=Markup("[{}]({})").format(
            escape_text(run_id), run_href(run_id, base)), tables=[Table(
                ("series", "target", "observed (median)", "status", "gap note"), rows,
                (False, False, True, False, False))]))
    intro = Markup(
        "Targets (<code>p99_us &lt; 50</code>) and bars (<code>p99_us: 1.5</code> = at most 1.5 × "
        "the baseline run's median of the same series) declared in the workload config. Every "
        "series of a workload is judged on its own medians: each thread count and cache state "
        "separately. `tidemark gate --targets` fails a candidate that is over target. A gap note "
        "(<code>gap_notes</code> in the workload config) says why a target is missed.")
    return Page("Targets", intro, sections,
                empty="No workload declares targets or bars yet (targets and bars in a workload's "
                      "config).")
