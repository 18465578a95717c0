"""Page-cache residency on a real file, before and after eviction."""
import os

from orchestrator.runners.cache import (evict_page_cache, measure_residency, parse_fincore_raw,
                                       read_back, residency_violation)


def test_fresh_dirty_file_is_resident_and_eviction_after_sync_empties_it(tmp_path):
    data = tmp_path / "db"
    data.mkdir()
    (data / "000001.sst").write_bytes(os.urandom(8 << 20))  # dirty pages, just written
    (data / "MANIFEST").write_bytes(os.urandom(4096 * 3 + 17))
    before = measure_residency(data)
    assert before.total_pages == 2048 + 4 and before.percent > 95
    procedure = evict_page_cache(data, drop_caches=False)
    assert procedure[0] == "sync"
    after = measure_residency(data)
    assert after.percent < 5
    with (data / "000001.sst").open("rb") as fh:  # reading brings it back
        fh.read()
    assert measure_residency(data).percent > 60


def test_fincore_raw_rounds_sizes_up_to_pages():
    r = parse_fincore_raw("2 4097 /a\n0 1 /b\n", page_size=4096)
    assert (r.resident_pages, r.total_pages, r.total_bytes) == (2, 3, 4098)


def test_residency_bounds():
    assert residency_violation(3.0, None, 5.0) == ""
    assert "> 5%" in residency_violation(7.5, None, 5.0)
    assert "< 95%" in residency_violation(80.0, 95.0, None)
    assert residency_violation(100.0, 95.0, None) == ""


def test_a_state_that_lost_pages_is_read_back_before_the_process_and_says_so(tmp_path):
    """Pages evicted after the warm-ups (another tenant, proactive reclaim): read back once,
    measured again, both figures kept; a resident data set is left as it is."""
    data = tmp_path / "db"
    data.mkdir()
    (data / "000001.ldb").write_bytes(os.urandom(4 << 20))
    evict_page_cache(data, drop_caches=False)
    assert measure_residency(data).percent < 5
    residency, said = read_back(data, min_pct=95)
    assert residency.percent > 95
    assert said.startswith("read back: residency ") and "→" in said
    again, said_again = read_back(data, min_pct=95)
    assert again.percent > 95 and said_again == ""
