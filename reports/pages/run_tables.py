"""The invocation table of a run page as HTML (pure): one row, and one permalink, per engine
process. Built column by column with format strings rather than Jinja2: a long history has
600,000 rows, and escaping value by value through templates was most of the site's build time.
Numbers need no escaping; text columns are escaped once per distinct value."""
from __future__ import annotations

import json
import re
import shlex
from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd
from markupsafe import escape

from ..data.frames import records
from .format import MISSING, anchor, cpu_ranges, latency_digits
from .row_texts import Texts, rows_by_group

HEADER = ("#", "Workload", "Benchmark", "Phase", "Rep", "Threads", "Status", "ops/s", "p50 µs",
          "p99 µs", "Wall s", "Max RSS MB", "CPUs allowed", "Residency %", "Interference %")
COMPACT_HEADER = tuple(name for name in HEADER if name != "CPUs allowed")  # older runs' pages
# Cells that are numbers link to their own row, so a copied link lands on the invocation.
_LINKED = frozenset({"#", "Rep", "Threads", "ops/s", "p50 µs", "p99 µs", "Wall s", "Max RSS MB",
                     "Residency %", "Interference %"})


def number_column(values: Iterable[Any], digits: int = 0) -> list[str]:
    """`format.num` over a column of floats (NaN → the missing dash)."""
    spec = f",.{digits}f"
    return [MISSING if v != v else format(v, spec) for v in values]


def latency_column(values: Iterable[Any]) -> list[str]:
    """`format.latency` over a column of floats (NaN → the missing dash)."""
    return [MISSING if v != v else format(v, f",.{latency_digits(v)}f") for v in values]


def text_column(values: Iterable[Any], fmt: Callable[[Any], str] = str) -> list[str]:
    """HTML-escaped text per value; equal values (workloads, statuses) are escaped once."""
    done: dict[Any, str] = {}
    out = []
    for value in values:
        if value not in done:
            done[value] = str(escape(fmt(value)))
        out.append(done[value])
    return out


def _floats(column: pd.Series, scale: float = 1.0) -> np.ndarray:
    """Floats with NaN for missing (nullable integer columns included)."""
    return (pd.to_numeric(column, errors="coerce").astype("float64") / scale).to_numpy()


def _whole(column: pd.Series) -> Texts:
    """str(int(value)) per row of an integer column (seq, repetition, threads)."""
    values = column.to_numpy()
    if values.dtype.kind not in "iu":  # nullable or float: as Python numbers, row by row
        return Texts.per_row([str(int(v)) for v in values.tolist()])
    return Texts.of_values(values, lambda distinct: [str(int(v)) for v in distinct])


def _plain_column(values: Iterable[Any]) -> list[str]:
    """Text per value, unescaped: for the browser to set as text (compact_rows_json)."""
    return [str(value) for value in values]


def _cells(invocations: pd.DataFrame, cpus: Texts | None,
           texts: Callable[[Iterable[Any]], list[str]] = text_column) -> list[Texts]:
    """The table's columns, in HEADER order (the CPUs column only when `cpus` is given); text
    columns through `texts` (escaped for HTML by default)."""
    def number(column: pd.Series, digits: int = 0, scale: float = 1.0) -> Texts:
        return Texts.of_values(_floats(column, scale), lambda d: number_column(d, digits))

    def text(name: str) -> Texts:
        return Texts.of_values(invocations[name].to_numpy(dtype=object), texts)

    columns = [
        _whole(invocations["seq"]), text("workload"), text("benchmark"), text("phase"),
        _whole(invocations["repetition"]), _whole(invocations["threads"]), text("status"),
        number(invocations["ops"]), Texts.of_values(_floats(invocations["p50"]), latency_column),
        Texts.of_values(_floats(invocations["p99"]), latency_column),
        number(invocations["wall_s"], 2), number(invocations["max_rss_kb"], 1, 1024)]
    if cpus is not None:
        columns.append(cpus)
    columns.append(number(invocations["residency"], 1))
    # Other tasks' share of the engine's CPUs while it ran (machine/interference.py).
    interference = invocations["interference"] if "interference" in invocations else \
        pd.Series([None] * len(invocations), dtype="float64")
    columns.append(number(interference, 1))
    return columns


def _row_pieces(invocations: pd.DataFrame, columns: tuple[str, ...], cells: list[Texts]
                ) -> list[Texts | str]:
    """One invocation row as literal text and columns, to be joined in order:
    '<tr id="inv-0001" class=…><td><a href="#inv-0001">1</a></td>…</tr>'."""
    seq = invocations["seq"].to_numpy()
    link = Texts.of_values(seq, lambda distinct: [f'<td><a href="#{anchor(s)}">'
                                                  for s in distinct])
    pieces: list[Texts | str] = [
        Texts.of_values(seq, lambda distinct: [f'<tr id="{anchor(s)}"' for s in distinct]),
        _failed(invocations, ' class="tm-failed"'), ">"]
    for name, cell in zip(columns, cells):
        pieces += [link, cell, "</a></td>"] if name in _LINKED else ["<td>", cell, "</td>"]
    pieces.append("</tr>\n")
    return pieces


def _failed(invocations: pd.DataFrame, text: str, ok: str = "") -> Texts:
    """`text` on the rows of invocations that did not end ok, `ok` on the others."""
    failed = (invocations["status"] != "ok").to_numpy(dtype=bool)
    return Texts(failed.astype(np.intp), np.array([ok, text], dtype=object))


def _by_run(invocations: pd.DataFrame, pieces: list[Texts | str],
            around: tuple[str, str]) -> dict[str, str]:
    return rows_by_group(invocations["run_id"], pieces, around)


# What a JSON string must escape: a column of texts without any is quoted as it is.
_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')


def _json_strings(texts: np.ndarray) -> np.ndarray:
    """Each text as a JSON string. A column of numbers' texts ('102,333', '–') needs no
    escape: checked once for the column, quoted without json.dumps (a call per distinct value
    was 5 ms of each 600-invocation run, 54 s of a 10,000-run build)."""
    if _JSON_ESCAPED.search("".join(texts.tolist())) is None:
        return np.array(['"' + text + '"' for text in texts.tolist()], dtype=object)
    return np.array([json.dumps(text, ensure_ascii=False) for text in texts.tolist()],
                    dtype=object)


def compact_rows_json(invocations: pd.DataFrame) -> dict[str, str]:
    """run_id → its compact invocation table as JSON text, for the browser to make the rows
    of (site/assets/tidemark.js): `header`, the `linked` columns (a cell that links to its own
    row), and `rows`, each [its anchor, 1 if it did not end ok, cell texts as the detailed
    rows show them, unescaped]. An older run's page carries this file instead of its rows:
    600 rows of HTML were 270 KB of every such page, 3 GB of a 10,000-run site."""
    cells = [Texts(column.codes, _json_strings(column.texts))
             for column in _cells(invocations, None, _plain_column)]
    seq = invocations["seq"].to_numpy()
    pieces: list[Texts | str] = [
        Texts.of_values(seq, lambda distinct: [f'["{anchor(s)}",' for s in distinct]),
        _failed(invocations, "1", ok="0")]
    for cell in cells:
        pieces += [",", cell]
    pieces.append("],")
    head = no_rows_json()
    around = (head[:-len("[]}")] + "[", "]}")
    # Every row ends "],"; the last one's comma is dropped where the rows end ("],]}").
    return {run: text[:-len("],]}")] + "]]}"
            for run, text in _by_run(invocations, pieces, around).items()}


def no_rows_json() -> str:
    """compact_rows_json's text of a run without invocations."""
    return json.dumps({"header": list(COMPACT_HEADER),
                       "linked": [name in _LINKED for name in COMPACT_HEADER], "rows": []})


def conditions_text(conditions: dict[str, Any]) -> str:
    """What was achieved before the process ran: cache procedure, residency, block cache."""
    parts = []
    if conditions.get("cache_procedure"):
        parts.append("cache: " + " → ".join(str(s) for s in conditions["cache_procedure"]))
    if "residency_pct" in conditions:
        size = conditions.get("data_bytes")
        of = f" of {size / 2**20:,.1f} MiB" if isinstance(size, (int, float)) else ""
        parts.append(f"resident {conditions['residency_pct']}%{of}")
    if conditions.get("residency_read_back"):
        parts.append(str(conditions["residency_read_back"]))
    if conditions.get("block_cache_bytes"):
        parts.append(f"block cache {conditions['block_cache_bytes'] / 2**20:,.0f} MiB")
    if conditions.get("cgroups"):
        parts.append("cgroups " + " ".join(str(c) for c in conditions["cgroups"]))
    if conditions.get("data_bytes_written"):
        parts.append(f"wrote {conditions['data_bytes_written'] / 2**20:,.1f} MiB of database files")
    parts += interference_text(conditions)
    if conditions.get("container"):
        parts.append(container_text(conditions["container"]))
    if conditions.get("counters_unavailable"):
        parts.append("counters unavailable: " + ", ".join(conditions["counters_unavailable"]))
    return "; ".join(parts)


def container_text(container: dict[str, Any]) -> str:
    """The container an invocation ran in (runner=docker): its image and the limits read back
    inside it."""
    memory = container.get("memory_limit_bytes")
    limit = f"{memory / 2**20:,.0f} MiB" if isinstance(memory, int) and memory < 2**62 else "none"
    text = (f"docker container of image {container.get('image')} "
            f"({str(container.get('image_id'))[7:19]}, FROM {container.get('base')}): CPUs "
            f"{container.get('cpus_allowed_list')} and memory limit {limit} read back inside")
    if container.get("oom_killed"):
        text += ", ⚠ OOM-killed at that limit"
    return f"{text}; page cache: {container.get('page_cache')}"


def interference_text(conditions: dict[str, Any]) -> list[str]:
    """The shield read back and the interference measured around the process, as words."""
    parts = []
    shield = conditions.get("shield") or {}
    if shield.get("applied") is False:
        parts.append(f"shield {shield.get('mode')} NOT applied")
    elif shield:
        parts.append(f"shield {shield.get('mode')}: engine in bench cpuset "
                     f"{'yes' if shield.get('engine_in_bench_cpuset') else 'NO'} (CPUs "
                     f"{shield.get('bench_cpus')}), {shield.get('rest_tasks_on_bench_cpus')} other "
                     f"task(s) allowed on them")
    got = conditions.get("interference") or {}
    if "other_pct" in got:
        text = (f"other tasks {got['other_pct']}% of CPUs {cpu_ranges(got.get('cpus'))} "
                f"({got.get('other_cpu_s')} s), steal {got.get('steal_pct')}%, "
                f"{got.get('involuntary_switches')} involuntary switches, load "
                f"{got.get('load1_before')}→{got.get('load1_after')}")
        if got.get("flagged"):
            text = "⚠ " + text + " (above the bound)"
        if "attempt" in got:
            text += f"; attempt {got['attempt']}{', kept' if got.get('kept') else ', rejected'}"
        parts.append(text)
    return parts


COUNTER_WORDS = (("page_faults", "page faults", 0), ("context_switches", "context switches", 0),
                 ("migrations", "CPU migrations", 0), ("cpu_clock_ms", "ms CPU clock", 1))


# The columns detail_html and the CPUs column read (the counters only where there are any).
_DETAIL_SHOWS = ("invocation_id", "error", "notes", "conditions", "command", "log_path",
                 *(column for column, _, _ in COUNTER_WORDS))


def counters_text(inv: dict[str, Any]) -> str:
    """perf's software counters of one process, e.g. '832 page faults · 36 context switches'."""
    return " · ".join(f"{value:,.{digits}f} {words}" for column, words, digits in COUNTER_WORDS
                      for value in [inv.get(column)] if value is not None and value == value)


def detail_html(inv: dict[str, Any], log_tail: str) -> str:
    """The line under an invocation's row: error, notes, conditions achieved, command, log."""
    parts = []
    if inv["error"]:
        parts.append(f'<strong>error:</strong> <span class="tm-error">{escape(inv["error"])}</span><br>')
    if inv["notes"]:
        parts.append(f"<em>notes:</em> {escape('; '.join(str(n) for n in inv['notes']))}<br>")
    conditions = conditions_text(inv["conditions"] or {})
    if conditions:
        parts.append(f"<em>conditions achieved:</em> {escape(conditions)}<br>")
    counters = counters_text(inv)
    if counters:
        parts.append(f"<em>software counters:</em> {counters}<br>")
    command = shlex.join(inv["command"] or []) or MISSING
    parts.append(f"<code>{escape(command)}</code><br>log: <code>{escape(inv['log_path'] or MISSING)}</code>")
    if log_tail:
        parts.append(f"<details><summary>end of the log</summary><pre>{escape(log_tail)}</pre></details>")
    return "".join(parts)


def detailed_rows(invocations: pd.DataFrame, log_tails: dict[str, str],
                  around: tuple[str, str] = ("", "")) -> dict[str, str]:
    """run_id → its escaped <tr> rows, each followed by its detail line (the newest runs),
    with `around`'s texts before and after them."""
    # Only what the detail lines show: the other columns as Python objects cost most of it.
    shown = [name for name in _DETAIL_SHOWS if name in invocations.columns]
    rows = records(invocations[shown])
    cpus = Texts.per_row([cpu_ranges((inv["conditions"] or {}).get("cpus_allowed"))
                          for inv in rows])
    details = Texts.per_row([detail_html(inv, log_tails.get(inv["invocation_id"], ""))
                             for inv in rows])
    pieces = _row_pieces(invocations, HEADER, _cells(invocations, cpus))
    pieces += ['<tr class="tm-detail', _failed(invocations, " tm-failed"),
               f'"><td></td><td colspan="{len(HEADER) - 1}">', details, "</td></tr>\n"]
    return _by_run(invocations, pieces, around)
