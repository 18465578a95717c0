"""Cached build records: reused only while the binary is the one the provenance describes."""
import json
from dataclasses import asdict, dataclass

from orchestrator.build.engine import load_provenance, sha256_file
from orchestrator.build.harness_build import PROVENANCE_FILE as HARNESS_FILE, _load_cached


@dataclass(frozen=True)
class Record:
    binary_path: str
    binary_sha256: str
    libs: tuple[str, ...]
    cached: bool = False


def test_provenance_round_trip_and_a_changed_binary_is_not_reused(tmp_path):
    binary = tmp_path / "db_bench"
    binary.write_bytes(b"\x7fELF one")
    prov = tmp_path / "provenance.json"
    prov.write_text(json.dumps(asdict(Record(str(binary), sha256_file(binary), ("a",)))))
    loaded = load_provenance(prov, Record, ("libs",))
    assert loaded == Record(str(binary), sha256_file(binary), ("a",), cached=True)
    binary.write_bytes(b"\x7fELF two")
    assert load_provenance(prov, Record, ("libs",)) is None
    assert load_provenance(tmp_path / "missing.json", Record, ()) is None


def test_harness_cache_reads_its_own_provenance_file(tmp_path):
    binary = tmp_path / "build" / "rocksdb_harness"
    binary.parent.mkdir()
    binary.write_bytes(b"harness")
    record = {"binary_path": str(binary), "binary_sha256": sha256_file(binary),
              "engine_build_id": "e", "sources_sha256": "s", "cmake_build_type": "Release",
              "cxx_flags": "", "link_libraries": ["snappy"]}
    (tmp_path / HARNESS_FILE).write_text(json.dumps(record))
    cached = _load_cached(tmp_path)
    assert cached is not None and cached.cached and cached.link_libraries == ("snappy",)
