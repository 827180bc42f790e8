"""The `outside` scenario's targets (bench/outside.py, bench/targets.py): its seconds and the farm's peak."""

from __future__ import annotations

from bench import targets
from bench.__main__ import parse
from bench.outside import OUTSIDE_BULK, OUTSIDE_DEEP, OUTSIDE_FAIR, OUTSIDE_PEER
from bench.results import Measurement


def _deep(seconds: float, errors: list[str] | None = None) -> Measurement:
    extra = {"sessions": 300, "peak_per_address": 3}
    rate = 2000 / seconds
    return Measurement("outside", OUTSIDE_DEEP, "rows/s", rate, 2000, seconds, extra=extra, errors=errors or [])


def _outside_targets(*measured: Measurement) -> dict[str, targets.Target]:
    return {target.name: target for target in targets.targets(list(measured)) if target.name.startswith("outside")}


def test_a_deep_job_seen_done_within_a_second_and_a_half_meets_its_target() -> None:
    found = _outside_targets(_deep(1.2))
    assert found["outside: deep 2,000 rows, fresh default stack ≤ 1.5 s"].met is True


def test_a_deep_job_over_a_second_and_a_half_misses_it() -> None:
    found = _outside_targets(_deep(1.6))
    assert found["outside: deep 2,000 rows, fresh default stack ≤ 1.5 s"].met is False


def test_a_fast_deep_job_with_four_sessions_at_one_address_misses_it() -> None:
    found = _outside_targets(_deep(1.0, errors=["4 connections to one address"]))
    assert found["outside: deep 2,000 rows, fresh default stack ≤ 1.5 s"].met is False


def test_a_case_that_did_not_run_is_not_judged() -> None:
    fair = Measurement("outside", OUTSIDE_FAIR, "s", 0.4, 50, 0.4)
    found = _outside_targets(fair)
    assert found["outside: a 50-row job behind five 100k jobs, upload → callback ≤ 1.0 s"].met is True
    assert found["outside: deep 20,000 rows, fresh default stack ≤ 5.0 s"].met is None


BULK_TARGET = "outside: the bulk fast job, fresh default stack ≥ 50× email-validator"


def _bulk(rate: float, errors: list[str] | None = None) -> Measurement:
    return Measurement("outside", OUTSIDE_BULK, "rows/s", rate, 100_000, 100_000 / rate, errors=errors or [])


def _peer(rate: float) -> Measurement:
    return Measurement("outside", OUTSIDE_PEER, "rows/s", rate, 100_000, 100_000 / rate)


def test_a_bulk_job_fifty_times_the_peer_in_the_same_round_meets_its_target() -> None:
    found = _outside_targets(_bulk(30_000), _peer(600))
    assert found[BULK_TARGET].met is True
    assert found[BULK_TARGET].value == 50


def test_a_bulk_job_under_fifty_times_the_peer_misses_it() -> None:
    assert _outside_targets(_bulk(29_000), _peer(600))[BULK_TARGET].met is False


def test_a_bulk_job_that_did_not_process_every_row_misses_it_however_fast() -> None:
    found = _outside_targets(_bulk(60_000, errors=["job completed, progress 90,000"]), _peer(600))
    assert found[BULK_TARGET].met is False


def test_the_bulk_ratio_is_not_judged_without_the_peer_of_its_round() -> None:
    assert _outside_targets(_bulk(30_000))[BULK_TARGET].met is None


def test_each_part_of_the_scenario_can_be_run_alone() -> None:
    only = ["outside-deep", "outside-fairness", "outside-bulk"]
    assert parse(["--only", ",".join(only)]).only == only
