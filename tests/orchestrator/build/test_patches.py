"""Engine patches: part of the build key, found by name, applied to a copy, refused in one line."""
import dataclasses

import pytest

from orchestrator.build.engine import build_key
from orchestrator.plan.engine_versions import resolve_engine_version
from orchestrator.errors import BuildError
from orchestrator.build.patches import (APPLIED_MARKER, PATCHES_DIR, find_patches, has_planted_patch,
                                  patch_identity, patched_tree)

COMPILER = "c++ (Debian 12.2.0-14+deb12u1) 12.2.0"


def test_a_patch_changes_the_build_key_and_no_patch_keeps_the_old_key(compose_conf):
    conf = compose_conf(["engine=leveldb"])
    unpatched = dataclasses.replace(conf.engine, patches=[])
    planted = (("planted-get-spin.patch", "a" * 64),)
    plain_key = build_key(unpatched, conf.build, COMPILER)
    assert build_key(unpatched, conf.build, COMPILER, ()) == plain_key
    assert build_key(unpatched, conf.build, COMPILER, planted) != plain_key
    # A changed patch (another digest) or another order is another build.
    assert build_key(unpatched, conf.build, COMPILER, (("planted-get-spin.patch", "b" * 64),)) \
        != build_key(unpatched, conf.build, COMPILER, planted)
    two = (("x.patch", "1" * 64), ("y.patch", "2" * 64))
    assert build_key(unpatched, conf.build, COMPILER, two) != \
        build_key(unpatched, conf.build, COMPILER, two[::-1])


def test_default_recipes_carry_the_planted_patch_and_rocksdb_9_carries_none(compose_conf):
    for engine in ("leveldb", "rocksdb"):
        recipe = resolve_engine_version(compose_conf([f"engine={engine}"]).engine)
        patches = find_patches(engine, recipe.patches)
        assert [p.name for p in patches] == ["planted-get-spin.patch"]
        assert has_planted_patch(patch_identity(patches))
        assert all(len(sha) == 64 for _, sha in patch_identity(patches))
    newer = resolve_engine_version(compose_conf(["engine=rocksdb", "engine.version=9.10.0"]).engine)
    assert newer.patches == [] and not has_planted_patch(())


def test_a_missing_patch_is_one_line_naming_it(tmp_path):
    with pytest.raises(BuildError) as error:
        find_patches("leveldb", ["nope.patch"], root=tmp_path)
    message = str(error.value)
    assert "'nope.patch'" in message and "\n" not in message and "engine.patches" in message


def _tree(tmp_path):
    tree = tmp_path / "src"
    (tree / "db").mkdir(parents=True)
    (tree / "db" / "a.cc").write_text("int Get() {\n  return 1;\n}\n")
    return tree


def _patch_file(root, name, old, new):
    (root / "leveldb").mkdir(parents=True, exist_ok=True)
    (root / "leveldb" / name).write_text(
        f"--- a/db/a.cc\n+++ b/db/a.cc\n@@ -1,3 +1,3 @@\n int Get() {{\n-  {old}\n+  {new}\n }}\n")


def test_patches_apply_to_a_copy_and_the_fetched_tree_stays_as_it_was(tmp_path):
    tree, root = _tree(tmp_path), tmp_path / "patches"
    _patch_file(root, "two.patch", "return 1;", "return 2;")
    patches = find_patches("leveldb", ["two.patch"], root=root)
    copy = patched_tree(tree, patches, tmp_path / "sources")
    assert copy != tree and "return 2;" in (copy / "db" / "a.cc").read_text()
    assert "return 1;" in (tree / "db" / "a.cc").read_text()
    assert (copy / APPLIED_MARKER).exists()
    assert patched_tree(tree, patches, tmp_path / "sources") == copy  # reused, not re-applied
    assert patched_tree(tree, (), tmp_path / "sources") == tree


def test_a_patch_that_does_not_apply_is_one_line_naming_it(tmp_path):
    tree, root = _tree(tmp_path), tmp_path / "patches"
    _patch_file(root, "stale.patch", "return 7;", "return 8;")
    with pytest.raises(BuildError) as error:
        patched_tree(tree, find_patches("leveldb", ["stale.patch"], root=root), tmp_path / "s")
    message = str(error.value)
    assert "'stale.patch'" in message and "does not apply" in message and "\n" not in message


def test_the_shipped_patches_exist_where_recipes_look():
    for engine in ("leveldb", "rocksdb"):
        text = (PATCHES_DIR / engine / "planted-get-spin.patch").read_text()
        assert "TIDEMARK_PLANTED_SPINS" in text and "TidemarkPlantedSpin(kTidemarkPlantedSpins);" in text
