"""Work done in a forked child while the parent goes on (side effects): this machine has 2
cores, and a site build has pages that need nothing from each other."""
from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import traceback
from typing import Any, Callable

_PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent ends
_PR_SET_NAME = 15  # prctl(2): the calling thread's name
# The niceness of a child whose work the build needs only at its end (the history's export,
# the comparisons, the trend charts): when it and the chain of reads and pages (the parent's
# and its pages' children's) want the same core, the chain gets about 94 % (at 5, three
# quarters: an added run's build took 6.05-7.69 s instead of 5.61-6.61, side by side; 19 was
# no faster than 12). A full build's run pages' worker is not niced (run_assembly.py).
LATER = 12


def start(work: Callable[[], Any], name: str, nice: int = 0) -> Callable[[], Any]:
    """Run `work()` in a forked child (it shares the parent's memory, so DataFrames are not
    pickled); returns a function that waits for the child and gives what `work` returned, or
    raises its error (a UserError stays one, for the CLI's one line). `nice`: added to the
    child's niceness, for work the build needs later than what the parent does meanwhile."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    parent = os.getpid()

    def child() -> None:
        try:
            die_with_parent(parent)
            _name_process(name)
            os.nice(nice)
            sender.send(("ok", work()))
        except BaseException as error:  # noqa: BLE001 - handed to the parent, which raises it
            _send_error(sender, error)

    if multiprocessing.current_process().daemon:
        # A forked child forking again (multiprocessing gives a daemon child no children of
        # its own): a plain fork, whose exit never unwinds into its parent's stack.
        pid = os.fork()
        if pid == 0:
            try:
                receiver.close()
                child()
            finally:
                os._exit(0)
        join: Callable[[], Any] = lambda: os.waitpid(pid, 0)
    else:
        process = context.Process(target=child, name=name, daemon=True)
        process.start()
        join = process.join
    sender.close()  # the child's copy stays open: its death ends recv() with EOFError

    received, joined = _receiving(receiver, name), []

    def wait() -> Any:
        try:
            return received()
        finally:
            if not joined:  # once: a second wait gives the first one's outcome again
                joined.append(True)
                join()

    return wait


def start_in_stages(first: Callable[[], tuple[Any, Any]], then: Callable[[Any], Any],
                    name: str, nice_then: int = 0) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """`start` for work in two stages whose first result the parent needs sooner: `first()`
    gives (what the parent gets now, what `then` goes on with); the child sends the former as
    soon as it has it, then runs `then(the latter)`, niced by `nice_then` (work the build needs
    later). Returns the functions that wait for each result; an error in the first stage is
    raised by both."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def work() -> Any:
        try:
            sent, kept = first()
            sender.send(("ok", sent))
        except BaseException as error:  # the first wait's error (a result that does not pickle)
            _send_error(sender, error)
            raise
        sender.close()
        os.nice(nice_then)
        return then(kept)

    waited = start(work, name)
    sender.close()  # the child's copy stays open: its death ends recv() with EOFError
    first_result = _receiving(receiver, name)

    def then_result() -> Any:
        # The first result first: unread, a large one would hold the child in its send.
        with contextlib.suppress(Exception):  # its error, if any, is the second wait's too
            first_result()
        return waited()

    return first_result, then_result


def _receiving(receiver: Any, name: str) -> Callable[[], Any]:
    """A function that gives what the child sent on `receiver` (again on a second call), or
    raises the error it sent or its death."""
    ended: list[tuple[str, Any]] = []
    owner = os.getpid()

    def received() -> Any:
        if os.getpid() != owner:  # a forked child would take the message from its parent
            raise RuntimeError(f"the result of {name} was asked for in another process")
        if not ended:
            try:
                ended.append(receiver.recv())
            except (EOFError, OSError):  # OSError: it died in the middle of a message
                ended.append(("error", RuntimeError(f"the process {name} died")))
        outcome, value = ended[0]
        if outcome != "ok":
            raise value
        return value

    return received


def _send_error(sender: Any, error: BaseException) -> None:
    try:
        sender.send(("error", error))
    except Exception:  # noqa: BLE001 - an exception that does not pickle
        sender.send(("error", RuntimeError(traceback.format_exc())))


def _name_process(name: str) -> None:
    """The child's name as `ps` and /proc show it (prctl's PR_SET_NAME: 15 bytes), so a build's
    processes can be told apart while it runs."""
    short = "tm-" + name.removeprefix("tidemark-")
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_NAME, short.encode()[:15])


def die_with_parent(parent: int) -> None:
    """The kernel kills this process when its parent ends (prctl's PR_SET_PDEATHSIG), as
    multiprocessing ends a daemon child at its parent's normal exit: a build killed by a signal
    leaves no child waiting for it forever. `parent`: its pid, in case it ended already."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
