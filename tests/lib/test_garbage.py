"""The cyclic collector around a bulk worker's chunk (lib/garbage.py)."""

from __future__ import annotations

import gc

import pytest

from lib.garbage import collector_paused


def test_the_collector_waits_inside_and_runs_again_after_even_when_the_block_raises() -> None:
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
