"""Python's cyclic garbage collector in the bulk workers.

A bulk chunk makes hundreds of thousands of short-lived objects (verdicts, DNS answers, an SMTP
session's futures and replies), which reference counting frees as they go; the cyclic collector
meanwhile runs every 700 allocations and, every so often, walks everything alive, the worker's
imports included. Measured in a worker's shell on the deep benchmark's farm (2 shared cores): a
20,000-row deep batch spent 1.7 s of its 8–9 s of CPU in the collector, and 6.2 s in all with it
paused for the batch; a 2,000-row chunk 0.13 s of about 1.1 s.

So a worker pauses the collector while it judges a chunk (or a deep batch) and lets it run in
between, when what the chunk made has been freed: the reference cycles made meanwhile (an
exception's traceback, an event loop's tasks) wait until then, a few megabytes for the largest
batch. And what the worker holds for its whole life (imports, the verdict rules' lists) is moved
out of the collector's sight once, as it starts.

Only for a process that runs one task at a time: the collector is one per process, and a web
worker's threads would pause and resume it under each other.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The block runs without the cyclic collector; it is resumed (if it ran before) at the end."""
    running = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if running:
            gc.enable()


def lifelong_frozen() -> None:
    """Everything alive now stays alive for the process's life: the collector stops walking it."""
    gc.collect()
    gc.freeze()
