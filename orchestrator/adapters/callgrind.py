"""valgrind --tool=callgrind totals (pure): instructions executed by the whole process."""
from __future__ import annotations

import re

from ..errors import EngineOutputError
from ..record import LOWER, Metric
from .results import ROW_OK, ParseRequest, ResultRow, ToolReport

COLLECTED = re.compile(r"^==\d+== Collected : (\d+)", re.MULTILINE)


def callgrind_command(argv: list[str], out_file: str) -> list[str]:
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", *argv]


def parse_callgrind_total(stderr: str, operations: float | None) -> list[Metric]:
    """Total Ir and, when the op count is known, instructions per operation (start-up included)."""
    m = COLLECTED.search(stderr)
    if not m:
        raise EngineOutputError("no '==PID== Collected : N' line from callgrind in stderr "
                                "(valgrind missing or the process died)")
    total = float(m.group(1))
    metrics = [Metric("instructions", total, "Ir", LOWER)]
    if operations:
        metrics.append(Metric("instructions_per_op", total / operations, "Ir/op", LOWER))
    return metrics


class CallgrindAdapter:
    """valgrind's stderr: one row ("process") with the instruction totals."""

    fmt = "callgrind"
    importable = False  # an instruction count of a process the runner wrapped

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        metrics = parse_callgrind_total(text, request.operations)
        return ToolReport(self.fmt, (ResultRow("process", 1, request.threads, ROW_OK, "",
                                               tuple(metrics)),))
