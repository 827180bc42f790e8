"""The engine's feedback rules, as plain functions (verification/engine/feedback.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from verification.engine.feedback import Evidence, estimate, feedback_applied, independent_pair, pooled_rate
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
