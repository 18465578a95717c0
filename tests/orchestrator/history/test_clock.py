"""A bundle node's clock against the ingest side's (history/clock.py): the rule on its own."""
from datetime import datetime, timedelta, timezone

import pytest

from orchestrator.history.clock import TOLERANCE_S, clock_skew, skew_text

NOW = datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("node_offset_s, file_offset_s, skew", [
    (0, 0, None),  # in step
    (TOLERANCE_S - 1, 0, None),  # within the tolerance: NTP-grade differences are no skew
    (-5 * 3600, 0, -5 * 3600),  # node 5 h behind, file time by the file server
    (3 * 3600, 0, 3 * 3600),  # node 3 h ahead
    # node ahead and its disk too (file time ahead, later than now): capped by this host's now
    (3 * 3600, 3 * 3600, 3 * 3600),
    (-600, -600, None),  # the bundle was sealed ten minutes ago by a node in step
])
def test_the_skew_is_the_node_time_minus_the_file_time_capped_by_now(node_offset_s, file_offset_s,
                                                                    skew):
    node_time = NOW + timedelta(seconds=node_offset_s)
    file_time = NOW.timestamp() + file_offset_s
    assert clock_skew(node_time, file_time, NOW.timestamp()) == skew


@pytest.mark.parametrize("skew, said", [(-18000.0, "5.0 h behind"), (180.0, "3 min ahead")])
def test_the_skew_is_said_in_hours_or_minutes_and_direction(skew, said):
    assert skew_text(skew) == said
