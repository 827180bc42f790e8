"""bench/cpu_timeline.py: a job's phases and floor worked out from its CPU samples."""

from __future__ import annotations

import os

import pytest

from bench.cpu_timeline import Sample, _split

TICK = 0.01


def samples(upload: float, running: float, seen: float) -> list[Sample]:
    """A job on a made-up machine: the web uses one core through the upload, the qcluster 1.5 cores
    and the DNS server 0.25 while the chunks run, nothing before or after; a sample every 10 ms."""
    made: list[Sample] = []
    web = qcluster = dns = busy = 0.0
    for step in range(-10, round((upload + running + seen) / TICK) + 10):
        at = step * TICK
        if 0 <= at < upload:
            web += TICK
            busy += TICK
        elif upload <= at < upload + running:
            qcluster, dns = qcluster + 1.5 * TICK, dns + 0.25 * TICK
            busy += 1.75 * TICK
        made.append((100 + at + TICK, {"web": web, "qcluster": qcluster, "dns": dns}, busy))
    return made


def test_each_phase_has_its_wall_time_its_cores_busy_and_each_process_cpu() -> None:
    split = {"upload_s": 0.3, "queued_s": 0.35, "running_s": 1.5, "seen_s": 0.1}
    found = _split(samples(0.3, 1.5, 0.1), 100.0, 1.9, split)
    assert found["upload"]["wall_s"] == pytest.approx(0.3)
    assert found["upload"]["web_cpu_s"] == pytest.approx(0.3, abs=TICK)
    assert found["upload"]["cores_busy"] == pytest.approx(1.0, abs=0.05)
    assert found["waiting"]["wall_s"] == pytest.approx(0.0, abs=1e-9)
    assert found["running"]["qcluster_cpu_s"] == pytest.approx(2.25, abs=2 * TICK)
    assert found["running"]["cores_busy"] == pytest.approx(1.75, abs=0.05)
    assert found["seen"]["qcluster_cpu_s"] == pytest.approx(0.0, abs=2 * TICK)
    assert found["job"]["dns_cpu_s"] == pytest.approx(0.375, abs=TICK)


def test_the_floor_is_the_job_cpu_spread_over_every_core() -> None:
    split = {"upload_s": 0.3, "queued_s": 0.35, "running_s": 1.5, "seen_s": 0.1}
    found = _split(samples(0.3, 1.5, 0.1), 100.0, 1.9, split)
    cores = os.cpu_count() or 1
    assert found["floor_s"] == pytest.approx((0.3 + 2.25 + 0.375) / cores, abs=0.02)
    assert found["floor_without_dns_s"] == pytest.approx((0.3 + 2.25) / cores, abs=0.02)


def test_a_claim_before_the_upload_response_is_read_leaves_no_negative_wait() -> None:
    # The worker claimed 0.05 s before the client had read the upload's response.
    split = {"upload_s": 0.35, "queued_s": 0.25, "running_s": 1.55, "seen_s": 0.1}
    found = _split(samples(0.3, 1.5, 0.1), 100.0, 1.95, split)
    assert found["waiting"]["wall_s"] == 0.0
    assert found["upload"]["wall_s"] == pytest.approx(0.3)
    assert found["running"]["wall_s"] == pytest.approx(1.55)
