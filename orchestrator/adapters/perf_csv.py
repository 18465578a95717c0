"""`perf stat -x,` output (pure): counters per process, 'not supported' kept as unavailable.

The CSV is the counters of a wrapped process, never its timing: a CSV that does not parse
costs the counters only (the step runners record `counters_error`, see runners/process.py).
"""
from __future__ import annotations

from ..errors import EngineOutputError
from ..record import LOWER, Metric
from .results import ROW_OK, ParseRequest, ResultRow, ToolReport

# Events recorded for every invocation where perf exists. Hardware events are often missing in
# VMs (this kind of machine exposes software events only): those are recorded as unavailable.
PERF_EVENTS = ("instructions", "cycles", "cache-misses", "page-faults", "context-switches",
               "cpu-migrations", "cpu-clock")
_UNITS = {"cpu-clock": "ms", "task-clock": "ms"}


def perf_command(argv: list[str], output_file: str) -> list[str]:
    """Wrap argv in perf stat; counters go to a file so the engine's stderr stays its own."""
    return ["perf", "stat", "-x,", "-o", output_file, "-e", ",".join(PERF_EVENTS), "--", *argv]


def parse_perf_csv(text: str) -> tuple[list[Metric], list[str]]:
    """Metrics for counted events and the names of events the machine does not support.

    Raises EngineOutputError when no line is a counter (an empty file, or perf's own error).
    """
    metrics, unavailable = [], []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        value, unit, event = fields[0], fields[1], fields[2].split(":")[0]
        if value.startswith("<"):  # <not supported> / <not counted>
            unavailable.append(event)
            continue
        try:
            number = float(value)
        except ValueError:
            continue
        name = "perf_" + event.replace("-", "_")
        metrics.append(Metric(name, number, unit or _UNITS.get(event, "count"), LOWER))
    if not metrics and not unavailable:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        raise EngineOutputError(f"perf stat CSV holds no counter line (first line: {first[:80]!r})")
    return metrics, unavailable


class PerfCsvAdapter:
    """One `perf stat -x,` file: one row ("process") of counters; context names unsupported events."""

    fmt = "perf_csv"
    importable = False  # counters of a process the runner wrapped, not a benchmark result

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        metrics, unavailable = parse_perf_csv(text)
        row = ResultRow("process", 1, request.threads, ROW_OK, "", tuple(metrics))
        return ToolReport(self.fmt, (row,), (), {"unavailable": unavailable})
