"""The Statistical power page (site/power.md) from benchmarks/power.json.

Every verdict here comes from the analysis core (orchestrator/analysis): a trial's own job
verdict where the design is the job's (paired interleaved, duet, instruction counts), and the
core's other rules on the same stored rounds for the unpaired U test and the adaptive rule.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from orchestrator.analysis.paired import compare_paired, pair_rounds
from orchestrator.analysis.sequential import compare_sequential
from orchestrator.analysis.stats import (FASTER, HIGHER, SLOWER, Thresholds, compare_samples,
                                         robust_cv)
from benchmarks.confirm_page import section as confirm_section
from reports.pages.charts import power_chart

NOTES = Path(__file__).with_name("power_notes.md")  # the reading of the results, by hand
GOAL = {"wall": 0.02, "instructions": 0.005}


@dataclass(frozen=True)
class Analysis:
    """One design as the study reports it: which trials, how many of their rounds (a job's
    first n rounds are exactly a job of n rounds: rounds are run in order, one at a time), how
    each is judged, and what the verdict cost."""

    name: str
    jobs: tuple[str, ...]
    judge: Callable[[dict, int, Thresholds], str]  # (trial, rounds, thresholds) → verdict
    rounds: int = 0  # 0: every round of the trial

    def verdict(self, trial: dict, thresholds: Thresholds) -> tuple[str, float]:
        """(verdict, machine-seconds): the job without the rounds it did not use."""
        total = max(1, len(trial["a"]))
        used = min(total, self.rounds or total)
        verdict = self.judge(trial, used, thresholds)
        if isinstance(verdict, tuple):  # the adaptive rule says how many rounds it needed
            verdict, used = verdict
        overhead = trial["wall_s"] - trial["measured_s"]
        return verdict, overhead + trial["measured_s"] * used / total


def _first(values: dict[str, float], rounds: int) -> dict[str, float]:
    return {r: v for r, v in values.items() if int(r) <= rounds}


def _pairs(trial: dict, rounds: int):
    a, b = _first(trial["a"], rounds), _first(trial["b_values"], rounds)
    return pair_rounds(list(a.values()), [int(r) for r in a], list(b.values()),
                       [int(r) for r in b])


def _own(trial: dict, rounds: int, _: Thresholds) -> str:
    return trial["verdict"]  # the job's own verdict (instruction counts: every repetition)


def _paired(trial: dict, rounds: int, thresholds: Thresholds) -> str:
    return compare_paired(_pairs(trial, rounds), HIGHER, thresholds).verdict


def _unpaired(trial: dict, rounds: int, thresholds: Thresholds) -> str:
    return compare_samples(list(_first(trial["a"], rounds).values()),
                           list(_first(trial["b_values"], rounds).values()), HIGHER,
                           thresholds).verdict


def _adaptive(trial: dict, rounds: int, thresholds: Thresholds) -> tuple[str, int]:
    c = compare_sequential(_pairs(trial, rounds), HIGHER, rounds, thresholds)
    return c.verdict, c.base_n


def analyses(jobs: dict) -> list[Analysis]:
    short, long_ = jobs["interleaved"]["rounds"], jobs.get("interleaved-long", {}).get("rounds", 0)
    duet = jobs["duet"]["rounds"]
    both = ("interleaved", "interleaved-long")
    out = [Analysis(f"unpaired U test, {short} interleaved rounds", both, _unpaired, short),
           Analysis(f"paired, {short} interleaved rounds", both, _paired, short)]
    if long_:
        out += [Analysis(f"unpaired U test, {long_} interleaved rounds", ("interleaved-long",),
                         _unpaired),
                Analysis(f"paired, {long_} interleaved rounds", ("interleaved-long",), _paired),
                Analysis(f"adaptive, ≤ {long_} interleaved rounds", ("interleaved-long",),
                         _adaptive)]
    return out + [Analysis(f"duet, {duet} rounds (paired)", ("duet",), _paired),
                  Analysis(f"adaptive duet, ≤ {duet} rounds", ("duet",), _adaptive),
                  Analysis("instruction counts (callgrind)", ("instructions",), _own)]


def job_agreement(trials: list[dict], thresholds: Thresholds) -> tuple[int, int]:
    """How many paired jobs' own verdicts (tidemark ab) the page's re-analysis reproduces."""
    paired = [t for t in trials if t["job"] in ("interleaved", "interleaved-long", "duet")
              and t["verdict"] != "error"]
    same = sum(1 for t in paired if _paired(t, len(t["a"]) or 1, thresholds) == t["verdict"])
    return same, len(paired)


def wilson(hits: int, n: int) -> tuple[float, float]:
    """95% Wilson interval of a proportion."""
    if n == 0:
        return math.nan, math.nan
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def tally(analysis: Analysis, trials: list[dict], thresholds: Thresholds,
          loaded_after: int = 10**9) -> dict[float, dict]:
    """Per planted effect: counts of each verdict and the machine-minutes per verdict (of the
    trials that had the machine to themselves: plan position below loaded_after)."""
    out: dict[float, dict] = {}
    for trial in trials:
        if trial["job"] not in analysis.jobs or trial["verdict"] == "error":
            continue
        verdict, seconds = analysis.verdict(trial, thresholds)
        cell = out.setdefault(trial["effect"], {"n": 0, "verdicts": {}, "seconds": [],
                                                "change": []})
        cell["n"] += 1
        cell["verdicts"][verdict] = cell["verdicts"].get(verdict, 0) + 1
        if trial["seed"] - 100 < loaded_after or trial["job"] != "instructions":
            cell["seconds"].append(seconds)
        cell["change"].append((trial["ratio"] - 1) * 100)
    return dict(sorted(out.items()))


def _minutes(seconds: list[float]) -> str:
    return f"{statistics.median(seconds) / 60:.2f}" if seconds else "–"


def _pct(x: float) -> str:
    return f"{x:.0%}" if math.isfinite(x) else "–"


def _effect(e: float) -> str:
    return "A/A" if e == 0 else f"+{e * 100:g}%"


def _summary_rows(results: dict[str, dict], kinds: dict[str, str]) -> list[str]:
    rows = ["| design | called slower at the goal's effect | A/A false alarms | minutes per "
            "verdict (median) | goal met |", "| --- | ---: | ---: | ---: | --- |"]
    for name, cells in results.items():
        goal = GOAL[kinds[name]]
        hit, aa = cells.get(goal), cells.get(0.0)
        if not hit or not aa:
            continue
        slow = hit["verdicts"].get(SLOWER, 0)
        alarms = aa["verdicts"].get(SLOWER, 0) + aa["verdicts"].get(FASTER, 0)
        lo, _ = wilson(slow, hit["n"])
        spent = hit["seconds"] + aa["seconds"]
        minutes = statistics.median(spent) / 60 if spent else math.nan
        power_goal = 1.0 if kinds[name] == "instructions" else 0.95
        alarm_goal = 0 if kinds[name] == "instructions" else aa["n"] / 40
        met = slow / hit["n"] >= power_goal and alarms <= alarm_goal and minutes <= 10
        rows.append(f"| {name} | {slow}/{hit['n']} at {_effect(goal)} ({_pct(slow / hit['n'])}; "
                    f"95% CI from {_pct(lo)}) | {alarms}/{aa['n']} | {minutes:.2f} | "
                    f"{'yes' if met else 'no'} |".replace("| nan |", "| – |"))
    return rows


def _detail_rows(results: dict[str, dict]) -> list[str]:
    rows = ["| design | planted | trials | slower | faster | no change | cannot tell / not enough "
            "| median observed change | minutes per verdict |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, cells in results.items():
        for effect, cell in cells.items():
            v = cell["verdicts"]
            other = cell["n"] - v.get(SLOWER, 0) - v.get(FASTER, 0) - v.get("no significant change", 0)
            rows.append(f"| {name} | {_effect(effect)} | {cell['n']} | {v.get(SLOWER, 0)} | "
                        f"{v.get(FASTER, 0)} | {v.get('no significant change', 0)} | {other} | "
                        f"{statistics.median(cell['change']):+.2f}% | "
                        f"{_minutes(cell['seconds'])} |")
    return rows


def _noise_rows(trials: list[dict]) -> list[str]:
    """How much one round moves, per job kind: the spread the designs have to see through."""
    rows = ["| job | A/A trials | per-invocation robust CV (median over trials) | per-round "
            "ratio B/A robust CV (median) |", "| --- | ---: | ---: | ---: |"]
    for job in ("interleaved", "interleaved-long", "duet", "instructions"):
        aa = [t for t in trials if t["job"] == job and t["effect"] == 0 and t["verdict"] != "error"]
        if not aa:
            continue
        cv = statistics.median(robust_cv(list(t["a"].values())) for t in aa)
        ratios = [robust_cv(_pairs(t, len(t["a"])).ratios) for t in aa if len(t["a"]) > 2]
        paired = _pct_small(statistics.median(ratios)) if ratios else "–"
        rows.append(f"| {job} | {len(aa)} | {_pct_small(cv)} | {paired} |")
    return rows


def _pct_small(x: float) -> str:
    return f"{x * 100:.2f}%" if math.isfinite(x) else "–"


def _chart(results: dict[str, dict]) -> str:
    lines = [{"label": name, "x": [e * 100 for e in cells],
              "y": [cells[e]["verdicts"].get(SLOWER, 0) / cells[e]["n"] * 100 for e in cells]}
             for name, cells in results.items()]
    return power_chart(lines, "power-chart")


def _schedule_note(data: dict) -> list[str]:
    """What changed in the study's plan while it ran, and which trials were not quiet."""
    out = []
    if data.get("replanned"):
        r = data["replanned"]
        out.append(f"**Re-planned after {r['after_trials']} trials** ({r['at']}): {r['why']}.")
    loaded = [t for t in data["trials"] if t["job"] == "instructions"
              and t.get("seed", 0) - 100 >= data.get("loaded_after", 10**9)]
    if loaded:
        out.append(f"The last {len(loaded)} instruction-count trials ran while other work ran on "
                   "the machine: their counts do not depend on load, but their machine-minutes "
                   "are left out of the minutes per verdict.")
    for ext in data.get("extensions", []):
        out.append(f"**Extended** ({ext['started']}): more `{ext['job']}` trials at "
                   f"+{ext['effect']:.0%} until there were {ext['to']}, at the study's planted "
                   f"amount (each trial's own A side measures that day's cost per read; see the "
                   f"reading below).")
    return out


def page(data: dict) -> str:
    thresholds = Thresholds(alpha=0.05, min_effect=0.01, unmeasured_noise=0.0)
    trials = data["trials"]
    chosen = analyses(data["jobs"])
    results = {a.name: tally(a, trials, thresholds, data.get("loaded_after", 10**9))
               for a in chosen}
    kinds = {a.name: "instructions" if a.jobs == ("instructions",) else "wall" for a in chosen}
    same, paired = job_agreement(trials, thresholds)
    cal = data["calibration"]
    errors = [t for t in trials if t["verdict"] == "error"]
    lines = [
        "# Statistical power", "",
        "How often each A/B design of `tidemark ab` calls a planted slowdown of exactly known size, "
        "how often it calls a change between a build and itself (A/A), and what each verdict cost "
        "in machine time — measured on this project's shared 2-core VM with nothing else of ours "
        "running.", "",
        f"Study: `benchmarks/power.py`, {len(trials)} trials from {data['started']} to "
        f"{data.get('finished', '(unfinished)')}; RocksDB 7.8.3 `readrandom`, 200,000 keys × "
        "100 B, warm cache, 100,000 reads per invocation, one thread. Each trial is one `tidemark "
        "ab` job in a fresh results DB. A change is called when p < 0.05, the 95% CI excludes "
        "no change, and the change is at least 1% (fixed before the study: half the 2% goal); "
        "instruction counts use the deterministic rule (≥ 0.5% and beyond the spread of the "
        "repetitions).", "",
        "**The planted regression.** One binary serves both sides: the planted patch spins a "
        "loop in every point read, off unless asked. Wall-clock jobs plant `planted_ns` = effect "
        f"× the cost of a read measured by a calibration job ({cal['interleaved']['ns_per_read']:,.0f} ns "
        f"interleaved, {cal['duet']['ns_per_read']:,.0f} ns in a duet); instruction-count jobs "
        "plant `planted_spins` = effect × instructions per read "
        f"({cal['instructions']['instructions_per_read']:,.0f}) / instructions per spin "
        f"({cal['instructions']['instructions_per_spin']:.3f}, measured).", "",
        "**The jobs.** *interleaved*: `machine=ci-2core-shielded` (the engine alone on a "
        "shielded CPU 1, Tidemark on CPU 0), A and B back to back in a seeded random order per "
        "round; *duet*: `machine=ci-2core`, A and B at the same time on CPUs 0 and 1, swapped "
        "every round; *instructions*: callgrind on 10,000 reads, 2 repetitions per side. Rounds "
        "run one after another, so the first n rounds of a job are exactly an n-round job: the "
        "12-round rows also use the first 12 rounds of the 40-round jobs, and the adaptive rows "
        "replay the stopping rule of `tidemark ab --adaptive` (orchestrator/analysis/sequential.py) "
        "over a job's rounds in order. Every verdict here comes from the analysis core; on the "
        f"paired jobs' full rounds it reproduces the jobs' own `tidemark ab` verdicts in {same} of "
        f"{paired} trials.", "",
        *_schedule_note(data), "",
        "## The goal, design by design", "",
        "Goal: a planted 2% slowdown called in ≥ 95% of trials, at most 1 false alarm in 40 A/A "
        "trials, at most 10 machine-minutes per verdict; instruction counts: 0.5% called in "
        "every trial and no A/A false alarm.", "",
        *_summary_rows(results, kinds), "",
        "## Power against effect size", "",
        "Share of trials called slower at each planted cost (0 = A/A: there, the share called "
        "slower is half the false alarms).", "",
        _chart(results), "",
        "## Every design and effect", "",
        *_detail_rows(results), "",
        "Machine-minutes per verdict: the whole `tidemark ab` job (both fills, warm-ups, rounds) "
        "on a machine it has to itself; for the adaptive rule, the job without the rounds it did "
        "not need. \"Cannot tell\" is an adaptive job whose round budget ran out.", "",
        "## The noise the designs see through", "",
        *_noise_rows(trials), "",
    ]
    if errors:
        lines += [f"{len(errors)} trials gave no verdict (kept in the JSON with the reason): "
                  + "; ".join(sorted({e['error'][:120] for e in errors})), ""]
    lines += confirm_section()
    if NOTES.is_file():
        lines += [NOTES.read_text().strip(), ""]
    lines += ["Every trial — planted amount, verdict, ratio, CI, p, run ids, every round's values "
              "and the job's time — is in `benchmarks/power.json`; "
              "`.venv/bin/python benchmarks/power.py --page-only` rewrites this page from it.", ""]
    return "\n".join(lines)
