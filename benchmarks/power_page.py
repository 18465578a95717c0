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

from orchestrator.analysis.paired import pair_rounds
from orchestrator.analysis.sequential import compare_sequential
from orchestrator.analysis.stats import (FASTER, HIGHER, SLOWER, Thresholds, compare_samples,
                                         robust_cv)
from reports.charts import power_chart

NOTES = Path(__file__).with_name("power_notes.md")  # the reading of the results, by hand
GOAL = {"wall": 0.02, "instructions": 0.005}


@dataclass(frozen=True)
class Analysis:
    """One design as the study reports it: which trials, how each is judged, what it cost."""

    name: str
    job: str
    judge: Callable[[dict, Thresholds], tuple[str, float]]  # → (verdict, machine-seconds)


def _own(trial: dict, _: Thresholds) -> tuple[str, float]:
    return trial["verdict"], trial["wall_s"]


def _pairs(trial: dict):
    a, b = trial["a"], trial["b_values"]
    return pair_rounds(list(a.values()), [int(r) for r in a], list(b.values()),
                       [int(r) for r in b])


def _unpaired(trial: dict, thresholds: Thresholds) -> tuple[str, float]:
    c = compare_samples(list(trial["a"].values()), list(trial["b_values"].values()), HIGHER,
                        thresholds)
    return c.verdict, trial["wall_s"]


def _adaptive(rounds: int) -> Callable[[dict, Thresholds], tuple[str, float]]:
    def judge(trial: dict, thresholds: Thresholds) -> tuple[str, float]:
        c = compare_sequential(_pairs(trial), HIGHER, rounds, thresholds)
        used = c.base_n / max(1, len(trial["a"]))
        overhead = trial["wall_s"] - trial["measured_s"]
        return c.verdict, overhead + trial["measured_s"] * min(1.0, used)
    return judge


def analyses(jobs: dict) -> list[Analysis]:
    i_rounds, d_rounds = jobs["interleaved"]["rounds"], jobs["duet"]["rounds"]
    return [
        Analysis("unpaired U test (interleaved rounds)", "interleaved", _unpaired),
        Analysis("paired, interleaved", "interleaved", _own),
        Analysis(f"adaptive, interleaved (≤ {i_rounds} rounds)", "interleaved", _adaptive(i_rounds)),
        Analysis("duet (paired)", "duet", _own),
        Analysis(f"adaptive, duet (≤ {d_rounds} rounds)", "duet", _adaptive(d_rounds)),
        Analysis("instruction counts (callgrind)", "instructions", _own),
    ]


def wilson(hits: int, n: int) -> tuple[float, float]:
    """95% Wilson interval of a proportion."""
    if n == 0:
        return math.nan, math.nan
    z, p = 1.96, hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def tally(analysis: Analysis, trials: list[dict], thresholds: Thresholds) -> dict[float, dict]:
    """Per planted effect: counts of each verdict and the machine-minutes per verdict."""
    out: dict[float, dict] = {}
    for trial in trials:
        if trial["job"] != analysis.job or trial["verdict"] == "error":
            continue
        verdict, seconds = analysis.judge(trial, thresholds)
        cell = out.setdefault(trial["effect"], {"n": 0, "verdicts": {}, "seconds": [],
                                                "change": []})
        cell["n"] += 1
        cell["verdicts"][verdict] = cell["verdicts"].get(verdict, 0) + 1
        cell["seconds"].append(seconds)
        cell["change"].append((trial["ratio"] - 1) * 100)
    return dict(sorted(out.items()))


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
        minutes = statistics.median(hit["seconds"] + aa["seconds"]) / 60
        power_goal = 1.0 if kinds[name] == "instructions" else 0.95
        alarm_goal = 0 if kinds[name] == "instructions" else aa["n"] / 40
        met = slow / hit["n"] >= power_goal and alarms <= alarm_goal and minutes <= 10
        rows.append(f"| {name} | {slow}/{hit['n']} at {_effect(goal)} ({_pct(slow / hit['n'])}; "
                    f"95% CI from {_pct(lo)}) | {alarms}/{aa['n']} | {minutes:.2f} | "
                    f"{'yes' if met else 'no'} |")
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
                        f"{statistics.median(cell['seconds']) / 60:.2f} |")
    return rows


def _noise_rows(trials: list[dict]) -> list[str]:
    """How much one round moves, per job kind: the spread the designs have to see through."""
    rows = ["| job | A/A trials | per-invocation robust CV (median over trials) | per-round "
            "ratio B/A robust CV (median) |", "| --- | ---: | ---: | ---: |"]
    for job in ("interleaved", "duet", "instructions"):
        aa = [t for t in trials if t["job"] == job and t["effect"] == 0 and t["verdict"] != "error"]
        if not aa:
            continue
        cv = statistics.median(robust_cv(list(t["a"].values())) for t in aa)
        ratios = [robust_cv(_pairs(t).ratios) for t in aa if len(t["a"]) > 2]
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


def page(data: dict) -> str:
    thresholds = Thresholds(alpha=0.05, min_effect=0.01, unmeasured_noise=0.0)
    trials = data["trials"]
    chosen = analyses(data["jobs"])
    results = {a.name: tally(a, trials, thresholds) for a in chosen}
    kinds = {a.name: "instructions" if a.job == "instructions" else "wall" for a in chosen}
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
    if NOTES.is_file():
        lines += [NOTES.read_text().strip(), ""]
    lines += ["Every trial — planted amount, verdict, ratio, CI, p, run ids, every round's values "
              "and the job's time — is in `benchmarks/power.json`; "
              "`.venv/bin/python benchmarks/power.py --page-only` rewrites this page from it.", ""]
    return "\n".join(lines)
