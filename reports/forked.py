"""Work done in a forked child while the parent goes on (side effects): this machine has 2
cores, and a site build has pages that need nothing from each other."""
from __future__ import annotations

import multiprocessing
import traceback
from typing import Any, Callable


def start(work: Callable[[], Any], name: str) -> Callable[[], Any]:
    """Run `work()` in a forked child (it shares the parent's memory, so DataFrames are not
    pickled); returns a function that waits for the child and gives what `work` returned, or
    raises its error (a UserError stays one, for the CLI's one line)."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)

    def child() -> None:
        try:
            sender.send(("ok", work()))
        except BaseException as error:  # noqa: BLE001 - handed to the parent, which raises it
            try:
                sender.send(("error", error))
            except Exception:  # noqa: BLE001 - an exception that does not pickle
                sender.send(("error", RuntimeError(traceback.format_exc())))

    process = context.Process(target=child, name=name, daemon=True)
    process.start()
    sender.close()  # the child's copy stays open: its death ends recv() with EOFError

    ended: list[tuple[str, Any]] = []  # a second wait gives the first one's outcome again

    def wait() -> Any:
        if not ended:
            try:
                ended.append(receiver.recv())
            except EOFError:
                ended.append(("error", RuntimeError(f"the process {name} died")))
            process.join()
        outcome, value = ended[0]
        if outcome != "ok":
            raise value
        return value

    return wait
