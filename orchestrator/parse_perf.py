"""`perf stat -x,` output (pure): counters per invocation, 'not supported' kept as unavailable."""
from __future__ import annotations

from .record import LOWER, Metric

# Events recorded for every invocation where perf exists. Hardware events are often missing in
# VMs (this kind of machine exposes software events only): those are recorded as unavailable.
PERF_EVENTS = ("instructions", "cycles", "cache-misses", "page-faults", "context-switches",
               "cpu-migrations", "cpu-clock")
_UNITS = {"cpu-clock": "ms", "task-clock": "ms"}


def perf_command(argv: list[str], output_file: str) -> list[str]:
    """Wrap argv in perf stat; counters go to a file so the engine's stderr stays its own."""
    return ["perf", "stat", "-x,", "-o", output_file, "-e", ",".join(PERF_EVENTS), "--", *argv]


def parse_perf_csv(text: str) -> tuple[list[Metric], list[str]]:
    """Metrics for counted events and the names of events the machine does not support."""
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
    return metrics, unavailable
