"""Pick the parser for an engine's output format (pure)."""
from __future__ import annotations

from .errors import ConfigError
from .parse_leveldb import parse_leveldb
from .parse_rocksdb import parse_rocksdb
from .record import ParsedOutput

PARSERS = {"rocksdb": parse_rocksdb, "leveldb": parse_leveldb}


def parse_engine_output(engine: str, stdout: str, benchmark: str, threads: int,
                        report_csv: str = "") -> ParsedOutput:
    """Raises EngineOutputError when the output does not hold the benchmark's results."""
    parser = PARSERS.get(engine)
    if parser is None:
        raise ConfigError(f"no output parser for engine {engine!r}; known: {', '.join(PARSERS)}")
    return parser(stdout, benchmark, threads, report_csv)
