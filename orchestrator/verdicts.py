"""Questions answered from the results DB through the analysis core (read-only).

`tidemark compare`, `gate` and `ab` and the site's Summary, Gate, Targets, workload and A/B
pages all call these with a read-only connection, so the same question gets the same answer
wherever it is asked: the same samples (store.reads), the same pairing, noise and verdicts
(analysis), the same partner run and the same gate decision.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import duckdb

from .analysis.compare import Report, SeriesSamples, build_report
from .analysis.decide import GateResult, decide
from .analysis.noise import History
from .analysis.partner import Partner, gate_partner
from .analysis.stats import Thresholds
from .analysis.targets import TargetResult, evaluate
from .errors import NotComparableError, SelectorError, UserError
from .gate import GateConf
from .store import reads


def compare_runs(con: duckdb.DuckDBPyConnection, base_id: str, cand_id: str,
                 metrics: Sequence[str], thresholds: Thresholds,
                 allow_different: bool = False, declared: bool = True) -> Report:
    """Compare two runs (ids) series by series; NotComparableError when nothing pairs. The
    metrics are those asked for and (`declared`) those the runs' workloads declare
    (`workload.metrics`); a bisect judges the one metric it names."""
    _refuse_same(base_id, cand_id)
    asked, by_workload = tuple(metrics), {}
    if declared:
        by_workload = reads.declared_metrics(con, [base_id, cand_id])
        metrics = judged_metrics(asked, by_workload)
    samples = _own_metrics(reads.load_samples_of_runs(con, [base_id, cand_id], metrics), asked,
                           by_workload)
    if not any(samples.values()):
        _refuse_unmeasured(con, base_id, cand_id, metrics)
    keys = {s.series.series_key for s in samples.get(base_id, [])}
    history = reads.load_history(con, sorted(keys), metrics)
    return _report(con, base_id, cand_id, samples, history, metrics, thresholds, allow_different)


def compare_pairs(con: duckdb.DuckDBPyConnection, pairs: Sequence[tuple[str, str]],
                  metrics: Sequence[str], thresholds: Thresholds
                  ) -> dict[tuple[str, str], Report | UserError]:
    """`compare_runs` of many (base, candidate) pairs, each run's samples and the history read
    once: (base, cand) → its Report, or the error `tidemark compare` would print for it.

    A series' noise reads only its own medians, so one history of every series gives each
    pair what `compare_runs` reads for it alone."""
    runs = sorted({run for pair in pairs for run in pair})
    asked, by_workload = tuple(metrics), reads.declared_metrics(con, runs)
    metrics = judged_metrics(asked, by_workload)
    samples = _own_metrics(reads.load_samples_of_runs(con, runs, metrics), asked, by_workload)
    keys = {s.series.series_key for run in samples.values() for s in run}
    history = reads.load_history(con, sorted(keys), metrics)
    out: dict[tuple[str, str], Report | UserError] = {}
    for base_id, cand_id in pairs:
        try:
            _refuse_same(base_id, cand_id)
            out[(base_id, cand_id)] = _report(con, base_id, cand_id, samples, history, metrics,
                                              thresholds, False)
        except UserError as error:
            out[(base_id, cand_id)] = error
    return out


def judged_metrics(asked: Sequence[str], by_workload: dict[str, list[str]]) -> tuple[str, ...]:
    """The metrics asked for, then those the runs' workloads declare: a snappy workload's
    bytes_per_second is judged beside the gate's ops_per_sec, which snappy does not have."""
    return tuple(dict.fromkeys((*asked, *(m for ms in by_workload.values() for m in ms))))


def _own_metrics(samples: dict[str, list[SeriesSamples]], asked: Sequence[str],
                 by_workload: dict[str, list[str]]) -> dict[str, list[SeriesSamples]]:
    """Each series judged on the metrics asked for and those its own workload declares, never
    on another workload's (zstd_compress's wall_s is not judged on zstd_bench's series)."""
    if not by_workload:
        return samples

    def own(s: SeriesSamples) -> SeriesSamples:
        keep = {*asked, *by_workload.get(str(s.series.identity.get("workload")), [])}
        if keep >= set(s.values):
            return s
        return dataclasses.replace(
            s, values={m: v for m, v in s.values.items() if m in keep},
            better={m: b for m, b in s.better.items() if m in keep},
            rounds={m: r for m, r in s.rounds.items() if m in keep})
    return {run: [o for o in map(own, series) if o.values] for run, series in samples.items()}


def _refuse_unmeasured(con: duckdb.DuckDBPyConnection, base_id: str, cand_id: str,
                       metrics: Sequence[str]) -> None:
    """Neither run measured any of the metrics asked for: name them and what was measured
    (otherwise the pairing would say the runs share no workload, which is not the problem)."""
    measured = reads.measured_metric_names(con, [base_id, cand_id])
    if measured:
        raise NotComparableError(
            f"metric {', '.join(map(repr, metrics))} was not measured in run {base_id} or "
            f"{cand_id}; they measured: {', '.join(measured)}; pick one with --metric")


def _refuse_same(base_id: str, cand_id: str) -> None:
    if base_id == cand_id:  # e.g. right after `tidemark label latest baseline`
        raise UserError(f"baseline and candidate are the same run {base_id}; pick another "
                        f"baseline or candidate")


def _report(con: duckdb.DuckDBPyConnection, base_id: str, cand_id: str,
            samples: dict[str, list[SeriesSamples]], history: History, metrics: Sequence[str],
            thresholds: Thresholds, allow_different: bool) -> Report:
    # The two sides of one `tidemark ab` job are compared as their design measured them (paired
    # by round), wherever the question is asked: ab, compare, gate, the site.
    return build_report(reads.run_facts(con, base_id), reads.run_facts(con, cand_id),
                        samples.get(base_id, []), samples.get(cand_id, []), metrics, thresholds,
                        history, allow_different, reads.ab_design(con, base_id, cand_id))


def resolve_baseline(con: duckdb.DuckDBPyConnection, selector: str) -> tuple[str | None, str]:
    """(run the configured baseline selector names, or None and why)."""
    if not selector:
        return None, "no baseline is configured (baseline in the gate config)"
    try:
        return reads.resolve_run(con, selector), ""
    except SelectorError as error:
        return None, (f"the configured baseline {selector!r} names no run ({error}); mark one "
                      f"with 'tidemark label RUN baseline'")


def partner_of(con: duckdb.DuckDBPyConnection, cand_id: str, selector: str) -> Partner:
    """What `cand_id` is gated against: the configured baseline, else its previous comparable run."""
    configured, problem = resolve_baseline(con, selector)
    return gate_partner(reads.load_coverage(con), cand_id, configured, problem)


def check_targets(con: duckdb.DuckDBPyConnection, report: Report) -> list[TargetResult]:
    """The candidate's declared targets and bars, series by series (bars against the same
    series of the baseline run)."""
    cand_id, base_id = report.cand["run_id"], report.base["run_id"]
    declared = reads.declared_targets(con, cand_id)
    if not declared:
        return []
    wanted = sorted({t.split()[0] for d in declared.values() for t in d["targets"]} |
                    {m for d in declared.values() for m in d["bars"]})
    observed = reads.series_medians(reads.load_samples(con, cand_id, wanted))
    baseline = {s.series_key: s for s in
                reads.series_medians(reads.load_samples(con, base_id, wanted))}
    return evaluate(declared, observed, baseline, cand_id)


def gate_runs(con: duckdb.DuckDBPyConnection, partner: Partner, cand_id: str, conf: GateConf,
              allow_different: bool = False) -> GateResult:
    """The gate's decision for `cand_id` against `partner` (its reasons say how it was chosen)."""
    if partner.run_id is None:
        raise UserError(f"nothing to gate {cand_id} against: {partner.why}")
    report = compare_runs(con, partner.run_id, cand_id, conf.metrics, conf.thresholds,
                          allow_different)
    targets = check_targets(con, report) if conf.targets else []
    return GateResult(decide(report, targets), report, tuple(targets), partner)
