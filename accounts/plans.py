"""The plans (README, "Plans, keys, credits"): created by billing migration 0002, before Plan moved here.

Staff change an account's plan in the admin.
"""

from __future__ import annotations

from typing import Any

# code, name, bulk allowed, API requests per second per key
PLANS: list[tuple[str, str, bool, int]] = [
    ("free", "Free", False, 5),
    ("starter", "Starter", True, 20),
    ("pro", "Pro", True, 50),
    ("enterprise", "Enterprise", True, 200),
]


def plan_defaults(code: str) -> dict[str, Any]:
    for order, (plan_code, name, bulk, rate) in enumerate(PLANS):
        if plan_code == code:
            return {"name": name, "allows_bulk": bulk, "requests_per_second": rate, "sort_order": order}
    raise KeyError(code)


# The most days a job's files may be kept on each plan, when the upload or the account asks for
# longer than JOB_RETENTION_DAYS (docs/bulk.md, "Retention"). Free has no bulk.
RETENTION_MAX_DAYS = {"free": 30, "starter": 30, "pro": 90, "enterprise": 365}


# What a portal sign-up opens with (docs/api.md, "Plans, keys, credits").
SIGNUP_PLAN = "free"
SIGNUP_CREDITS = 100
