"""The power page's section on the nightly gate (benchmarks/confirm_study.json → Markdown).

Same-binary pairs: every exit 1 is a false alarm. Planted pairs: every exit 1 is a catch.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

STUDY = Path(__file__).with_name("confirm_study.json")
NOTES = Path(__file__).with_name("confirm_notes.md")  # the reading of the results, by hand
WAYS = (("before_tail", "between runs, before the tail (noise only)"),
        ("with_tail", "between runs, with the tail (today's default)"),
        ("before_tail_confirmed", "before the tail, each flag confirmed"),
        ("with_tail_confirmed", "with the tail, each flag confirmed (`gate --confirm`)"))


def _minutes(pairs: list[dict], way: str) -> str:
    spent = [p[way]["seconds"] / 60 for p in pairs if not p[way].get("not_flagged")]
    if not way.endswith("confirmed") or not spent:
        return "–"
    return f"{statistics.median(spent):.1f} (max {max(spent):.1f}; {len(spent)} re-measured)"


def _row(way: str, words: str, same: list[dict], planted: list[dict]) -> str:
    alarms = sum(p[way]["exit"] == 1 for p in same)
    unsure = sum(p[way]["exit"] == 2 for p in same)
    caught = sum(p[way]["exit"] == 1 for p in planted)
    return (f"| {words} | {alarms} of {len(same)} ({unsure} cannot tell) | {caught} of "
            f"{len(planted)} | {_minutes(same + planted, way)} |")


def section(path: Path = STUDY) -> list[str]:
    """Markdown lines; none while the study has not run."""
    if not path.is_file():
        return []
    data = json.loads(path.read_text())
    same, planted = data["same_binary"], data["planted"]
    lines = [
        "## The nightly gate: between runs, with the tail, confirmed", "",
        f"`benchmarks/confirm_study.py`, {data['date']}: LevelDB 1.23's smoke suite (5 workloads, "
        "100,000 keys, 6 repetitions, the engine pinned to CPU 1) run "
        f"{len(same) + 1} times in a row with one binary, each run gated against the previous "
        f"one as the nightly job does ({len(same)} same-binary pairs: every exit 1 is a false "
        f"alarm); then {len(planted)} trials, each on a copy of that history, of a baseline run "
        f"and a candidate whose every point read costs {data.get('planted_ns', 0):.0f} ns more "
        f"({data['planted_share']:.0%} of a read: a planted regression of readrandom). A rule's "
        "`--confirm` runs only when that rule flags something.", "",
        "| gate | false alarms (same binary) | planted 5 % caught | machine-minutes per "
        "confirmation, median |", "| --- | ---: | ---: | ---: |",
        *[_row(way, words, same, planted) for way, words in WAYS], "",
        "Goal (issue 33): at most 1 false alarm in 40 with confirmation, at least 95 % of 5 % "
        "regressions caught, at most 5 machine-minutes per confirmed verdict.", ""]
    if NOTES.is_file():
        lines += [NOTES.read_text().strip(), ""]
    return lines
