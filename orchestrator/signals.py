"""SIGTERM and SIGHUP end a run the way Ctrl-C does (side effects: signal handlers).

A CI cancel sends SIGTERM and a closed terminal SIGHUP; Python's default for both is to die on
the spot, leaving the run `running` and the engine running on. Raised as `Interrupted` in the
main thread instead, they unwind through the run loop: the engine's process group is killed,
the run is marked interrupted and every finished invocation stays stored.

A stop raised between an engine's start and the code that kills it on the way out (inside
`subprocess.Popen`, after the fork) left the engine running, unowned, while the run was sealed
around it: `signals_held` keeps such a stop until the engine is owned.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from .errors import Interrupted

HANDLED = (signal.SIGTERM, signal.SIGHUP)  # raised as Interrupted; SIGINT as KeyboardInterrupt


class _Hold:
    """While held (main thread only: Python runs signal handlers there), a stop is kept
    rather than raised."""

    held = False
    pending: BaseException | None = None


def _stop(error: BaseException) -> None:
    if not _Hold.held:
        raise error
    if _Hold.pending is None:  # the first stop is the one said
        _Hold.pending = error


def _on_stop(signum: int, frame: Any) -> None:
    del frame
    _stop(Interrupted(f"stopped by {signal.Signals(signum).name}"))


def _on_ctrl_c(signum: int, frame: Any) -> None:
    del signum, frame
    _stop(KeyboardInterrupt())


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """Inside the block SIGTERM/SIGHUP raise Interrupted and SIGINT KeyboardInterrupt, at once
    or, inside `signals_held`, as it ends. A SIGINT that was ignored (a background job of a
    shell without job control) stays ignored."""
    previous = {sig: signal.signal(sig, _on_stop) for sig in HANDLED}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, _on_ctrl_c)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def signals_held() -> Iterator[None]:
    """A stop that comes inside the block is raised as it ends: the block starts a process and
    hands it to code that kills it on any exception, and must not be cut between the two. A
    no-op outside the main thread (no handler runs there) and when already held."""
    if _Hold.held or threading.current_thread() is not threading.main_thread():
        yield
        return
    _Hold.held = True
    try:
        yield
    except BaseException as exc:
        pending = _release()
        if pending is not None:
            raise pending from exc
        raise
    pending = _release()
    if pending is not None:
        raise pending


def _release() -> BaseException | None:
    pending, _Hold.held, _Hold.pending = _Hold.pending, False, None
    return pending
