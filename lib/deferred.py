"""Work a customer's answer need not wait for: within a `deferred()` block, `later(work)` runs
`work` when the block ends, in the order given; outside one it runs at once.

A bulk deep batch remembers what the mail servers answered (the shared stores of mailbox and
catch-all answers, docs/deep.md) for the next job that asks. Most of them are written while its
last sessions still run (verification/deep.py, the idle window); those that came in at the end
(a few thousand of a 20,000-row batch, about 0.1 s of writes) wait until the job is completed,
in the same task. A crash between the two costs only the cache: the answers were never part of
the job's results.

Deferred work that fails is logged, not raised: the job it followed is done, and a cache that
missed a write only asks again.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar

logger = logging.getLogger(__name__)

_waiting: ContextVar[list[Callable[[], None]] | None] = ContextVar("deferred_work", default=None)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Run the work handed to `later` within the block once the block ends (raised or not)."""
    token = _waiting.set([])
    try:
        yield
    finally:
        waiting = _waiting.get() or []
        _waiting.reset(token)
        for work in waiting:
            try:
                work()
            except Exception:
                logger.exception("deferred work failed")


def later(work: Callable[[], None]) -> None:
    """`work` at the end of the enclosing `deferred()` block, or now when there is none."""
    waiting = _waiting.get()
    if waiting is None:
        work()
    else:
        waiting.append(work)
