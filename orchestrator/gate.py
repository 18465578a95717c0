"""`tidemark gate`: pass / regression / cannot tell, as an exit code and a PR-comment summary.

Exit 0: every gated metric passed; 1: at least one is significantly slower (or misses a target
when targets are enforced); 2: not comparable, not enough repetitions, or a usage error — a gate
that cannot tell must not pass silently.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import samples
from .compare import Report, compare_runs
from .compare_format import markdown, num
from .errors import ConfigError
from .stats import NOT_ENOUGH, SLOWER, Thresholds, median
from .store import connect
from .targets import MEETS, NO_DATA, TargetResult, evaluate, workload_declarations

PASS, REGRESSION, CANNOT_TELL = 0, 1, 2
DEFAULT_GATE = Path(__file__).resolve().parents[1] / "conf" / "gate" / "default.yaml"


@dataclass(frozen=True)
class GateConf:
    metrics: tuple[str, ...] = ("ops_per_sec",)
    alpha: float = 0.05
    min_effect: float = 0.02
    noise_k: float = 2.0
    unmeasured_noise: float = 0.03
    targets: bool = False
    # A run selector (samples.parse_selector): what `tidemark gate` and the site compare with.
    baseline: str = ""

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(self.alpha, self.min_effect, self.noise_k, self.unmeasured_noise)


@dataclass(frozen=True)
class GateResult:
    code: int
    reasons: tuple[str, ...]
    report: Report
    targets: tuple[TargetResult, ...] = field(default_factory=tuple)


def load_gate_conf(path: Path) -> GateConf:
    """The gate's YAML; an unknown key fails in one line naming the valid ones."""
    if not path.exists():
        raise ConfigError(f"no gate config at {path}; see conf/gate/default.yaml")
    data = yaml.safe_load(path.read_text()) or {}
    valid = set(GateConf.__dataclass_fields__)
    unknown = sorted(set(data) - valid)
    if unknown:
        raise ConfigError(f"unknown gate key {unknown[0]!r} in {path}; valid keys: {', '.join(sorted(valid))}")
    if "metrics" in data:
        data["metrics"] = tuple(data["metrics"])
    baseline = str(data.get("baseline") or "")
    if baseline:
        try:
            samples.parse_selector(baseline)
        except samples.SelectorError as error:
            raise ConfigError(f"baseline in {path}: {error}") from None
    return GateConf(**{**data, "baseline": baseline})


def decide(report: Report, target_results: list[TargetResult]) -> tuple[int, list[str]]:
    """The exit code and its reasons (pure)."""
    slower = [r for r in report.rows if r.comparison.verdict == SLOWER]
    missed = [t for t in target_results if t.status not in (MEETS, NO_DATA)]
    if slower or missed:
        reasons = [f"{r.label} {r.metric}: {r.comparison.change_pct:+.1f}% (p={num(r.comparison.p_value)}, "
                   f"threshold {r.comparison.threshold * 100:.1f}%)" for r in slower]
        reasons += [f"{t.workload}: {t.target}, observed {num(t.observed)} → {t.status}" for t in missed]
        return REGRESSION, reasons
    short = [r for r in report.rows if r.comparison.verdict == NOT_ENOUGH]
    if not report.rows or short:
        names = ", ".join(f"{r.label} (n={r.comparison.base_n}/{r.comparison.cand_n})" for r in short)
        return CANNOT_TELL, [f"not enough repetitions to tell: {names or 'no common measurements'}; "
                             f"run at least 4 measured repetitions per side"]
    return PASS, []


def _medians(con: Any, run_id: str, metrics: list[str]) -> tuple[dict, dict]:
    values: dict[tuple[str, str], float] = {}
    better: dict[str, str] = {}
    for side in samples.load_side(con, run_id, metrics):
        for metric, vals in side.values.items():
            values[(side.side.identity["workload"], metric)] = median(vals)
            better[metric] = side.better[metric]
    return values, better


def check_targets(db: Path, report: Report) -> list[TargetResult]:
    """The candidate's declared targets and bars, against its medians and the baseline's."""
    con = connect(db, read_only=True)
    try:
        cand_id, base_id = report.cand["run_id"], report.base["run_id"]
        row = con.execute("SELECT config::VARCHAR FROM runs WHERE run_id = ?", [cand_id]).fetchone()
        declared = workload_declarations(json.loads(row[0]) if row and row[0] else {})
        metrics = sorted({t.split()[0] for d in declared.values() for t in d["targets"]} |
                         {m for d in declared.values() for m in d["bars"]})
        if not metrics:
            return []
        observed, better = _medians(con, cand_id, metrics)
        baseline, _ = _medians(con, base_id, metrics)
        return evaluate(declared, observed, baseline, better, cand_id)
    finally:
        con.close()


def run_gate(db: Path, baseline: str, candidate: str, conf: GateConf,
             allow_different: bool = False) -> GateResult:
    report = compare_runs(db, baseline, candidate, conf.metrics, conf.thresholds, allow_different)
    target_results = check_targets(db, report) if conf.targets else []
    code, reasons = decide(report, target_results)
    return GateResult(code, tuple(reasons), report, tuple(target_results))


def summary_markdown(result: GateResult) -> str:
    """The PR comment: the verdict first, then the reasons, the comparison and the targets."""
    title = {PASS: "✅ tidemark gate: pass", REGRESSION: "❌ tidemark gate: regression",
             CANNOT_TELL: "⚠️ tidemark gate: cannot tell"}[result.code]
    out = [f"### {title}", ""]
    out += [f"- {r}" for r in result.reasons]
    out += ["", markdown(result.report)]
    if result.targets:
        out += ["| workload | target | observed | status |", "| --- | --- | ---: | --- |"]
        out += [f"| {t.workload} | {t.target} | {num(t.observed) if t.observed is not None else '–'} "
                f"| {t.status} |" for t in result.targets]
    return "\n".join(out) + "\n"
