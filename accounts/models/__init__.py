"""The account's models, one concept a module: `account` (the account, its plan, members, roles and
invitations), `keys` (API keys, live or test) and `security` (log-in windows, the audit log).

Everything is imported from here (`from accounts.models import ApiKey`), as Django and the
migrations expect of an app's `models`.
"""

from accounts.models.account import (
    INVITATION_VALIDITY,
    SECRET_ROTATION_OVERLAP,
    SIGNING_SECRET_PREFIX,
    Account,
    AccountQuerySet,
    Invitation,
    Membership,
    Plan,
    Role,
    _invitation_expiry,
    account_for,
    membership_for,
    memberships_of,
    new_signing_secret,
)
from accounts.models.keys import API_KEY_PREFIX, LAST_USED_RESOLUTION, TEST_KEY_PREFIX, ApiKey, ApiKeyQuerySet, KeyMode
from accounts.models.security import AUDIT_RETENTION, AuditEvent, LoginWindow, LoginWindowQuerySet, _audit_expiry

__all__ = [
    "API_KEY_PREFIX",
    "AUDIT_RETENTION",
    "INVITATION_VALIDITY",
    "LAST_USED_RESOLUTION",
    "SECRET_ROTATION_OVERLAP",
    "SIGNING_SECRET_PREFIX",
    "TEST_KEY_PREFIX",
    "Account",
    "AccountQuerySet",
    "ApiKey",
    "ApiKeyQuerySet",
    "AuditEvent",
    "Invitation",
    "KeyMode",
    "LoginWindow",
    "LoginWindowQuerySet",
    "Membership",
    "Plan",
    "Role",
    "_audit_expiry",  # the migrations name these defaults by their path here
    "_invitation_expiry",
    "account_for",
    "membership_for",
    "memberships_of",
    "new_signing_secret",
]
