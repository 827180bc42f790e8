"""A key never gives itself, or a key it makes, more than it has (docs/keys.md, "Keys never widen
themselves"): the one rule `accounts.keys.key_create` and `key_change` ask, whichever door (the
portal's keys pages, the keys API) the request came by.

A leaked key that carries a limit (a spend cap, an expiry, an IP allow-list, a scope narrower than
full; a test or publishable key) must stay as limited as it is: it may not lift its own limits, and
whatever key it makes or changes is held within them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Any

from django.utils import timezone

from accounts.models import ApiKey
from accounts.permissions import SCOPES, Action, role_may
from lib.errors import DomainError
from lib.rfc3339 import rfc3339_parsed

MAX_NETWORKS = 50
CAPS = ("daily_cap", "monthly_cap")
# What a limited key may not change of itself; in the portal, of another member's key, who may not
# manage keys over the API (an owner's or admin's right) may not change either.
LIMITS = (*CAPS, "expires_at", "allowed_ips", "allowed_origins")


class KeyNotPermitted(DomainError):
    code = "key_not_permitted"


@dataclass(frozen=True)
class Actor:
    """Who acts on the account's keys: a member in the portal (`key` None), or a key over the API
    (its creator's user and role, and the key itself)."""

    user: Any
    role: str
    key: ApiKey | None = None


def is_limited(key: ApiKey) -> bool:
    """Whether the key carries any limit a key of its own could escape."""
    return bool(
        any(getattr(key, cap) is not None for cap in CAPS)
        or key.expires_at is not None
        or key.allowed_ips.strip()
        or key.scope != ApiKey.Scope.FULL
        or not key.is_live
        or key.is_publishable
    )


def new_key_permitted(actor: Actor, key: ApiKey) -> None:
    """Raise KeyNotPermitted when `key`, about to be made by `actor`, would have more than the acting key."""
    mine = actor.key
    if mine is None or not is_limited(mine):
        return
    if mine.is_publishable or (not mine.is_live and key.is_live):
        raise KeyNotPermitted("A test or publishable key may not make a live key.", "mode")
    if not SCOPES[ApiKey.Scope(key.scope)] <= SCOPES[ApiKey.Scope(mine.scope)]:
        raise KeyNotPermitted(
            f"A key with the {mine.scope} scope may not make one with the {key.scope} scope.", "scope"
        )
    _within_caps(mine, {cap: getattr(key, cap) for cap in CAPS})
    if mine.expires_at is not None and (key.expires_at is None or key.expires_at > mine.expires_at):
        raise KeyNotPermitted(
            f"expires_at: at the latest {mine.expires_at:%Y-%m-%dT%H:%M:%SZ}, as this key.", "expires_at"
        )
    if not _networks_within(key.allowed_networks(), mine.allowed_networks()):
        raise KeyNotPermitted("allowed_ips: only addresses this key may be used from.", "allowed_ips")


def change_permitted(actor: Actor, key: ApiKey, values: dict[str, Any]) -> None:
    """Raise KeyNotPermitted when `actor` may not give `key` these new `values` (the fields that change)."""
    touched = [name for name in LIMITS if name in values]
    if not touched:
        return
    mine = actor.key
    if mine is not None and mine.pk == key.pk and is_limited(mine):
        raise KeyNotPermitted(
            f"A key with a cap, an expiry, an IP list or a narrow scope may not change its own {touched[0]}.",
            touched[0],
        )
    if mine is not None and is_limited(mine):
        _no_looser(key, values)
        _within_caps(mine, {cap: values.get(cap, getattr(key, cap)) for cap in CAPS})
    if key.created_by_id != getattr(actor.user, "pk", None) and not role_may(actor.role, Action.KEYS_ADMIN):
        raise KeyNotPermitted(f"Only an owner or admin may change another member's key's {touched[0]}.", touched[0])


def networks_normalised(lines: list[str]) -> str:
    """An allow-list as stored: each address or network (CIDR) in its one spelling, one a line."""
    lines = [line.strip() for line in lines if line.strip()]
    if len(lines) > MAX_NETWORKS:
        raise DomainError(f"At most {MAX_NETWORKS} addresses or networks.", "allowed_ips")
    networks = []
    for line in lines:
        try:
            networks.append(str(ip_network(line, strict=False)))
        except ValueError:
            raise DomainError(
                f"“{line}” is not an IP address or a network such as 203.0.113.0/24.", "allowed_ips"
            ) from None
    return "\n".join(networks)


def _no_looser(key: ApiKey, values: dict[str, Any]) -> None:
    """A limited key may tighten another key, never loosen it: no cap lifted or raised, no origin added."""
    for cap in CAPS:
        old, new = getattr(key, cap), values.get(cap, getattr(key, cap))
        if old is not None and (new is None or new > old):
            raise KeyNotPermitted(f"{cap}: a key with limits may lower another key's cap, never lift it.", cap)
    if not set(values.get("allowed_origins", "").split()) <= set(key.origin_list()):
        raise KeyNotPermitted("A key with limits may not add origins to another key.", "allowed_origins")


def _within_caps(mine: ApiKey, caps: dict[str, int | None]) -> None:
    """No cap is looser than any cap: under a capped key, a key must have that cap, no higher."""
    for cap in CAPS:
        limit, wanted = getattr(mine, cap), caps[cap]
        if limit is not None and (wanted is None or wanted > limit):
            raise KeyNotPermitted(f"{cap}: at most {limit}, this key's own.", cap)


def _networks_within(wanted: list[IPv4Network | IPv6Network], allowed: list[IPv4Network | IPv6Network]) -> bool:
    if not allowed:
        return True
    return bool(wanted) and all(
        any(net.version == outer.version and net.subnet_of(outer) for outer in allowed)  # type: ignore[arg-type]
        for net in wanted
    )


def expiry_parsed(value: object) -> datetime | None:
    """The keys API's `expires_at`: RFC 3339 or null, and still to come (a key born expired is a mistake)."""
    if value is None:
        return None
    moment = rfc3339_parsed(value)
    if moment is None:
        raise DomainError("expires_at: an RFC 3339 time such as 2027-01-31T00:00:00Z, or null.", "expires_at")
    if moment <= timezone.now():
        raise DomainError("expires_at: a time still to come, or null.", "expires_at")
    return moment
