"""Scores per mail provider family, where the plain tables (verdict.py for fast, deep.py for deep) are off.

`score / 100` is meant as the chance that a message to the address is delivered. The plain tables give
one score per verdict kind; the calibration bench (bench/calibration.py, bench/README.md "Calibration")
showed kinds whose delivered share differs by family by more than three points, and only those cells
move here, to the share on the bench's synthetic world (rounded). The world's rates are assumptions, not
measured outcomes: when the guarantee's bounce rates by family (docs/guarantee.md) say otherwise, this
table is what changes. A catch-all score that reported outcomes set (deliverability.py) wins over it.
"""

from __future__ import annotations

from verification.engine.providers import provider_family

VALID = "valid"  # the key of a verdict without a sub_status

# (family, mode, sub_status or "valid") -> score
FAMILY_SCORES: dict[tuple[str, str, str], int] = {
    # A fast `valid` is the family's share of a list's mailboxes that still exist.
    ("google", "fast", VALID): 91,
    ("microsoft", "fast", VALID): 89,
    ("yahoo", "fast", VALID): 81,
    # Yahoo answers 250 for some mailboxes that do not exist, and bounces afterwards.
    ("yahoo", "deep", VALID): 89,
    # A role address mostly delivers; at a company it may be a group refusing outside senders
    # (Microsoft 365's default for distribution groups), which bounces after the RCPT was accepted.
    ("google", "fast", "role_based"): 82,
    ("google", "deep", "role_based"): 87,
    ("microsoft", "fast", "role_based"): 61,
    ("microsoft", "deep", "role_based"): 71,
    ("yahoo", "fast", "role_based"): 80,
    ("yahoo", "deep", "role_based"): 86,
    ("other", "fast", "role_based"): 63,
    ("other", "deep", "role_based"): 69,
    # Accepting any recipient: Workspace catch-all routing delivers; a Microsoft 365 tenant without
    # directory-based edge blocking bounces unknown mailboxes later; elsewhere a mix of both.
    ("google", "deep", "catch_all"): 95,
    ("microsoft", "deep", "catch_all"): 85,
    ("other", "deep", "catch_all"): 90,
}


def family_score(score: int, *, provider: str | None, mode: str, sub_status: str | None) -> int:
    """The family's own score for this kind of verdict, or the plain table's `score`."""
    return FAMILY_SCORES.get((provider_family(provider), mode, sub_status or VALID), score)
