"""API keys: live or test (KeyMode), their scope, expiry and allow-list, and the one-statement lookup
every API request makes (ApiKeyQuerySet.find)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone

from accounts.models.account import Account, Membership, Plan
from lib import sql
from lib.tokens import random_base62, sha256_hex

API_KEY_PREFIX = "ev_live_"
TEST_KEY_PREFIX = "ev_test_"
# Publishable keys (docs/widget.md): safe in a web page's source, verify only, from allowed origins.
PUBLISHABLE_PREFIXES = {"live": "ev_pub_live_", "test": "ev_pub_test_"}
# How much of a key is kept for display: 12 characters, 16 for a publishable key (its prefix is 12).
DISPLAY_CHARS = {"secret": 12, "publishable": 16}
# last_used_at is for people, not for accounting: one write a minute per key is plenty.
LAST_USED_RESOLUTION = timedelta(seconds=60)


class KeyMode(models.TextChoices):
    """Live keys work for real; test keys answer from the sandbox (README, "Test keys"). A key and
    each job carry their key mode, and a key only ever sees what was made in its own. (Fast/deep
    is another word: verification.engine.modes.ValidationMode.)"""

    LIVE = "live"
    TEST = "test"


def loaded[M: models.Model](model: type[M], db: str, **values: Any) -> M:
    """An instance of `model` as the ORM would load it with `.only(*values)`, from values named by
    field: Django's from_db takes them positionally in the model's field order, which is read here
    from the model itself, so a field added or moved on the model never shifts a value into the
    wrong attribute (any field not named loads on first access)."""
    names = [field.attname for field in model._meta.concrete_fields if field.attname in values]
    unknown = set(values) - set(names)
    assert not unknown, f"{model.__name__} has no field {unknown}"
    return model.from_db(db, names, [values[name] for name in names])


# What `find` loads beyond the basics: the kind, origins and spend caps every verify consults.
_CAP_FIELDS = [
    "kind", "allowed_origins", "daily_cap", "monthly_cap", "spend_day", "spent_day", "spend_month", "spent_month"
]  # fmt: skip
_CAP_COLUMNS = ", ".join(f"k.{field}" for field in _CAP_FIELDS)


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def active(self) -> ApiKeyQuerySet:
        return self.filter(revoked_at__isnull=True)

    def find(self, raw_key: str) -> ApiKey | None:
        """The active key with this value, its account and plan loaded: one statement.

        A key is active while it is not revoked, its account's owner may log in (staff who
        deactivate the account stop its keys at once), and the member who created it is still a
        member of the account and may log in (a removed member's keys stop at once). The creator's
        role comes along: a key never does more than its creator's role allows (accounts/permissions.py).
        On every API request, so hand-written (see lib/sql.py). The instances carry only the
        columns the API reads; any other field loads on first access, as with `.only()`.
        """
        row = sql.fetch_one(
            f"SELECT k.id, k.last_used_at, k.scope, k.expires_at, k.allowed_ips, m.role, k.key_mode, {_CAP_COLUMNS},"
            f" a.id, a.credit_balance, p.id, p.code, p.allows_bulk, p.requests_per_second FROM {sql.table(ApiKey)} k"
            f" JOIN {sql.table(Account)} a ON a.id = k.account_id JOIN {sql.table(Plan)} p ON p.id = a.plan_id"
            f" JOIN {sql.table(Membership)} m ON m.account_id = k.account_id AND m.user_id = k.created_by_id"
            f" WHERE k.key_hash = %s AND k.revoked_at IS NULL"
            # The owner and the creator as subqueries, not joins: PostgreSQL plans every statement
            # afresh here (no server-side prepared statements), and a six-table join took it about
            # 0.6 ms to plan, five times its execution, on every API request; four tables, 0.2 ms.
            f" AND (SELECT u.is_active FROM {sql.table(get_user_model())} u WHERE u.id = a.owner_id)"
            f" AND (SELECT c.is_active FROM {sql.table(get_user_model())} c WHERE c.id = k.created_by_id)",
            [sha256_hex(raw_key)],
        )
        if row is None:
            return None
        key_id, last_used_at, scope, expires_at, allowed_ips, role, key_mode = row[:7]
        spending = dict(zip(_CAP_FIELDS, row[7:15], strict=True))
        account_id, balance, plan_id, code, allows_bulk, rate = row[15:]
        db = self.db
        plan = loaded(Plan, db, id=plan_id, code=code, allows_bulk=allows_bulk, requests_per_second=rate)
        account = loaded(Account, db, id=account_id, plan_id=plan_id, credit_balance=balance)
        key = loaded(
            ApiKey,
            db,
            id=key_id,
            account_id=account_id,
            scope=scope,
            expires_at=expires_at and sql.aware(expires_at),
            allowed_ips=allowed_ips,
            key_mode=key_mode,
            last_used_at=last_used_at and sql.aware(last_used_at),
            revoked_at=None,
            **spending,
        )
        account.plan, key.account, key.creator_role = plan, account, role
        return key


class ApiKey(models.Model):
    class Scope(models.TextChoices):
        # What each scope may do, in the one set of words the portal, the docs and the OpenAPI schema
        # use; tests/accounts/test_scope_descriptions.py holds them to accounts/permissions.py's SCOPES.
        FULL = (
            "full",
            "Full: everything the API does (verify, bulk lists, jobs, deleting jobs, usage, keys, privacy erasures, "
            "account exports)",
        )
        VERIFY = "verify", "Verify: single and batch verification only; no bulk lists"
        READ = "read", "Read: GET requests only (usage, jobs and their results)"

    class Kind(models.TextChoices):
        SECRET = "secret", "Secret: for servers"
        PUBLISHABLE = "publishable", "Publishable: for web pages (single verify from allowed origins)"

    account = models.ForeignKey(Account, models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, default="Default")
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.FULL)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused from then on (none: never).")
    allowed_ips = models.TextField(
        blank=True, help_text="Addresses or networks (CIDR) it may be used from, one a line; empty: anywhere."
    )
    # The key belongs to the account; who made it decides how long it works (a removed member's stop).
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, models.SET_NULL, null=True, blank=True, related_name="+")
    prefix = models.CharField(
        max_length=16, help_text="First characters (12; 16 publishable), for recognising the key."
    )
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    key_mode = models.CharField(
        max_length=4, choices=KeyMode.choices, default=KeyMode.LIVE, db_default=KeyMode.LIVE, editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    kind = models.CharField(max_length=11, choices=Kind.choices, default=Kind.SECRET, db_default=Kind.SECRET)
    allowed_origins = models.TextField(
        blank=True, help_text="Publishable keys: the web origins that may use it, one a line (accounts/origins.py)."
    )
    # Spend caps (accounts/spend_caps.py): credits a key may spend per UTC day and calendar month.
    daily_cap = models.PositiveIntegerField(null=True, blank=True, help_text="Credits a UTC day; empty: no cap.")
    monthly_cap = models.PositiveIntegerField(null=True, blank=True, help_text="Credits a month; empty: no cap.")
    # What it spent in its latest day and month: the day as days since 1970, the month as year*12+month-1.
    spend_day = models.IntegerField(default=0, editable=False)
    spent_day = models.PositiveIntegerField(default=0, editable=False)
    spend_month = models.IntegerField(default=0, editable=False)
    spent_month = models.PositiveIntegerField(default=0, editable=False)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    @classmethod
    def scopes_described(cls) -> str:
        """Every scope and what it may do, for the OpenAPI schema."""
        return "; ".join(f"`{scope.value}`: {scope.label}" for scope in cls.Scope)

    # What ApiKeyQuerySet.find loads with the key: the role of the member who created it.
    creator_role: str | None = None

    @classmethod
    def issue(
        cls,
        *,
        account: Account,
        name: str = "Default",
        created_by: Any = None,
        key_mode: str = KeyMode.LIVE,
        kind: str = Kind.SECRET,
        **limits: Any,
    ) -> tuple[ApiKey, str]:
        """Create a key (by its account's owner unless `created_by` says who; `limits`: scope,
        expires_at, allowed_ips, allowed_origins, daily_cap, monthly_cap); the raw key is returned
        here and never stored or shown again."""
        raw = _key_prefix(kind, key_mode) + random_base62(32)
        creator_id = created_by.pk if created_by is not None else account.owner_id
        key = cls.objects.create(
            account=account,
            name=name,
            kind=kind,
            prefix=raw[: DISPLAY_CHARS[kind]],
            key_hash=sha256_hex(raw),
            created_by_id=creator_id,
            key_mode=key_mode,
            **limits,
        )
        return key, raw

    def allowed_networks(self) -> list[IPv4Network | IPv6Network]:
        return [ip_network(line.strip(), strict=False) for line in self.allowed_ips.splitlines() if line.strip()]

    def is_expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    def allows_address(self, address: str) -> bool:
        networks = self.allowed_networks()
        if not networks:
            return True
        try:
            ip = ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in networks)

    @property
    def is_live(self) -> bool:
        return self.key_mode == KeyMode.LIVE

    @property
    def is_publishable(self) -> bool:
        return self.kind == ApiKey.Kind.PUBLISHABLE

    @property
    def spent_today(self) -> int:
        """Credits counted against the daily cap in the current UTC day (accounts/spend_caps.py)."""
        return self.spent_day if self.spend_day == spend_period(timezone.now())[0] else 0

    @property
    def spent_this_month(self) -> int:
        return self.spent_month if self.spend_month == spend_period(timezone.now())[1] else 0

    def origin_list(self) -> list[str]:
        return [line.strip() for line in self.allowed_origins.splitlines() if line.strip()]

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def revoke(self) -> None:
        ApiKey.objects.filter(pk=self.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.refresh_from_db(fields=["revoked_at"])

    def touch(self) -> None:
        now = timezone.now()
        if self.last_used_at is not None and now - self.last_used_at < LAST_USED_RESOLUTION:
            return  # fresh enough: spare the hot path a write
        stale = models.Q(last_used_at__isnull=True) | models.Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
        ApiKey.objects.filter(stale, pk=self.pk).update(last_used_at=now)


def spend_period(now: datetime) -> tuple[int, int]:
    """The UTC day and calendar month of `now` as a key's row stores them: days since 1970, and
    year * 12 + month - 1."""
    today = now.astimezone(UTC).date()
    return (today - date(1970, 1, 1)).days, today.year * 12 + today.month - 1


def _key_prefix(kind: str, key_mode: str) -> str:
    if kind == ApiKey.Kind.PUBLISHABLE:
        return PUBLISHABLE_PREFIXES[key_mode]
    return TEST_KEY_PREFIX if key_mode == KeyMode.TEST else API_KEY_PREFIX
