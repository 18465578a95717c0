"""Which commit a bisect judges next, and what it found (analysis.bisect): pure logic."""
import pytest

from orchestrator.analysis.bisect import BAD, GOOD, SKIP, found, next_commit, state_of
from orchestrator.analysis.stats import FASTER, NO_CHANGE, SLOWER, UNDECIDED
from orchestrator.cli.backfill import pick


def bisect(n: int, first_bad: int, skips: set[int] = frozenset()) -> tuple[list[int], dict]:
    """Judge commits as a perfect measurement would; (the order judged, the states)."""
    states, judged = {0: GOOD}, []
    while (index := next_commit(n, states)) is not None:
        judged.append(index)
        states[index] = SKIP if index in skips else (BAD if index >= first_bad else GOOD)
    return judged, states


@pytest.mark.parametrize("first_bad", range(1, 16))
def test_sixteen_commits_take_at_most_five_judged_commits(first_bad):
    judged, states = bisect(16, first_bad)
    assert judged[0] == 15 and len(judged) <= 5  # with the good one: at most 6 builds
    assert found(16, states).first_bad == first_bad


def test_commit_eleven_is_found_in_six_builds():
    judged, states = bisect(16, 10)
    assert judged == [15, 7, 11, 9, 10] and found(16, states).first_bad == 10


def test_skipped_commits_are_worked_around_or_named():
    judged, states = bisect(16, 10, skips={7})
    assert 7 in judged and found(16, states) .first_bad == 10
    _, states = bisect(16, 10, skips={9})
    result = found(16, states)
    assert result.first_bad == 10 and result.ambiguous == (9,)


def test_a_range_without_a_regression_or_with_an_unjudged_bad_end_stops_at_once():
    assert bisect(8, 99) == ([7], {0: GOOD, 7: GOOD})
    judged, states = bisect(8, 3, skips={7})
    assert judged == [7] and found(8, states).first_bad is None


def test_states_of_verdicts():
    assert [state_of(v) for v in (SLOWER, NO_CHANGE, FASTER, UNDECIDED)] == [BAD, GOOD, GOOD, None]


def test_backfill_picks_every_kth_and_the_last():
    assert pick(list("abcdefg"), 3) == list("adg")
    assert pick(list("abcdef"), 4) == list("aef")
    assert pick(list("ab"), 1) == list("ab")
