"""SIGTERM and SIGHUP end a run the way Ctrl-C does (side effects: signal handlers).

A CI cancel sends SIGTERM and a closed terminal SIGHUP; Python's default for both is to die on
the spot, leaving the run `running` and the engine running on. Raised as `Interrupted` in the
main thread instead, they unwind through the run loop: the engine's process group is killed,
the run is marked interrupted and every finished invocation stays stored.
"""
from __future__ import annotations

import signal
from contextlib import contextmanager
from typing import Any, Iterator

from .errors import Interrupted

HANDLED = (signal.SIGTERM, signal.SIGHUP)


def _raise(signum: int, frame: Any) -> None:
    del frame
    raise Interrupted(f"stopped by {signal.Signals(signum).name}")


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGTERM/SIGHUP raise Interrupted, SIGINT stays KeyboardInterrupt, inside the block."""
    previous = {sig: signal.signal(sig, _raise) for sig in HANDLED}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

