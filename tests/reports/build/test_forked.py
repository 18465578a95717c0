"""forked.start_in_stages: the first stage's result reaches the parent while the second runs."""
import os
import time
from pathlib import Path

import pytest

from reports.build import forked


def test_the_first_result_comes_before_the_second_stage_ends(tmp_path: Path) -> None:
    go_on = tmp_path / "go-on"

    def then(kept: int) -> int | str:
        deadline = time.monotonic() + 30
        while not go_on.exists():  # the parent creates it once it has the first result
            if time.monotonic() > deadline:
                return "the first result came only at the end"
            time.sleep(0.01)
        return kept * 2

    first, second = forked.start_in_stages(lambda: ("sent", 21), then, "test-stages")
    assert first() == "sent" and first() == "sent"
    go_on.touch()
    assert second() == 42 and second() == 42


def test_an_error_in_the_first_stage_is_raised_by_both_waits() -> None:
    def fail() -> tuple[str, str]:
        raise ValueError("bad value 7; use 8")

    first, second = forked.start_in_stages(fail, lambda kept: kept, "test-stages")
    with pytest.raises(ValueError, match="bad value 7"):
        first()
    with pytest.raises(ValueError, match="bad value 7"):
        second()


def test_a_child_that_dies_in_the_first_stage_is_reported() -> None:
    first, second = forked.start_in_stages(lambda: os._exit(3), lambda kept: kept, "test-dying")
    with pytest.raises(RuntimeError, match="test-dying died"):
        first()
    with pytest.raises(RuntimeError, match="test-dying died"):
        second()


def test_a_first_result_that_does_not_pickle_is_the_first_wait_s_error() -> None:
    first, second = forked.start_in_stages(lambda: (lambda: None, 1), lambda kept: kept,
                                           "test-stages")
    with pytest.raises(Exception, match="pickle"):
        first()
    with pytest.raises(Exception, match="pickle"):
        second()


def test_waiting_for_the_second_stage_first_reads_a_large_first_result() -> None:
    """A first result larger than a pipe's buffer, never waited for: the child must not stay
    in its send while the parent waits for the end."""
    large = "x" * (4 << 20)
    first, second = forked.start_in_stages(lambda: (large, 2), lambda kept: kept * 2,
                                           "test-stages")
    assert second() == 4
    assert first() == large


def test_a_result_asked_for_in_another_process_is_refused() -> None:
    """A child forked later inherits the parent's pipe: reading it there would take the
    message from the parent."""
    first, second = forked.start_in_stages(lambda: ("sent", 1), lambda kept: kept,
                                           "test-stages")
    asked = forked.start(first, "test-asker")
    with pytest.raises(RuntimeError, match="asked for in another process"):
        asked()
    assert first() == "sent" and second() == 1
