"""Fuzzing kit for the output adapters, shared by tests/orchestrator/adapters/test_fuzz_adapters.py (hypothesis, in
the suite) and benchmarks/fuzz_adapters.py (the long campaign, `make fuzz`).

- SEEDS: the captured real outputs under tests/data/, each with the request a caller makes
  (a run's db_bench step names its benchmark and threads; an import reads every result line).
- MUTATORS: text mutations (cut, byte flip, line duplication/deletion/swap, a number replaced by
  NaN / inf / huge / negative / `1.2.3` / `.`, random unicode) and, for JSON, a value anywhere in
  the tree replaced by a hostile one. Each takes the text and a random.Random.
- parse_once: the adapter and validate.py without the registry's safety net, so a parser bug
  shows as a crash here instead of a tidy parse error.
- nonsense: an independent statement of what a returned report must never hold (the oracle);
  it does not call validate.py, so a hole in validate.py shows up here.
- store_import: an accepted importable report written to a real DuckDB through the importer.
"""
from __future__ import annotations

import dataclasses
import json
import math
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from orchestrator.adapters.json_map import parse_map_config
from orchestrator.adapters.regex_map import RegexMap
from orchestrator.adapters.registry import ADAPTERS, IMPORT_FORMATS
from orchestrator.adapters.results import ROW_OK, ParseRequest, ToolReport
from orchestrator.adapters.validate import validate_report
from orchestrator.errors import UserError

DATA = Path(__file__).parents[2] / "data"
ROOT = Path(__file__).parents[3]


@dataclass(frozen=True)
class Seed:
    """One real output and the request it is parsed with; `target` is the text mutated."""

    fmt: str
    name: str
    text: str
    request: ParseRequest
    target: str = "text"  # or "report_csv": RocksDB's interval CSV is mutated instead

    @property
    def original(self) -> str:
        return self.text if self.target == "text" else self.request.report_csv

    def inputs(self, mutated: str) -> tuple[str, ParseRequest]:
        if self.target == "text":
            return mutated, self.request
        return self.text, dataclasses.replace(self.request, report_csv=mutated)


def _db_bench_seeds(fmt: str, engine_dir: str) -> list[Seed]:
    seeds = []
    for path in sorted((DATA / engine_dir).glob("*.stdout")):
        match = re.match(r"(\w+?)_t(\d+)", path.stem)
        text = path.read_text()
        seeds.append(Seed(fmt, f"{path.name} (import)", text, ParseRequest(source=path.name)))
        if match and match.group(1) != "readseq_seekrandom":
            request = ParseRequest(source=path.name, benchmark=match.group(1),
                                   threads=int(match.group(2)))
            seeds.append(Seed(fmt, f"{path.name} (step)", text, request))
    return seeds


def _json_map_seeds() -> list[Seed]:
    ingestion = parse_map_config(yaml.safe_load((DATA / "jsonmap/ingestion_map.yaml").read_text()))
    jsonl = (DATA / "jsonmap/ingestion.jsonl").read_text()
    records = [json.loads(line) for line in jsonl.splitlines() if line.strip()]
    as_json = json.dumps({"out": {"cases": records}}, indent=1)
    in_json = dataclasses.replace(ingestion, layout="json", records="out.cases")
    numbered = parse_map_config({"name": "name", "repetition": "rep", "threads": "threads",
                                 "params": ["doc_bytes"],
                                 "values": {"ops_per_sec": {"unit": "ops/s", "better": "higher"}}})
    with_reps = "\n".join(json.dumps(r | {"rep": i}) for i, r in enumerate(records, start=1))
    return [Seed("json_map", "ingestion.jsonl", jsonl, ParseRequest("ingestion.jsonl", json_map=ingestion)),
            Seed("json_map", "ingestion.json", as_json, ParseRequest("ingestion.json", json_map=in_json)),
            Seed("json_map", "numbered.jsonl", with_reps, ParseRequest("numbered.jsonl", json_map=numbered))]


def _regex_seeds() -> list[Seed]:
    """zstd -b's result line through the zstd_bench workload's own regex map, and its
    progress-redrawing (not -q) output through a pattern of that form."""
    workload = yaml.safe_load((ROOT / "conf/workload/zstd_bench.yaml").read_text())["output"]
    quiet = RegexMap.of(workload["regex"], workload["metrics"])
    progress = RegexMap.of(r"(?P<size>\d+) \(x(?P<ratio>[0-9.]+)\),\s*(?P<compress_mb_s>[0-9.]+) "
                           r"MB/s,\s*(?P<decompress_mb_s>[0-9.]+) MB/s")
    return [Seed("regex", p.name, p.read_text(), ParseRequest(p.name, regex_map=rmap))
            for p, rmap in ((DATA / "regex/zstd_1.5.4_b3_q.stdout", quiet),
                            (DATA / "regex/zstd_1.5.4_b19_progress.stdout", progress))]


def _asv_seeds() -> list[Seed]:
    """Each captured asv result file read with its folder's benchmarks.json and machine.json,
    and once without them (the kinds then come from the names)."""
    from orchestrator.history.asv_results import folder_of, result_files

    files = result_files(DATA / "asv_json" / "results")
    return [Seed("asv_json", p.name, p.read_text(), ParseRequest(p.name, asv=folder_of(p)))
            for p in files] + [Seed("asv_json", f"{files[0].name} (alone)", files[0].read_text(),
                                    ParseRequest(files[0].name))]


def _seeds() -> dict[str, list[Seed]]:
    rocksdb = _db_bench_seeds("db_bench_rocksdb", "rocksdb")
    stdout = (DATA / "rocksdb/readrandom_t1_duration3.stdout").read_text()
    csv = (DATA / "rocksdb/readrandom_t1_duration3.report.csv").read_text()
    rocksdb.append(Seed("db_bench_rocksdb", "readrandom_t1_duration3.report.csv", stdout,
                        ParseRequest("readrandom.stdout", "readrandom", 1, csv), "report_csv"))
    hardware = ("1523456789,,instructions:u,812345,100.00,1.87,insn per cycle\n"
                "812345678,,cycles:u,812345,100.00,3.01,GHz\n")
    return {
        "db_bench_rocksdb": rocksdb,
        "db_bench_leveldb": _db_bench_seeds("db_bench_leveldb", "leveldb"),
        "gbench_json": [Seed("gbench_json", p.name, p.read_text(), ParseRequest(p.name))
                        for p in sorted((DATA / "gbench").glob("*.json"))],
        "hyperfine_json": [Seed("hyperfine_json", p.name, p.read_text(), ParseRequest(p.name))
                           for p in sorted((DATA / "hyperfine").glob("*.json"))],
        "json_map": _json_map_seeds(),
        "perf_csv": [Seed("perf_csv", "kvm_software_only.csv",
                          (DATA / "perf/kvm_software_only.csv").read_text(), ParseRequest("perf.csv")),
                     Seed("perf_csv", "hardware.csv", hardware, ParseRequest("perf.csv"))],
        "bmf_json": [Seed("bmf_json", p.name, p.read_text(), ParseRequest(p.name))
                     for p in sorted((DATA / "bmf").glob("*.json"))],
        "pytest_benchmark_json": [
            Seed("pytest_benchmark_json", p.name, p.read_text(), ParseRequest(p.name))
            for p in sorted((DATA / "pytest_benchmark").glob("*.json"))],
        "pyperf_json": [
            Seed("pyperf_json", p.name, p.read_text(), ParseRequest(p.name))
            for p in sorted((DATA / "pyperf").glob("*.json"))],
        "regex": _regex_seeds(),
        "asv_json": _asv_seeds(),
        "callgrind": [Seed("callgrind", "leveldb_fillseq_2000.stderr",
                           (DATA / "callgrind/leveldb_fillseq_2000.stderr").read_text(),
                           ParseRequest("callgrind.stderr", operations=2000.0))],
    }


SEEDS = _seeds()
FORMATS = tuple(SEEDS)
assert set(FORMATS) == set(ADAPTERS), "every registered adapter has fuzz seeds"

# ---------------------------------------------------------------------------------- mutations
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
HOSTILE_NUMBERS = ("NaN", "nan", "-nan", "inf", "-inf", "Infinity", "-Infinity", "1e999",
                   "-1e999", "-1", "-0.5", "-100000", "0", "0.000", "1.2.3", ".", "..", "1e-320",
                   "2147483647", "2147483648", "4294967296", "1099511627776",
                   "9223372036854775808", "9" * 30, "9" * 400, "9" * 5000, "0x10", "1_000", "",
                   " ", "true", "null", '"7"', "[]", "{}", "१२३", "²", "٣.٥")
HOSTILE_TEXT = ("\x00", "\ufeff", "\u2028", "é", "😀", "\\ud800", "\\udfff", "\\u0000", "\r",
                "\t", "\n", '"', "\\", "{", "}", "[", "]", ",", ":", "%", "(", ")", "#")
HOSTILE_VALUES: tuple[Any, ...] = (
    math.nan, math.inf, -math.inf, -1, -1.0e9, 0, 0.0, 1.5, 2**31, 2**40, 2**63, 10**30, 10**400,
    1e308, -0.0, True, False, None, "", "1.2.3", "\ud800", "x" * 300, {}, [], {"a": {}}, [[1]],
    [math.nan], [-1, 2], {"k": [1, {"z": None}]})


def cut(text: str, rnd: random.Random) -> str:
    return text[:rnd.randrange(len(text) + 1)]


def flip_byte(text: str, rnd: random.Random) -> str:
    """A random bit of a random byte flipped; decoded as the runners read files."""
    data = bytearray(text.encode())
    if data:
        data[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
    return data.decode("utf-8", errors="replace")


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True) or [""]


def duplicate_line(text: str, rnd: random.Random) -> str:
    lines = _lines(text)
    i = rnd.randrange(len(lines))
    return "".join(lines[:i + 1] + [lines[i]] + lines[i + 1:])


def delete_line(text: str, rnd: random.Random) -> str:
    lines = _lines(text)
    del lines[rnd.randrange(len(lines))]
    return "".join(lines)


def swap_lines(text: str, rnd: random.Random) -> str:
    lines = _lines(text)
    i, j = rnd.randrange(len(lines)), rnd.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def replace_number(text: str, rnd: random.Random) -> str:
    numbers = list(NUMBER.finditer(text))
    if not numbers:
        return text
    m = rnd.choice(numbers)
    return text[:m.start()] + rnd.choice(HOSTILE_NUMBERS) + text[m.end():]


def insert_unicode(text: str, rnd: random.Random) -> str:
    if rnd.random() < 0.5:
        piece = rnd.choice(HOSTILE_TEXT)
    else:  # any code point but a surrogate (a decoded file never holds one)
        piece = "".join(chr(rnd.choice([rnd.randrange(0x20, 0x7f), rnd.randrange(0xa0, 0xd800),
                                        rnd.randrange(0xe000, 0x110000)])) for _ in range(rnd.randint(1, 4)))
    at = rnd.randrange(len(text) + 1)
    return text[:at] + piece + text[at:]


def _nodes(node: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _nodes(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _nodes(value, path + (index,))
    return out


def _mutate_tree(doc: Any, rnd: random.Random) -> Any:
    path = rnd.choice(_nodes(doc))
    if not path:
        return rnd.choice(HOSTILE_VALUES)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    key, action = path[-1], rnd.random()
    if action < 0.15:
        del parent[key]
    elif action < 0.25 and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
    else:
        parent[key] = rnd.choice(HOSTILE_VALUES)
    return doc


def mutate_json_value(text: str, rnd: random.Random) -> str:
    """A value anywhere in the JSON tree (of one JSONL line) deleted, duplicated or replaced."""
    lines = text.splitlines()
    whole = len(lines) != 1 and not all(ln.lstrip().startswith("{") and ln.rstrip().endswith("}")
                                        for ln in lines if ln.strip())
    try:
        if whole:
            return json.dumps(_mutate_tree(json.loads(text), rnd), indent=1)
        i = rnd.randrange(len(lines))
        lines[i] = json.dumps(_mutate_tree(json.loads(lines[i]), rnd))
        return "\n".join(lines) + "\n"
    except (ValueError, IndexError, RecursionError):
        return replace_number(text, rnd)  # not JSON (any more): fall back to a text mutation


MUTATORS: dict[str, Callable[[str, random.Random], str]] = {
    "cut": cut, "flip_byte": flip_byte, "duplicate_line": duplicate_line,
    "delete_line": delete_line, "swap_lines": swap_lines, "replace_number": replace_number,
    "insert_unicode": insert_unicode, "json_value": mutate_json_value}
TEXT_MUTATORS = tuple(name for name in MUTATORS if name != "json_value")
JSON_FORMATS = {"gbench_json", "hyperfine_json", "json_map", "bmf_json", "pytest_benchmark_json",
                "pyperf_json", "asv_json"}


def mutators_for(fmt: str) -> tuple[str, ...]:
    return tuple(MUTATORS) if fmt in JSON_FORMATS else TEXT_MUTATORS


def pick_mutators(fmt: str, rnd: random.Random) -> list[str]:
    """1-3 mutations; half of those on JSON formats change a value in the tree (text mutations
    of JSON mostly end in a syntax error and never reach the adapter's own checks)."""
    names = []
    for _ in range(rnd.randint(1, 3)):
        json_value = fmt in JSON_FORMATS and rnd.random() < 0.5
        names.append("json_value" if json_value else rnd.choice(TEXT_MUTATORS))
    return names


def mutate(seed: Seed, names: list[str], rnd: random.Random) -> str:
    text = seed.original
    for name in names:
        text = MUTATORS[name](text, rnd)
    return text

# ------------------------------------------------------------------------- parse and oracle


@dataclass(frozen=True)
class Outcome:
    kind: str  # accepted | parse_error | crash | nonsense
    detail: str = ""
    report: ToolReport | None = None


def parse_once(seed: Seed, mutated: str) -> Outcome:
    """Adapter + validate.py on one input: a family error is a parse error, anything else a
    crash; a returned report the oracle rejects is nonsense."""
    text, request = seed.inputs(mutated)
    try:
        report = validate_report(ADAPTERS[seed.fmt].parse(text, request), request.source)
    except UserError as exc:
        message = str(exc)
        if "\n" in message or not _utf8(message):
            return Outcome("crash", f"error message not one storable line: {message[:200]!r}")
        return Outcome("parse_error", message)
    except Exception as exc:  # noqa: BLE001 - what the fuzzer is looking for
        return Outcome("crash", f"{type(exc).__name__}: {str(exc)[:200]}")
    problem = nonsense(report)
    return Outcome("nonsense", problem, report) if problem else Outcome("accepted", "", report)


def _utf8(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# Metrics that can never be negative, and those a measured repetition must have > 0.
_NEVER_NEGATIVE = re.compile(r"(_us|_ns|_s|_ms|_bytes|_per_sec|_per_second|_count|_pct)$|"
                             r"^(perf_|instructions|iterations|repetitions|operations)")
_POSITIVE = {"ops_per_sec", "per_thread_ops_per_sec", "micros_per_op"}
_PERCENTILE_ORDER = ("min_us", "p50_us", "p75_us", "p95_us", "p99_us", "p99_9_us", "p99_99_us",
                     "max_us")
INT32 = 2**31 - 1


def _int_in(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _metric_problem(m: Any, ok_row: bool) -> str:
    if not isinstance(m.value, (int, float)) or isinstance(m.value, bool) or not math.isfinite(m.value):
        return f"metric {m.name} = {m.value!r}"
    if m.unit != "ratio" and m.value < 0 and (_NEVER_NEGATIVE.search(m.name) or m.unit in ("s", "ms", "ops/s")):
        return f"negative {m.name} = {m.value}"
    if ok_row and m.unit != "ratio" and m.name in _POSITIVE and m.value <= 0:
        return f"{m.name} = {m.value} in a measured repetition"
    if m.name == "found_pct" and m.value > 100:
        return f"found_pct = {m.value}"
    if not _utf8(m.name) or not _utf8(m.unit):
        return f"metric name/unit not UTF-8: {m.name!r}"
    return ""


def _row_problem(row: Any, ok_row: bool) -> str:
    if not (_int_in(row.threads, 1, INT32)):
        return f"threads = {row.threads!r}"
    if not all(_utf8(t) for t in (row.name, *row.notes)) or not row.name:
        return f"name/notes not storable: {row.name!r}"
    try:
        hash(row.params)
    except TypeError:
        return f"unhashable params {row.params!r}"
    for key, value in row.params:
        if not _utf8(key) or isinstance(value, (dict, list)) or (isinstance(value, str) and not _utf8(value)):
            return f"param {key!r} = {value!r}"
    for m in row.metrics:
        problem = _metric_problem(m, ok_row)
        if problem:
            return problem
    values = {m.name: m.value for m in row.metrics}
    for prefix in {n[:-len("max_us")] for n in values if n.endswith("max_us")}:
        chain = [values[prefix + n] for n in _PERCENTILE_ORDER if prefix + n in values]
        if any(a > b + 0.01 for a, b in zip(chain, chain[1:])):
            return f"{prefix}latency out of order: {chain}"
    return ""


def nonsense(report: ToolReport) -> str:
    """What is wrong with a returned report, or "" (independent of validate.py)."""
    for row in report.rows:
        if not _int_in(row.repetition, 1, INT32) or not _utf8(row.error):
            return f"{row.name!r}: repetition {row.repetition!r} / error {row.error[:40]!r}"
        problem = _row_problem(row, row.status == ROW_OK)
        if problem:
            return f"{row.name!r}: {problem}"
        for hist in row.histograms:
            previous = 0.0
            for lo, hi, n in hist.buckets:
                if not (math.isfinite(lo) and math.isfinite(hi) and previous <= lo <= hi) \
                        or not _int_in(n, 0, 2**63 - 1):
                    return f"{row.name!r}: histogram {hist.name} bucket ({lo}, {hi}, {n})"
                previous = hi
        for series in row.series:
            if not all(math.isfinite(t) and math.isfinite(v) and v >= 0 for t, v in series.points):
                return f"{row.name!r}: time series {series.name} {series.points[:3]}"
    for agg in report.aggregates:
        problem = _row_problem(agg, False)
        if problem or not _utf8(agg.aggregate):
            return f"aggregate {agg.name!r} {agg.aggregate!r}: {problem}"
    cpus = report.context.get("num_cpus")
    if cpus is not None and not _int_in(cpus, 1, INT32):
        return f"context num_cpus = {cpus!r}"
    return ""


def store_import(store: Any, seed: Seed, report: ToolReport, sha: str) -> None:
    """Write an accepted report as an import through a real store.Store (raises what the store
    raises: an accepted report that the database refuses is nonsense that got through)."""
    from datetime import datetime, timezone

    from orchestrator.history.importer import ImportMeta, build_import_batch

    meta = ImportMeta(fmt=seed.fmt, source_path=f"/fuzz/{seed.name}", sha256=sha, machine="fuzz")
    store.add_import(build_import_batch(report, meta, datetime.now(timezone.utc).isoformat()))


def importable(seed: Seed) -> bool:
    return seed.fmt in IMPORT_FORMATS and seed.target == "text"
