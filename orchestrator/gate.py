"""The gate's config (conf/gate/default.yaml) and its PR-comment summary.

The decision itself is analysis.decide; verdicts.gate_runs applies it to runs in the DB.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .analysis.confirm import SCOPES, UNRESOLVED_SCOPE
from .analysis.decide import CANNOT_TELL, PASS, REGRESSION, GateResult
from .analysis.deterministic import SUMMARY_METRIC
from .analysis.stats import DEFAULT_TAIL_QUANTILE, Thresholds
from .compare_format import markdown, num
from .errors import ConfigError, SelectorError
from .plan.param_checks import check_thresholds
from .store.reads import parse_selector

DEFAULT_GATE = Path(__file__).resolve().parents[1] / "conf" / "gate" / "default.yaml"


@dataclass(frozen=True)
class GateConf:
    metrics: tuple[str, ...] = ("ops_per_sec",)
    alpha: float = 0.05
    min_effect: float = 0.02
    noise_k: float = 2.0
    unmeasured_noise: float = 0.03
    deterministic_min_effect: float = 0.005
    # The quantile of a series' run-to-run changes a change between runs must also exceed
    # (analysis.noise); 0 leaves it out.
    tail_quantile: float = DEFAULT_TAIL_QUANTILE
    # Which series `gate --confirm` re-measures (analysis.confirm): "flagged" regressions only,
    # or also every series the runs could not resolve at min_effect ("unresolved").
    confirm_scope: str = UNRESOLVED_SCOPE
    targets: bool = False
    # A run selector (store.reads.parse_selector): what `tidemark gate` and the site compare with.
    baseline: str = ""

    @property
    def summary_metrics(self) -> tuple[str, ...]:
        """What the site's Summary and A/B pages, `compare` and `ab` show: the gated metrics
        and the instruction count per op beside them (rows only where a run measured it,
        callgrind=true; judged by the core's deterministic rule)."""
        return tuple(dict.fromkeys((*self.metrics, SUMMARY_METRIC)))

    @property
    def thresholds(self) -> Thresholds:
        return Thresholds(self.alpha, self.min_effect, self.noise_k, self.unmeasured_noise,
                          self.deterministic_min_effect, self.tail_quantile)


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
            parse_selector(baseline)
        except SelectorError as error:
            raise ConfigError(f"baseline in {path}: {error}") from None
    conf = GateConf(**{**data, "baseline": baseline})
    if conf.confirm_scope not in SCOPES:
        raise ConfigError(f"confirm_scope {conf.confirm_scope!r} in {path}; use one of: "
                          f"{', '.join(SCOPES)}")
    check_thresholds(conf.alpha, conf.min_effect, conf.noise_k, conf.unmeasured_noise,
                     conf.tail_quantile)
    return conf


TITLES = {PASS: "✅ tidemark gate: pass", REGRESSION: "❌ tidemark gate: regression",
          CANNOT_TELL: "⚠️ tidemark gate: cannot tell"}


def summary_markdown(result: GateResult) -> str:
    """The PR comment: the verdict first, then the reasons, the comparison and the targets."""
    out = [f"### {TITLES[result.decision.code]}", ""]
    if result.partner is not None and not result.partner.configured and result.partner.why:
        out += [f"Baseline: {result.partner.why}.", ""]
    out += [f"- {r}" for r in result.decision.reasons]
    out += ["", markdown(result.report)]
    if result.targets:
        out += ["| series | target | observed | status |", "| --- | --- | ---: | --- |"]
        out += [f"| {t.series} | {t.target} | {num(t.observed) if t.observed is not None else '–'} "
                f"| {t.status} |" for t in result.targets]
    return "\n".join(out) + "\n"
