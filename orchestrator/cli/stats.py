"""Arguments of `tidemark compare`, `tidemark gate` and `tidemark ab` (thin wiring only).

cli/main.py dispatches to these; `ab` composes both sides' configs with cli/compose.py.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from ..analysis.confirm import SCOPES, UNRESOLVED_SCOPE
from ..analysis.partner import Partner
from ..analysis.stats import Thresholds
from ..errors import ConfigError
from ..plan.param_checks import check_thresholds
from ..store import connect
from ..store.reads import resolve_run

DEFAULT_DB = "results/tidemark.duckdb"
FORMATS = ("table", "markdown", "json")
JUNIT = "junit"


def _add_common(parser: argparse.ArgumentParser, formats: tuple[str, ...] = FORMATS) -> None:
    parser.add_argument("--metric", action="append", dest="metrics",
                        help="metric to compare (repeatable; default: the gate config's metrics, "
                             "and for compare/ab instructions_per_op where a run measured it)")
    parser.add_argument("--allow-different", action="store_true",
                        help="compare even where machine, build, cache, threads or params differ; "
                             "each difference is named")
    parser.add_argument("--format", choices=formats, default="table", help=(
        "junit (gate only): JUnit XML of the gate's report, alone on standard output (the "
        "gate's own lines go to standard error), for a CI system's test report"
        if JUNIT in formats else None))
    parser.add_argument("--config", help="gate config whose alpha, min_effect, noise_k and "
                        "unmeasured_noise decide verdicts (default conf/gate/default.yaml)")
    parser.add_argument("--min-effect", type=float, help="smallest relative change called, e.g. "
                        "0.02 (default: the gate config's)")
    parser.add_argument("--alpha", type=float, help="significance level of the U test "
                        "(default: the gate config's)")


def _gate_conf(args: argparse.Namespace) -> Any:
    """The gate config: compare, ab, gate and the site share one definition of a change."""
    from .. import gate

    return gate.load_gate_conf(Path(args.config) if args.config else gate.DEFAULT_GATE)


def _thresholds(args: argparse.Namespace, base: Thresholds) -> Thresholds:
    """The gate config's thresholds with --alpha / --min-effect on top."""
    given = dataclasses.replace(
        base, alpha=base.alpha if args.alpha is None else args.alpha,
        min_effect=base.min_effect if args.min_effect is None else args.min_effect)
    check_thresholds(given.alpha, given.min_effect, given.noise_k, given.unmeasured_noise)
    return given


def _print(report: Any, fmt: str, console: Console) -> None:
    from ..compare_format import as_json, footer_lines, markdown, rich_table

    if fmt == "json":
        print(as_json(report))
    elif fmt == "markdown":
        print(markdown(report), end="")
    else:
        # Nine columns: wider than a default 80-column pipe, so do not let rich squeeze them.
        wide = Console(file=console.file, width=max(console.width, 150), highlight=False)
        wide.print(rich_table(report))
        for line in footer_lines(report):
            console.print(line)


def compare_command(argv: list[str], console: Console) -> None:
    from ..verdicts import compare_runs

    parser = argparse.ArgumentParser(prog="tidemark compare", description=(
        "Compare two runs series by series. BASE and CAND are run ids or selectors: latest, "
        "latest~1, engine.version=7.8.3, label=X (add ~N for the N-th older match)."))
    parser.add_argument("base")
    parser.add_argument("cand")
    parser.add_argument("--db", default=DEFAULT_DB)
    _add_common(parser)
    args = parser.parse_args(argv)
    conf = _gate_conf(args)
    con = connect(Path(args.db), read_only=True)
    try:
        # --metric names exactly what is compared; without it the workloads' own metrics join
        report = compare_runs(con, resolve_run(con, args.base), resolve_run(con, args.cand),
                              tuple(args.metrics or conf.summary_metrics),
                              _thresholds(args, conf.thresholds), args.allow_different,
                              declared=not args.metrics)
    finally:
        con.close()
    _print(report, args.format, console)


def gate_command(argv: list[str], console: Console) -> None:
    from .. import gate
    from ..compare_format import junit_xml
    from ..store.reads import series_identities
    from ..verdicts import gate_runs, partner_of

    parser = argparse.ArgumentParser(prog="tidemark gate", description=(
        "Exit 0 pass, 1 regression, 2 cannot tell (not comparable, too few repetitions, missing "
        "series, failed invocations, a candidate run that did not end ok) or a usage error."))
    parser.add_argument("--baseline", help="run id or selector of the baseline (default: "
                        "`baseline` in the gate config, else the candidate's previous "
                        "comparable run)")
    parser.add_argument("--candidate", default="latest", help="run id or selector (default latest)")
    parser.add_argument("--db", default=DEFAULT_DB)
    parser.add_argument("--targets", action="store_true", help="also enforce workload targets and bars")
    parser.add_argument("--summary", help="write a Markdown summary (a PR comment) here")
    parser.add_argument("--confirm", action="store_true", help=(
        "re-measure every flagged regression (and, by default, every series the runs could not "
        "resolve at min_effect): both runs' builds interleaved and paired on this machine (an "
        "adaptive tidemark ab), judged at min_effect, and exit on that verdict; a run that "
        "cannot be re-measured (an import, another machine, a build its recipe no longer makes) "
        "keeps a provisional verdict, and a regression left provisional exits 2"))
    parser.add_argument("--confirm-scope", choices=SCOPES, help=(
        "--confirm: re-measure only the flagged regressions, or also every series whose "
        "between-run threshold is above min_effect (default: confirm_scope in the gate config, "
        "unresolved)"))
    parser.add_argument("--confirm-rounds", type=int, default=30,
                        help="--confirm: the paired job's round budget (default 30)")
    parser.add_argument("--confirm-minutes", type=float, default=0.0,
                        help="--confirm: its time budget in minutes (default: none)")
    _add_common(parser, (*FORMATS, JUNIT))
    args = parser.parse_args(argv)
    if args.format == JUNIT:  # the document alone on stdout, where a CI step redirects it
        console = Console(file=sys.stderr, highlight=False, width=console.width)
    conf = _gate_conf(args)
    given = _thresholds(args, conf.thresholds)
    conf = dataclasses.replace(conf, metrics=tuple(args.metrics or conf.metrics),
                               alpha=given.alpha, min_effect=given.min_effect,
                               targets=conf.targets or args.targets)
    con = connect(Path(args.db), read_only=True)
    try:
        cand_id = resolve_run(con, args.candidate)
        partner = Partner(resolve_run(con, args.baseline), True) if args.baseline else \
            partner_of(con, cand_id, conf.baseline)
        result = gate_runs(con, partner, cand_id, conf, args.allow_different)
        identities = series_identities(con, [r.series_key for r in result.report.rows])
    finally:
        con.close()
    if not partner.configured:
        console.print(f"baseline: {partner.why}", markup=False)
    if args.format != JUNIT:
        _print(result.report, args.format, console)
    confirmations: Any = ()
    if args.confirm:
        result, confirmations = _confirmed(result, Path(args.db), conf, args, console)
    if args.format == JUNIT:  # after --confirm: the verdicts the gate exits on
        print(junit_xml(result.report, identities, confirmations, result.decision.word), end="")
    for target in result.targets:
        console.print(f"target {target.series}: {target.target} → {target.status}", markup=False)
    if args.summary:
        Path(args.summary).write_text(gate.summary_markdown(result))
    decision = result.decision
    console.print(f"gate: {decision.word.upper() if decision.code == 1 else decision.word}" +
                  "".join(f"\n  {r}" for r in decision.reasons), markup=False)
    raise SystemExit(decision.code)


def _confirmed(result: Any, db: Path, conf: Any, args: argparse.Namespace,
               console: Console) -> tuple[Any, Any]:
    """The gate's result with its flagged series re-measured paired (analysis.confirm), and
    the confirmations."""
    from ..analysis.confirm import confirmed_result, rows_to_confirm
    from ..analysis.sequential import plan_looks
    from ..run.confirm import ConfirmOptions, confirm
    from ..signals import signals_interrupt
    from .confirm import compose_sides, stored_run

    scope = args.confirm_scope or conf.confirm_scope
    rows = rows_to_confirm(result.report, conf.min_effect, scope)
    if not rows:
        console.print("confirm: no regression flagged between the runs" + (
            f" and every series resolved at {conf.min_effect:.1%}" if scope == UNRESOLVED_SCOPE
            else "")
            + "; nothing to re-measure", markup=False)
        return result, ()
    if plan_looks(conf.alpha, args.confirm_rounds) is None:
        raise ConfigError(f"--confirm-rounds {args.confirm_rounds} leaves the stopping rule no "
                          f"look at alpha {conf.alpha:g}; use 20 or more")
    con = connect(db, read_only=True)
    try:
        runs = (stored_run(con, result.report.base["run_id"]),
                stored_run(con, result.report.cand["run_id"]))
    finally:
        con.close()
    sides = compose_sides(runs, rows, db, args.confirm_rounds)
    options = ConfirmOptions(args.confirm_rounds, args.confirm_minutes, conf.metrics,
                             conf.thresholds)
    with signals_interrupt():
        done = confirm(runs, rows, sides, db, console, options)
    for item in done:
        console.print(f"confirm: {item.text()}", markup=False, soft_wrap=True)
    return confirmed_result(result, done), done


def _cpu_pair(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(c) for c in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a CPU list; use e.g. 0,1") from None


def split_ab_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    from ..analysis.paired import DESIGNS, INTERLEAVED
    from ..analysis.sequential import DEFAULT_MAX_ROUNDS

    parser = argparse.ArgumentParser(prog="tidemark ab", description=(
        "Run two configs in rounds (one repetition of each side per round) and compare them as "
        "designed. e.g. tidemark ab --a engine.version=7.8.3 --b engine.version=9.10.0 -- "
        "workload=readrandom repetitions=10"))
    parser.add_argument("--a", action="append", default=[], help="override for side A (repeatable)")
    parser.add_argument("--b", action="append", default=[], help="override for side B (repeatable)")
    parser.add_argument("--seed", type=int, help="seed of the per-round order (default: random, recorded)")
    parser.add_argument("--design", choices=DESIGNS, default=INTERLEAVED, help=(
        "interleaved: A and B back to back in a seeded random order, analysed as per-round "
        "pairs (default); duet: A and B at the same time, each on its own CPU (swapped every "
        "round), analysed as pairs; unpaired: interleaved, analysed as two independent samples"))
    parser.add_argument("--duet-cpus", type=_cpu_pair, default=(),
                        help="the two CPUs of a duet (default: the machine profile's first two "
                             "pin_cpus, else 0,1)")
    parser.add_argument("--adaptive", action="store_true", help=(
        "add rounds until the CI of the change is clear of the threshold or inside it, or the "
        "budget is spent (then: cannot tell)"))
    parser.add_argument("--max-rounds", type=int, default=DEFAULT_MAX_ROUNDS,
                        help=f"adaptive: round budget per point (default {DEFAULT_MAX_ROUNDS})")
    parser.add_argument("--max-minutes", type=float, default=0.0,
                        help="adaptive: time budget of the measured rounds (default: none)")
    _add_common(parser)
    from .compose import parse_with_overrides
    return parse_with_overrides(parser, argv)


def ab_options(args: argparse.Namespace, thresholds: Thresholds, metrics: tuple[str, ...],
               overrides: list[str]) -> Any:
    """The design and stopping options; refuses combinations the analysis cannot honour."""
    from ..run.ab import AbOptions
    from ..analysis.paired import UNPAIRED
    from ..analysis.sequential import plan_looks

    if args.adaptive:
        if args.design == UNPAIRED:
            raise ConfigError("--adaptive needs a paired design; use --design interleaved or duet")
        given = next((o for o in overrides if o.split("=")[0].lstrip("+") == "repetitions"), None)
        if given:
            raise ConfigError(f"--adaptive sets the rounds itself; replace {given!r} with "
                              f"--max-rounds N")
        if plan_looks(thresholds.alpha, args.max_rounds) is None:
            raise ConfigError(f"--max-rounds {args.max_rounds} leaves the stopping rule no look "
                              f"at alpha {thresholds.alpha:g}; use --max-rounds 20 or more (at least 6)")
    return AbOptions(design=args.design, seed=args.seed, adaptive=args.adaptive,
                     max_rounds=args.max_rounds if args.adaptive else 0,
                     max_minutes=args.max_minutes if args.adaptive else 0.0,
                     duet_cpus=tuple(args.duet_cpus), metrics=metrics, thresholds=thresholds)


def ab_command(argv: list[str], console: Console) -> None:
    from ..analysis.paired import PAIRED_DESIGNS, min_pairs
    from ..run.ab import Side, run_ab
    from ..signals import signals_interrupt
    from ..verdicts import compare_runs
    from .compose import compose_conf

    args, shared = split_ab_args(argv)
    gate_conf = _gate_conf(args)  # a bad config fails before running
    thresholds = _thresholds(args, gate_conf.thresholds)
    metrics = tuple(args.metrics or gate_conf.metrics)
    options = ab_options(args, thresholds, metrics, [*shared, *args.a, *args.b])
    if options.adaptive:
        shared = [*shared, f"repetitions={options.max_rounds}"]  # the budget; it stops earlier
    sides = []
    for name, own in (("a", args.a), ("b", args.b)):
        overrides = [*shared, *own]
        conf, config = compose_conf(overrides)
        sides.append(Side(name, conf, overrides, config))
    rounds, least = sides[0].conf.repetitions, min_pairs(thresholds.alpha)
    if options.design in PAIRED_DESIGNS and not options.adaptive and rounds < least:
        console.print(f"note: {rounds} rounds cannot reach p < {thresholds.alpha:g} in a paired "
                      f"test (the least is {least}); the verdict will be 'not enough "
                      f"repetitions' (add repetitions={least} or more after '--')", markup=False,
                      soft_wrap=True)
    with signals_interrupt():
        ab = run_ab(sides[0], sides[1], console, options)
    # The two sides differ on purpose (that is the experiment): name each difference, never refuse.
    # compare_runs finds the job's design in ab_pairs and analyses it as designed.
    con = connect(Path(sides[0].conf.db), read_only=True)
    try:
        report = compare_runs(con, ab["run_a"], ab["run_b"],
                              tuple(args.metrics or gate_conf.summary_metrics), thresholds,
                              allow_different=True, declared=not args.metrics)
    finally:
        con.close()
    _print(report, args.format, console)
