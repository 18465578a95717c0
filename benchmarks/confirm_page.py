"""The power page's sections on the nightly gate (benchmarks/confirm_study.json and
catch_study.json → Markdown).

Same-binary pairs: every exit 1 is a false alarm. Planted pairs: every exit 1 is a catch.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Callable

STUDY = Path(__file__).with_name("confirm_study.json")
NOTES = Path(__file__).with_name("confirm_notes.md")  # the reading of the results, by hand
CATCH = Path(__file__).with_name("catch_study.json")
CATCH_NOTES = Path(__file__).with_name("catch_notes.md")
CATCH_WAYS = (("before_tail", "ops/s between runs, before the tail (noise only)"),
              ("with_tail", "ops/s between runs, with the tail (the default threshold)"),
              ("unresolved", "ops/s, flags and unresolved series confirmed (`--confirm`)"),
              ("instructions", "instructions per read, confirmed (`--metric "
                               "instructions_per_op --confirm`)"),
              ("both", "both metrics, confirmed (derived from the two rows above)"))
WAYS = (("before_tail", "between runs, before the tail (noise only)"),
        ("with_tail", "between runs, with the tail (today's default)"),
        ("before_tail_confirmed", "before the tail, each flag confirmed"),
        ("with_tail_confirmed", "with the tail, each flag confirmed (`gate --confirm`)"))


def _remeasured(pair: dict, way: str) -> bool:
    """Whether the way re-measured this pair (confirm_study: a confirmed way that was flagged;
    catch_study says so itself)."""
    return pair[way].get("remeasured", way.endswith("confirmed") and
                         not pair[way].get("not_flagged"))


def _minutes(pairs: list[dict], way: str) -> str:
    spent = [p[way]["seconds"] / 60 for p in pairs if _remeasured(p, way)]
    if not spent:
        return "–"
    return f"{statistics.median(spent):.1f} (max {max(spent):.1f}; {len(spent)} re-measured)"


def _row(way: str, words: str, same: list[dict], planted: list[dict]) -> str:
    alarms = sum(p[way]["exit"] == 1 for p in same)
    unsure = sum(p[way]["exit"] == 2 for p in same)
    caught = sum(p[way]["exit"] == 1 for p in planted)
    missed = sum(p[way]["exit"] == 2 for p in planted)
    return (f"| {words} | {alarms} of {len(same)} ({unsure} cannot tell) | {caught} of "
            f"{len(planted)} ({missed} cannot tell) | {_minutes(same + planted, way)} |")


GOAL = ("Goal (issue 33): at most 1 false alarm in 40 with confirmation, at least 95 % of 5 % "
        "regressions caught, at most 5 machine-minutes per confirmed verdict.")
HEADER = ("| gate | false alarms (same binary) | planted 5 % caught | machine-minutes per "
          "re-measurement, median |", "| --- | ---: | ---: | ---: |")


def _study_section(path: Path, notes: Path, ways: tuple[tuple[str, str], ...],
                   intro: Callable[[dict, list, list], list[str]]) -> list[str]:
    """One study's section: its heading and intro (`intro` of the data, same-binary pairs and
    planted pairs), the table of its ways, the goal and the reading; none before it ran."""
    if not path.is_file():
        return []
    data = json.loads(path.read_text())
    same, planted = data["same_binary"], data["planted"]
    lines = [*intro(data, same, planted), "", *HEADER,
             *[_row(way, words, same, planted) for way, words in ways], "", GOAL, ""]
    if notes.is_file():
        lines += [notes.read_text().strip(), ""]
    return lines


def _catch_intro(data: dict, same: list, planted: list) -> list[str]:
    return [
        "## The nightly gate on a shielded CPU, unresolved series and instruction counts", "",
        f"`benchmarks/catch_study.py`, {data['date']}: RocksDB 7.8.3 readrandom (200,000 keys, "
        "100,000 reads, 6 repetitions) on the shielded engine CPU (machine=ci-2core-shielded), "
        "with instruction counts beside (callgrind, 2 × 10,000 reads per run), run "
        f"{len(same) + 1} times in a row with one binary, each run gated against the previous "
        f"one ({len(same)} same-binary pairs: every exit 1 is a false alarm); then "
        f"{len(planted)} trials, each on a copy of that history, of a baseline run and a "
        f"candidate whose every point read costs {data.get('planted_ns', 0):.0f} ns more "
        f"({data['planted_share']:.0%} of a read). `--confirm` re-measures in one paired job "
        "(at most 60 rounds for ops/s, 20 for instruction counts then; one since), judged at the "
        "2 % min effect; "
        "with one build and one config on both sides (the same-binary pairs) it re-measures "
        "nothing."]


def _confirm_intro(data: dict, same: list, planted: list) -> list[str]:
    return [
        "## The nightly gate: between runs, with the tail, confirmed", "",
        f"`benchmarks/confirm_study.py`, {data['date']}: LevelDB 1.23's smoke suite (5 workloads, "
        "100,000 keys, 6 repetitions, the engine pinned to CPU 1) run "
        f"{len(same) + 1} times in a row with one binary, each run gated against the previous "
        f"one as the nightly job does ({len(same)} same-binary pairs: every exit 1 is a false "
        f"alarm); then {len(planted)} trials, each on a copy of that history, of a baseline run "
        f"and a candidate whose every point read costs {data.get('planted_ns', 0):.0f} ns more "
        f"({data['planted_share']:.0%} of a read: a planted regression of readrandom). A rule's "
        "`--confirm` runs only when that rule flags something."]


def section(path: Path = STUDY) -> list[str]:
    """Markdown lines of both studies; none of a study that has not run."""
    return _study_section(path, NOTES, WAYS, _confirm_intro) + \
        _study_section(CATCH, CATCH_NOTES, CATCH_WAYS, _catch_intro)
