"""`regex`: a program's own result line read through a regular expression (pure).

A `command` workload's `output: {format: regex, regex: ..., metrics: ...}`: each named group is
a metric, its unit and direction from `metrics` (a group not listed there is a unitless,
lower-is-better number). The LAST match in the output counts, since a program that prints
progress (`zstd -b` redraws its line) prints its final figure last. No match, or a group that
matched no number, is an error naming the pattern; a summary line is one repetition.

    output:
      format: regex
      regex: '(?P<compress_mb_s>[0-9.]+) MB/s\\s+(?P<decompress_mb_s>[0-9.]+) MB/s'
      metrics:
        compress_mb_s: {unit: MB/s, better: higher}
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import ConfigError, EngineOutputError
from ..record import HIGHER, LOWER, Metric
from .results import ROW_OK, ParseRequest, ResultRow, ToolReport
from .validate import check_metric


@dataclass(frozen=True)
class RegexMap:
    """A compiled pattern and, per named group, the stored metric's name, unit and direction."""

    pattern: re.Pattern
    metrics: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, regex: str, specs: Mapping[str, Any] | None = None) -> "RegexMap":
        """From a workload's `output`: `specs` maps a group to {metric, unit, better}."""
        try:
            pattern = re.compile(regex, re.MULTILINE)
        except re.error as exc:
            raise ConfigError(f"output.regex {regex!r} is not a regular expression ({exc})") from None
        if not pattern.groupindex:
            raise ConfigError(f"output.regex {regex!r} has no named group; name each value, "
                              f"e.g. (?P<mb_per_s>[0-9.]+) MB/s")
        metrics = {}
        for group in pattern.groupindex:
            spec = dict((specs or {}).get(group) or {})
            better = HIGHER if spec.get("better") == "higher" else LOWER
            metrics[group] = (spec.get("metric") or group, spec.get("unit") or "", better)
        return cls(pattern, metrics)


class RegexMapAdapter:
    fmt = "regex"
    importable = False  # needs the pattern: a command workload's output, not `tidemark import`

    def parse(self, text: str, request: ParseRequest) -> ToolReport:
        regex_map = request.regex_map
        if not isinstance(regex_map, RegexMap):
            raise ConfigError("the regex format needs the workload's output.regex")
        # Progress redrawn with carriage returns reads as separate lines.
        matches = list(regex_map.pattern.finditer(text.replace("\r", "\n")))
        if not matches:
            raise EngineOutputError(f"{request.source}: no line matches output.regex "
                                    f"{regex_map.pattern.pattern!r}")
        last = matches[-1]
        metrics = []
        for group, (name, unit, better) in regex_map.metrics.items():
            raw = last.group(group)
            try:
                value = float(raw.replace(",", "")) if raw is not None else None
            except ValueError:
                value = None
            if value is None:
                raise EngineOutputError(f"{request.source}: group {group!r} of output.regex "
                                        f"matched {raw!r}, not a number")
            metric = Metric(name, value, unit, better)
            check_metric(metric, f"{request.source}: {last.group(0).strip()[:80]!r}", True)
            metrics.append(metric)
        row = ResultRow(request.benchmark or "output", 1, request.threads, ROW_OK, "",
                        tuple(metrics))
        return ToolReport(self.fmt, (row,))
