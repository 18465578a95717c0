"""Cached build records: a build is reused only while its binary is the one its provenance
records; a binary changed after it was built is refused in one line (never measured, never
rebuilt over), while a folder without a provenance (an unfinished build) is built again."""
import json
from dataclasses import asdict, dataclass

import pytest

from orchestrator.build import engine
from orchestrator.build.harness_build import PROVENANCE_FILE as HARNESS_FILE, _load_cached
from orchestrator.build.provenance import load_provenance, sha256_file, write_provenance
from orchestrator.errors import BuildError


@dataclass(frozen=True)
class Record:
    binary_path: str
    binary_sha256: str
    libs: tuple[str, ...]
    cached: bool = False


def _recorded(folder, content=b"\x7fELF one"):
    binary = folder / "build" / "db_bench"
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_bytes(content)
    prov = folder / "provenance.json"
    write_provenance(prov, Record(str(binary), sha256_file(binary), ("a",)))
    return binary, prov


def test_provenance_round_trip_and_no_provenance_is_no_build(tmp_path):
    binary, prov = _recorded(tmp_path)
    loaded = load_provenance(prov, Record, ("libs",))
    assert loaded == Record(str(binary), sha256_file(binary), ("a",), cached=True)
    assert load_provenance(tmp_path / "missing.json", Record, ()) is None
    assert not list(tmp_path.glob("*.partial"))  # written whole, then renamed


@pytest.mark.parametrize("change", [lambda b: b.write_bytes(b"\x7fELF two"), lambda b: b.unlink()],
                         ids=["altered", "removed"])
def test_a_changed_or_missing_binary_is_refused_naming_both_sha256_and_the_fix(tmp_path, change):
    binary, prov = _recorded(tmp_path)
    expected = sha256_file(binary)
    change(binary)
    with pytest.raises(BuildError) as err:
        load_provenance(prov, Record, ("libs",))
    message = str(err.value)
    found = sha256_file(binary) if binary.exists() else "no file"
    assert "\n" not in message
    assert f"{binary} is not the one provenance.json recorded (sha256 {expected}, found {found})" \
        in message
    assert message.endswith(f"remove {tmp_path} to build it again")


@dataclass(frozen=True)
class Recipe:
    """A build of several binaries (engine.Build's fields that the check reads)."""

    binary_path: str
    binary_sha256: str
    binaries: dict
    binary_sha256s: dict
    cached: bool = False


def test_every_binary_of_a_recipe_is_checked_and_a_link_out_of_the_folder_is_kept(tmp_path):
    main, tool = tmp_path / "main", tmp_path / "tool"
    main.write_bytes(b"main")
    tool.write_bytes(b"tool")
    python = tmp_path / "venv-python"  # a venv's python: a link to the system's
    python.symlink_to(main)
    record = Recipe(str(main), sha256_file(main), {"main": str(main), "tool": str(tool),
                                                   "python": str(python)},
                    {"main": sha256_file(main), "tool": sha256_file(tool),
                     "python": sha256_file(main)})
    prov = tmp_path / "provenance.json"
    prov.write_text(json.dumps(asdict(record)))
    assert load_provenance(prov, Recipe, ()).cached
    tool.write_bytes(b"tampered")
    with pytest.raises(BuildError, match=f"cached build {tool} is not the one"):
        load_provenance(prov, Recipe, ())


def test_a_provenance_naming_a_binary_outside_its_folder_is_refused(tmp_path):
    """A rewritten provenance must not point the run at some other file with a matching hash."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = elsewhere / "db_bench"
    other.write_bytes(b"not ours")
    folder = tmp_path / "build-folder"
    folder.mkdir()
    prov = folder / "provenance.json"
    prov.write_text(json.dumps(asdict(Record(str(other), sha256_file(other), ()))))
    with pytest.raises(BuildError, match=f"found a binary outside {folder}"):
        load_provenance(prov, Record, ("libs",))


def test_harness_cache_reads_its_own_provenance_file_and_refuses_a_changed_harness(tmp_path):
    binary = tmp_path / "build" / "rocksdb_harness"
    binary.parent.mkdir()
    binary.write_bytes(b"harness")
    record = {"binary_path": str(binary), "binary_sha256": sha256_file(binary),
              "engine_build_id": "e", "sources_sha256": "s", "cmake_build_type": "Release",
              "cxx_flags": "", "link_libraries": ["snappy"]}
    (tmp_path / HARNESS_FILE).write_text(json.dumps(record))
    cached = _load_cached(tmp_path)
    assert cached is not None and cached.cached and cached.link_libraries == ("snappy",)
    binary.write_bytes(b"harness, altered")
    with pytest.raises(BuildError, match="rocksdb_harness is not the one harness.json recorded"):
        _load_cached(tmp_path)


@pytest.fixture
def leveldb(compose_conf, tmp_path, monkeypatch):
    """The real LevelDB recipe without patches, its cache under tmp_path, a fake compiler step
    that writes a binary (and counts its calls), and the Debian source already fetched."""
    conf = compose_conf(["engine=leveldb", "engine.patches=[]"])
    source = tmp_path / "sources" / "leveldb_1.23-4" / "src"
    source.mkdir(parents=True)
    (source / "CMakeLists.txt").write_text("# fake\n")
    compiles = []

    def fake_compile(recipe, variant, tree, build_dir, jobs, ccache_dir, on_progress):
        compiles.append(build_dir)
        (build_dir / "build").mkdir(exist_ok=True)
        (build_dir / "build" / recipe.binaries["db_bench"]).write_bytes(b"\x7fELF fresh")
        return build_dir / "build"

    monkeypatch.setattr(engine, "compile_tree", fake_compile)
    planned = engine.plan_build(conf.engine, conf.build, tmp_path, say=lambda _: None)
    return conf, planned.build_dir, compiles


def test_build_engine_refuses_a_poisoned_cached_build_before_compiling_or_returning_it(leveldb,
                                                                                      tmp_path):
    conf, build_dir, compiles = leveldb
    first = engine.build_engine(conf.engine, conf.build, tmp_path, 1, say=lambda _: None)
    assert not first.cached and compiles == [build_dir]
    assert engine.build_engine(conf.engine, conf.build, tmp_path, 1, say=lambda _: None).cached
    with open(first.binary_path, "r+b") as fh:  # one byte changed in place
        fh.seek(4)
        fh.write(b"X")
    with pytest.raises(BuildError, match=f"sha256 {first.binary_sha256}, found "):
        engine.build_engine(conf.engine, conf.build, tmp_path, 1, say=lambda _: None)
    assert compiles == [build_dir]  # not rebuilt over: the evidence stays
    assert (build_dir / engine.PROVENANCE_FILE).exists()


def test_build_engine_still_redoes_an_unfinished_build(leveldb, tmp_path):
    conf, build_dir, compiles = leveldb
    (build_dir / "build").mkdir(parents=True)
    (build_dir / "build" / "half-written.o").write_bytes(b"")  # no provenance: interrupted
    build = engine.build_engine(conf.engine, conf.build, tmp_path, 1, say=lambda _: None)
    assert not build.cached and compiles == [build_dir]
    assert not (build_dir / "build" / "half-written.o").exists()  # started clean
    assert build.binary_sha256 == sha256_file(build_dir / "build" / conf.engine.binaries["db_bench"])
