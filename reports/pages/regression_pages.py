"""Pages of regressions traced (pure): confirmations of flagged changes, and bisects.

What `tidemark gate --confirm` (analysis.confirm) and `tidemark bisect` (analysis.bisect) found
and stored, shown as stored: these pages decide nothing. Every number links to the run that
produced it: a between-run change to the candidate run, a paired change to side B of its job.
"""
from __future__ import annotations

import math
from typing import Any

from markupsafe import Markup

from orchestrator.analysis.alerts import triage

from ..data.stats_data import StatsData
from .charts import commit_chart
from .format import MISSING, Link, escape_text
from .shared import run_href
from .tables import Page, Section, Table


def _pct(ratio: float | None) -> str:
    return f"{(ratio - 1) * 100:+.1f}%" if ratio is not None and math.isfinite(ratio) else MISSING


def _interval(low: float | None, high: float | None) -> str:
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return MISSING
    return f"{(low - 1) * 100:+.1f}% … {(high - 1) * 100:+.1f}%"


def _side_b(ab_id: str | None) -> str:
    """Side B's run of an `ab` job: its id is the job's without "ab-", and "-b" (run/ab.py)."""
    return f"{ab_id[3:]}-b" if ab_id else ""


def _confirmation_row(c: dict[str, Any], base: str) -> list[Any]:
    between, paired = c["between"] or {}, c["paired"] or {}
    flagged = Link(f"{_pct(between.get('ratio'))} (threshold "
                   f"{between.get('threshold', math.nan) * 100:.1f}%)", run_href(c["cand_run"], base))
    found = MISSING
    if paired:
        found = Link(f"{_pct(paired.get('ratio'))}, {_interval(paired.get('ci_low'), paired.get('ci_high'))}, "
                     f"{paired.get('cand_n')} rounds", run_href(_side_b(c["ab_id"]), base))
    why = "one build on both sides: the machine drifted" if c["same_build"] else (c["why"] or "")
    return [str(c["created_at"])[:16], c["label"], c["metric"],
            Link(c["base_run"], run_href(c["base_run"], base)),
            Link(c["cand_run"], run_href(c["cand_run"], base)), flagged, c["verdict"], found, why]


def confirmations_page(data: StatsData, base: str = "../") -> Page:
    intro = Markup(
        "A change between two separate runs is only flagged: whole runs of one binary move by "
        "several percent on a shared machine, and a series they call unchanged was only checked "
        "at a threshold widened for that. <code>tidemark gate --confirm</code> re-measures "
        "both runs' builds interleaved and paired (an adaptive A/B job, on the run's pinned CPU) "
        "for every flagged regression and every series whose between-run threshold is above the "
        "gate's minimum effect, judges each at that minimum effect, and exits on that: "
        "<b>confirmed</b>, <b>not confirmed</b> (no regression), <b>cannot tell</b>, or "
        "<b>provisional</b> when the runs could not be measured again (an import, another "
        "machine, a build its recipe no longer makes). A provisional regression never passes.")
    rows = [_confirmation_row(c, base) for c in data.confirmations]
    table = Table(("when (UTC)", "series", "metric", "baseline", "candidate",
                   "between runs: change (threshold)", "confirmation",
                   "paired: change, 95% interval, rounds", "note"), rows, (False,) * 9)
    sections = [Section("Every confirmation", tables=[table])] if rows else []
    return Page("Confirmations", intro, sections, wide=True,
                empty="No `tidemark gate --confirm` has run against this database yet.")


def _found_text(bisect: dict[str, Any]) -> str:
    commits = bisect["commits"] or []
    first = next((c for c in commits if c["sha"] == bisect["first_bad"]), None)
    if bisect["status"] != "done":
        return "unfinished: the same command resumes it from these steps"
    if first is None:
        return "no regression in this range: the bad end is not worse than the good one"
    number = commits.index(first) + 1
    return (f"first bad commit {first['sha'][:12]} ({number} of {len(commits)}): "
            f"{first['subject']} — {first['author']}, {first['date']}")


def _bisect_section(bisect: dict[str, Any], base: str, index: int) -> Section:
    commits = bisect["commits"] or []
    steps = sorted(bisect["steps"] or [], key=lambda s: s["index"])
    good = commits[0] if commits else {"sha": bisect["good"], "subject": ""}
    text = Markup("<b>{}</b><br>{} commits from {} ({}) to {}; {} against the good commit, "
                  "each judged commit paired with it in its own A/B job<br>"
                  "<code>{}</code>").format(
        escape_text(_found_text(bisect)), len(commits), escape_text(good["sha"][:12]),
        escape_text(good["subject"]), escape_text(bisect["bad"][:12]),
        escape_text(bisect["metric"]), escape_text(" ".join(bisect["overrides"] or [])))
    rows = [[str(s["index"] + 1), s["sha"][:12], s["subject"], s["state"],
             Link(_pct(s["ratio"]), run_href(_side_b(s["ab_id"]), base)) if s["ab_id"]
             else MISSING, _interval(s["ci_low"], s["ci_high"]), str(s["rounds"]),
             s["why"] or ""] for s in steps]
    table = Table(("#", "commit", "subject", "state", "change", "95% interval", "rounds",
                   "note"), rows, (True, False, False, False, True, True, True, False))
    chart = commit_chart([{
        "number": s["index"] + 1, "state": s["state"],
        "change": (s["ratio"] - 1) * 100 if s["ratio"] is not None else 0.0,
        "up": (s["ci_high"] - s["ratio"]) * 100 if s["ci_high"] is not None else 0.0,
        "down": (s["ratio"] - s["ci_low"]) * 100 if s["ci_low"] is not None else 0.0,
        "label": f"{s['index'] + 1}. {s['sha'][:12]} {s['subject']}: {s['state']}"}
        for s in steps], f"bisect-{index}")
    return Section(bisect["bisect_id"], text=text, tables=[table], chart=chart)


def bisects_page(data: StatsData, base: str = "../") -> Page:
    intro = Markup(
        "<code>tidemark bisect --good REF --bad REF -- OVERRIDES</code> builds commits of the "
        "range (each once, into the build cache) and measures each against the good commit in "
        "a paired, adaptive A/B job: the bad end at the minimum effect, then the commit nearest "
        "the middle of what is left, at half the regression the bad end showed. A commit that "
        "does not build, or that two jobs could not tell, is skipped. The chart shows the judged "
        "commits in commit order.")
    return Page("Bisects", intro, [_bisect_section(b, base, i)
                                   for i, b in enumerate(data.bisects)],
                empty="No `tidemark bisect` has run against this database yet.")


def _alert_row(a: dict[str, Any], base: str) -> list[Any]:
    return [a["alert_id"], a["state"], str(a["created_at"])[:16], a["label"], a["metric"],
            a["direction"],
            Link(f"{a['between_change'] * 100:+.1f}%", run_href(a["cand_run"], base)),
            Link(f"{a['paired_change'] * 100:+.1f}%", run_href(_side_b(a["ab_id"]), base)),
            f"{a['threshold'] * 100:.1f}%",
            " ".join(x for x in (a["note"] or "", f"fixed by {a['fixed_by']}"
                                 if a["fixed_by"] else "") if x)]


def alerts_page(data: StatsData, base: str = "../") -> Page:
    intro = Markup(
        "A change that <code>tidemark gate --confirm</code> confirmed becomes an alert, kept "
        "in the history with a state: <b>new</b>, then <b>acknowledged</b>, <b>false alarm</b> "
        "or <b>fixed</b> (<code>tidemark alert ack|false-alarm|fixed ALERT</code>). Each "
        "series' share of alerts later marked false is shown beside the threshold it was "
        "found at (the flag's, or the paired job's for a series re-measured unflagged): how "
        "often that threshold's confirmed calls were still wrong.")
    if not data.alerts:
        return Page("Alerts", intro, [], empty="No confirmed change has made an alert yet.")
    table = Table(("alert", "state", "when (UTC)", "series", "metric", "kind", "between runs",
                   "paired", "threshold", "note"), [_alert_row(a, base) for a in data.alerts],
                  (False,) * 6 + (True,) * 3 + (False,))
    shares = triage(data.alerts)
    latest = {}
    for a in data.alerts:  # newest first: the first seen is the series' latest threshold
        latest.setdefault((a["series_key"], a["metric"]), a)
    rows = [[a["label"], a["metric"], f"{a['threshold'] * 100:.1f}%", str(shares[key].alerts),
             str(shares[key].false_alarms), f"{shares[key].false_share:.0%}"]
            for key, a in latest.items()]
    by_series = Table(("series", "metric", "threshold (latest)", "alerts", "marked false",
                       "share false"), rows, (False, False, True, True, True, True))
    return Page("Alerts", intro, [Section("Every alert", tables=[table]),
                                  Section("Triage by series", tables=[by_series])], wide=True)
