"""lib/deferred.py: work handed to `later` inside a `deferred()` block runs when the block ends, in
order, even when the block raised; outside a block it runs at once; a failure is logged, not raised."""

from __future__ import annotations

import logging

import pytest

from lib.deferred import deferred, later


def test_work_waits_for_the_end_of_the_block_and_runs_in_order() -> None:
    done: list[str] = []
    with deferred():
        later(lambda: done.append("first"))
        later(lambda: done.append("second"))
        done.append("the block")
    assert done == ["the block", "first", "second"]


def test_outside_a_block_work_runs_at_once() -> None:
    done: list[str] = []
    later(lambda: done.append("now"))
    assert done == ["now"]


def test_work_runs_after_a_block_that_raised_and_a_failing_work_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    done: list[str] = []

    def failing() -> None:
        raise RuntimeError("the cache is gone")

    with (
        caplog.at_level(logging.ERROR, logger="lib.deferred"),
        pytest.raises(ValueError, match="the block's"),
        deferred(),
    ):
        later(failing)
        later(lambda: done.append("after the failure"))
        raise ValueError("the block's own")
    assert done == ["after the failure"]
    assert "deferred work failed" in caplog.text
