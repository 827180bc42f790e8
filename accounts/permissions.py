"""Who may do what: the one permission table (roles × actions) and the scopes API keys narrow it to.

Every portal view and API endpoint names the action it performs (`account_required(Action.X)` on a
portal view, `permission = {method: Action.X}` on an API view); the portal's decorator and the
API's permission class (apikit/permissions.py) are the two doors, and both ask `role_may` here.
tests/accounts/test_permissions.py walks the URL configuration: a view without a rule fails the suite.
"""

from __future__ import annotations

from datetime import datetime

from django.db import models

from accounts.models import ApiKey, Role
from accounts.origins import origin_refusal


class Action(models.TextChoices):
    USAGE = "usage", "See the dashboard and usage"
    JOBS_READ = "jobs.read", "See jobs and download results"
    VERIFY = "verify", "Verify addresses"
    BULK = "bulk", "Upload lists (bulk jobs and their previews)"
    JOBS_DELETE = "jobs.delete", "Delete jobs"
    KEYS = "keys", "Create and revoke API keys"
    KEYS_ADMIN = "keys.admin", "Manage keys over the API; create publishable keys"
    SECRET = "secret", "Read and rotate the signing secret"
    MEMBERS = "members", "Invite and remove members, change roles"
    AUDIT = "audit", "Read the audit log"
    BILLING = "billing", "Plans and payments"
    TWO_FACTOR_POLICY = "2fa.policy", "Require two-factor sign-in of every member"
    ERASE = "privacy.erase", "Privacy: erase addresses, set how long job files are kept"
    EXPORT = "privacy.export", "Privacy: export everything the account holds"


_DEVELOPER = {
    Action.USAGE,
    Action.JOBS_READ,
    Action.VERIFY,
    Action.BULK,
    Action.JOBS_DELETE,
    Action.KEYS,
    Action.SECRET,
}

# The table (docs/portal.md, "Members and roles").
PERMISSIONS: dict[Role, frozenset[Action]] = {
    Role.OWNER: frozenset(Action),
    Role.ADMIN: frozenset(Action) - {Action.BILLING, Action.TWO_FACTOR_POLICY, Action.EXPORT},
    Role.DEVELOPER: frozenset(_DEVELOPER),
    Role.VIEWER: frozenset({Action.USAGE, Action.JOBS_READ}),
}

# What a key of each scope may do, within its creator's role (docs/api.md, "Keys and scopes").
SCOPES: dict[ApiKey.Scope, frozenset[Action]] = {
    ApiKey.Scope.FULL: frozenset(
        {
            Action.USAGE,
            Action.VERIFY,
            Action.BULK,
            Action.JOBS_READ,
            Action.JOBS_DELETE,
            Action.KEYS_ADMIN,
            Action.ERASE,
            Action.EXPORT,
        }
    ),
    ApiKey.Scope.VERIFY: frozenset({Action.VERIFY}),  # single (and batch) verification only: no bulk jobs
    ApiKey.Scope.READ: frozenset({Action.USAGE, Action.JOBS_READ}),
}


def role_may(role: str, action: Action) -> bool:
    return action in PERMISSIONS[Role(role)]


def key_refusal(key: ApiKey, action: Action, *, address: str, now: datetime) -> str | None:
    """Why `key` may not do `action` from `address` at `now`, or None when it may: it has not
    expired, the address is in its allow-list (when it has one), its scope covers the action and
    its creator's role allows it."""
    if key.is_expired(now):
        return "This API key has expired."
    if not key.allows_address(address):
        return f"This API key may not be used from {address}."
    if action not in SCOPES[ApiKey.Scope(key.scope)]:
        return f"A key with the {key.scope} scope may not do this ({action.label.lower()})."
    if key.creator_role is None or not role_may(key.creator_role, action):
        return f"The member who created this key ({key.creator_role}) may not do this."
    return None


def publishable_refusal(key: ApiKey, *, origin: str | None, single_verify: bool) -> str | None:
    """Why a publishable key may not be used here, or None: only for one address at a time
    (POST /v1/verify), only from a page whose `Origin` is one of its allowed origins (accounts/origins.py)."""
    if not single_verify:
        return "A publishable key may only verify one address (POST /v1/verify)."
    return origin_refusal(key, origin)


def may(role: str) -> dict[str, bool]:
    """For templates: `can.keys`, `can.jobs_read`… (dots become underscores)."""
    return {action.value.replace(".", "_"): role_may(role, action) for action in Action}


# Routes that act for no account, so the table above has no say in them: each with who may open
# it. Together with the actions the account's views name, every route has a rule
# (tests/accounts/test_permissions.py fails on a route in neither).
OUTSIDE_ACCOUNTS: dict[str, str] = {
    "stripe-webhook": "Stripe's events: signed by Stripe (README, Billing), no session or key",
    "feedback-webhook": "whoever holds the account's secret webhook URL (docs/feedback.md; rotatable in the portal)",
    **dict.fromkeys(
        [
            "landing",
            "signup",
            "login",
            "logout",
            "favicon",
            "healthz",
            "readyz",
            "openapi-schema",
            "api-docs",
            "api-docs-bundle",
        ],
        "anyone",
    ),
    **dict.fromkeys(
        ["password_reset", "password_reset_done", "password_reset_confirm", "password_reset_complete"], "anyone"
    ),
    "api-not-found": "anyone (answers 404 not_found)",
    **dict.fromkeys(["widget", "widget-versioned"], "anyone: the form widget's script, for any site"),
    "job-result-download": "whoever holds the signed, expiring link",
    "account-export-link": "whoever holds the signed link mailed to the owner (its export downloads for 24 h)",
    "signup-confirm": "whoever holds the signed link mailed at sign-up (7 days; grants the credits once)",
    "invitation": "whoever holds the signed link (7 days, once); joining needs the invited address's login",
    "metrics": "whoever holds METRICS_TOKEN",
    "admin-dashboard": "staff",
    "login-code": "who gave the right password, for the second step",
    **dict.fromkeys(
        ["password_change", "password_change_done", "account-switch", "security", "reask"], "any signed-in user"
    ),
}
