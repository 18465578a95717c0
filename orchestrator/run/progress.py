"""Terminal output (rich): build progress, invocation i/N with ETA, and the end-of-run summary."""
from __future__ import annotations

import statistics
from collections import defaultdict

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from ..plan.runplan import Step
from ..record import STATUS_OK, Invocation


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=console, transient=False)


class BuildProgress:
    """Feeds ninja's [n/N] lines into a progress bar."""

    def __init__(self, console: Console, what: str):
        self.progress = _progress(console)
        self.what = what
        self.task = None

    def __enter__(self) -> "BuildProgress":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, done: int, total: int) -> None:
        if self.task is None:
            self.task = self.progress.add_task(f"build {self.what}", total=total)
        self.progress.update(self.task, completed=done, total=total)


class RunProgress:
    """Reporter for runners.loop.run_steps: one bar over every step of the run (or of both ab sides)."""

    def __init__(self, console: Console, total: int):
        self.console = console
        self.progress = _progress(console)
        self.task = self.progress.add_task("run", total=total)

    def __enter__(self) -> "RunProgress":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def step_started(self, step: Step, index: int, total: int) -> None:
        label = f"{step.workload} {step.phase} {step.benchmark} t={step.threads}"
        self.progress.update(self.task, description=f"[{index}/{total}] {label}")

    def step_finished(self, inv: Invocation) -> None:
        self.progress.advance(self.task)
        if inv.status != STATUS_OK:
            self.console.print(f"[red]{inv.workload} {inv.phase} #{inv.repetition} "
                               f"{inv.status}[/red]: {inv.error}", markup=True, highlight=False)


def _median_metric(invs: list[Invocation], name: str) -> float | None:
    values = [m.value for inv in invs for m in inv.metrics if m.name == name]
    return statistics.median(values) if values else None


def _fmt(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _params_text(params: dict) -> str:
    """The params that shape a data set, compactly: points of a sweep stay apart."""
    shown = ("num", "value_size", "compression", "reads", "duration")
    extra = [k for k in sorted(params) if k.startswith("extra.") and "benchmark_" not in k]
    return " ".join(f"{k.removeprefix('extra.')}={params[k]}" for k in (*shown, *extra)
                    if params.get(k) is not None)


def summary_table(invocations: list[Invocation]) -> Table:
    """Median over measured repetitions per workload point."""
    groups: dict[tuple, list[Invocation]] = defaultdict(list)
    for inv in invocations:
        if inv.phase == "measured":
            groups[(inv.workload, inv.benchmark, inv.threads, inv.cache_state,
                    _params_text(inv.params))].append(inv)
    table = Table(title="Measured (median of repetitions)")
    for col in ("workload", "benchmark", "threads", "cache", "params", "ok/n", "ops/s", "p50 µs",
                "p99 µs", "other"):
        table.add_column(col, justify="right" if col in ("threads", "ok/n") or "/" in col
                         or "µs" in col else "left")
    for (workload, benchmark, threads, cache, params), invs in groups.items():
        ok = [i for i in invs if i.status == STATUS_OK]
        table.add_row(workload, benchmark, str(threads), cache, params, f"{len(ok)}/{len(invs)}",
                      _fmt(_median_metric(ok, "ops_per_sec")),
                      _fmt(_median_metric(ok, "p50_us"), 2), _fmt(_median_metric(ok, "p99_us"), 2),
                      _first_metric(ok))
    return table


def _first_metric(invs: list[Invocation]) -> str:
    """A series without db_bench's figures (a Google Benchmark's, a command's): its first
    metric, e.g. 'bytes_per_second 1.52e+09 B/s' or 'wall_s 0.0431 s'."""
    if not invs or any(m.name == "ops_per_sec" for m in invs[0].metrics):
        return ""
    first = invs[0].metrics[0] if invs[0].metrics else None
    if first is None:
        return ""
    value = _median_metric(invs, first.name)
    return f"{first.name} {value:.3g} {first.unit}".strip() if value is not None else ""
