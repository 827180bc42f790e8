"""Threads released together, for the tests of what must hold under concurrent requests."""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.db import connections


def run_at_once[T](count: int, work: Callable[[], T]) -> list[T]:
    """Run `work` in `count` threads released together; each thread closes its own connection.

    Returns every thread's result; an exception in any thread is raised here, once all have ended.
    """
    barrier = threading.Barrier(count)
    results: list[T] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def thread_main() -> None:
        barrier.wait()
        try:
            outcome: list[T] = [work()]
        except BaseException as error:
            outcome = []
            with lock:
                errors.append(error)
        finally:
            connections.close_all()
        with lock:
            results.extend(outcome)

    threads = [threading.Thread(target=thread_main) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results
