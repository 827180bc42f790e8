"""The engine's feedback rules, as plain functions (verification/engine/deliverability.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from verification.engine.deliverability import (
    GLOBAL_WEIGHT,
    PRIOR_STRENGTH,
    REPORTER_WEIGHT,
    Evidence,
    domain_counts,
    estimate,
    feedback_applied,
    global_counts,
    independent_pair,
    pooled_rate,
    reporters_of,
)
from verification.engine.verdict import Checks, Status, SubStatus, Verdict

T = datetime(2026, 11, 20, tzinfo=UTC)
CHECKS = Checks(True, True, True, None, False, False, True, False)


def catch_all() -> Verdict:
    return Verdict(
        email="a@b.com",
        is_valid=False,
        status=Status.RISKY,
        sub_status=SubStatus.CATCH_ALL,
        validation_mode="deep",
        confidence="medium",
        score=60,
        checks=CHECKS,
    )


def test_no_outcomes_is_the_prior() -> None:
    assert estimate(0, 0, 0.7).estimate == 0.7


def test_many_outcomes_outweigh_the_prior() -> None:
    assert abs(estimate(1000, 0, 0.2).estimate - 1.0) < 0.01
    assert estimate(5, 5, 0.9).estimate == round((5 + 9) / 20, 3)


def test_pooled_rate_is_shrunk_toward_the_default_while_thin() -> None:
    assert pooled_rate([], 0.7) == 0.7
    assert abs(pooled_rate([(900, 100)], 0.7) - 0.9) < 0.01


def test_independence_needs_two_accounts_with_no_member_in_common() -> None:
    assert independent_pair([1, 2], {1: frozenset({10}), 2: frozenset({20})})
    assert not independent_pair([1, 2], {1: frozenset({10}), 2: frozenset({10, 20})})
    assert not independent_pair([1], {1: frozenset({10})})
    assert independent_pair([1, 2, 3], {1: frozenset({10}), 2: frozenset({10}), 3: frozenset({30})})


def test_a_delivery_settles_catch_all_and_a_later_bounce_undoes_it() -> None:
    delivered = feedback_applied(catch_all(), Evidence(delivered_at=T))
    assert (delivered.status, delivered.confidence, delivered.checks.smtp_valid) == (Status.VALID, "medium", True)
    bounced = feedback_applied(catch_all(), Evidence(delivered_at=T, bounced_at=T + timedelta(hours=1)))
    assert (bounced.status, bounced.sub_status, bounced.score) == (Status.INVALID, SubStatus.MAILBOX_NOT_FOUND, 0)


def test_a_delivery_does_not_make_a_disposable_address_valid() -> None:
    disposable = Verdict(
        email="a@mailinator.com",
        is_valid=False,
        status=Status.RISKY,
        sub_status=SubStatus.DISPOSABLE,
        confidence="high",
        score=10,
        checks=CHECKS,
    )
    assert feedback_applied(disposable, Evidence(delivered_at=T)) == disposable


def test_a_delivery_and_a_bounce_at_the_same_moment_is_a_bounce() -> None:
    assert feedback_applied(catch_all(), Evidence(delivered_at=T, bounced_at=T)).status is Status.INVALID


def _seen_by(asker: int, rows: list[tuple[str, int, str, int]], prior: float = 0.7) -> float:
    counts = domain_counts(rows, asker=asker)
    return estimate(*counts.get("d.example", (0, 0)), prior).estimate


@pytest.mark.parametrize("honest", [0, 1, 3, 30])
@pytest.mark.parametrize("flood", [1, 20, 10_000])
def test_one_reporter_moves_anothers_estimate_by_at_most_its_share(honest: int, flood: int) -> None:
    rows = [("d.example", n, "hard_bounce", 1) for n in range(1, honest + 1)]
    before = _seen_by(0, rows)
    after = _seen_by(0, [*rows, ("d.example", 999, "delivered", flood)])
    assert 0 <= after - before <= REPORTER_WEIGHT / (PRIOR_STRENGTH + REPORTER_WEIGHT)


@pytest.mark.parametrize("domains", [1, 10, 10_000])
def test_one_reporter_on_many_domains_moves_the_global_rate_by_at_most_its_weight(domains: int) -> None:
    honest = [(f"h{n}.example", n, "delivered", 5) for n in range(1, 40)]
    flood = [(f"f{n}.example", 999, "hard_bounce", 20) for n in range(domains)]
    before = pooled_rate(global_counts(honest), 0.7)
    after = pooled_rate(global_counts([*honest, *flood]), 0.7)
    assert 0 <= before - after <= GLOBAL_WEIGHT / (PRIOR_STRENGTH + GLOBAL_WEIGHT)
    assert (
        REPORTER_WEIGHT / (PRIOR_STRENGTH + REPORTER_WEIGHT) + GLOBAL_WEIGHT / (PRIOR_STRENGTH + GLOBAL_WEIGHT) < 0.05
    )


def test_the_askers_own_outcomes_count_in_full_for_itself() -> None:
    rows = [("d.example", 7, "hard_bounce", 20)]
    assert domain_counts(rows, asker=7) == {"d.example": (0.0, 20.0)}
    assert domain_counts(rows, asker=8)["d.example"][1] == pytest.approx(REPORTER_WEIGHT)


def test_accounts_linked_by_members_are_one_reporter() -> None:
    members = {1: frozenset({10}), 2: frozenset({10, 20}), 3: frozenset({20}), 4: frozenset({40})}
    assert reporters_of(members) == {1: 1, 2: 1, 3: 1, 4: 4}
    rows = [("d.example", account, "delivered", 20) for account in (1, 2, 3)]
    assert domain_counts(rows, reporter_of=reporters_of(members)) == domain_counts(rows[:1])
