"""perf stat CSV (pure), on a file captured on this kind of machine (software events only)."""
from orchestrator.adapters.perf_csv import parse_perf_csv, perf_command
from tests.conftest import read_data


def test_kvm_guest_counts_software_events_and_names_the_missing_hardware_ones():
    metrics, unavailable = parse_perf_csv(read_data("perf/kvm_software_only.csv"))
    by_name = {m.name: m for m in metrics}
    assert unavailable == ["instructions", "cycles", "cache-misses"]
    assert by_name["perf_page_faults"].value == 103
    assert by_name["perf_context_switches"].value == 0
    assert by_name["perf_cpu_clock"].value == 1.72 and by_name["perf_cpu_clock"].unit == "msec"


def test_hardware_counters_with_user_suffix_are_counted():
    # The same format with hardware counters enabled (non-root perf appends :u to the event).
    text = "1523456789,,instructions:u,812345,100.00,1.87,insn per cycle\n" \
           "812345678,,cycles:u,812345,100.00,3.01,GHz\n"
    metrics, unavailable = parse_perf_csv(text)
    assert [(m.name, m.value) for m in metrics] == [("perf_instructions", 1523456789.0),
                                                   ("perf_cycles", 812345678.0)]
    assert unavailable == []


def test_wrapper_keeps_the_engine_argv_after_the_separator():
    argv = perf_command(["db_bench", "--num=5"], "/tmp/p.csv")
    assert argv[:5] == ["perf", "stat", "-x,", "-o", "/tmp/p.csv"]
    assert argv[-3:] == ["--", "db_bench", "--num=5"]


def test_a_file_without_any_counter_line_is_an_error():
    import pytest

    from orchestrator.errors import EngineOutputError

    for text in ("", "# started on Sun Nov 22 19:42:41 2026\n\n", "Error:\nAccess to performance monitoring\n"):
        with pytest.raises(EngineOutputError, match="no counter line"):
            parse_perf_csv(text)
