"""Making and changing API keys, for the portal's keys page and the keys API alike (docs/keys.md).

A key is secret (`ev_live_…`, `ev_test_…`: for servers) or publishable (`ev_pub_live_…`,
`ev_pub_test_…`: for web pages, verify only, bound to allowed origins, with a daily cap of
PUBLISHABLE_DAILY_CAP unless another is given). Any key may carry daily and monthly spend caps
(accounts/spend_caps.py). Refusals are DomainErrors naming the field at fault.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from accounts.key_limits import Actor, change_permitted, networks_normalised, new_key_permitted
from accounts.models import Account, ApiKey, KeyMode
from accounts.origins import origins_normalised
from lib.errors import DomainError
from lib.text import plain_text

PUBLISHABLE_DAILY_CAP = 1000
MAX_CAP = 1_000_000_000
_UNSET: Any = object()


@dataclass
class KeyChange:
    """What a request asks to change in a key; fields left at `_UNSET` stay as they are."""

    name: Any = _UNSET
    allowed_origins: Any = _UNSET
    daily_cap: Any = _UNSET
    monthly_cap: Any = _UNSET
    given: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.given = {name: value for name, value in vars(self).items() if value is not _UNSET and name != "given"}


def key_create(
    *,
    account: Account,
    created_by: Any,
    kind: str = ApiKey.Kind.SECRET,
    key_mode: str = KeyMode.LIVE,
    scope: str | None = None,
    name: str = "Default",
    allowed_origins: list[str] | None = None,
    caps: dict[str, int | None] | None = None,
    expires_at: Any = None,
    allowed_ips: str = "",
    actor: Actor | None = None,
) -> tuple[ApiKey, str]:
    """Validate and issue a key; the raw key is returned once. `caps`: daily_cap and monthly_cap as
    given (a publishable key without a daily_cap gets PUBLISHABLE_DAILY_CAP). `actor`: who asks,
    when a key may ask (accounts/key_limits.py: a limited key makes no key wider than itself)."""
    kind = _choice(kind, ApiKey.Kind, "kind")
    key_mode = _choice(key_mode, KeyMode, "mode")
    origins = origins_normalised(allowed_origins or [])
    caps = dict(caps or {})
    if kind == ApiKey.Kind.PUBLISHABLE:
        scope = _publishable_scope(scope)
        if not origins:
            raise DomainError("A publishable key needs at least one allowed origin.", "allowed_origins")
        caps.setdefault("daily_cap", PUBLISHABLE_DAILY_CAP)
    elif origins:
        raise DomainError("Only a publishable key has allowed origins.", "allowed_origins")
    limits = {name: _cap(caps.get(name), name) for name in ("daily_cap", "monthly_cap")}
    settings = {
        "key_mode": key_mode,
        "kind": kind,
        "scope": _choice(scope or ApiKey.Scope.FULL, ApiKey.Scope, "scope"),
        "expires_at": expires_at,
        "allowed_ips": networks_normalised(allowed_ips.splitlines()),
        **limits,
    }
    if actor is not None:
        new_key_permitted(actor, ApiKey(account=account, **settings))
    return ApiKey.issue(
        account=account,
        name=_name(name),
        created_by=created_by,
        allowed_origins="\n".join(origins),
        **settings,
    )


def key_change(*, key: ApiKey, change: KeyChange, actor: Actor) -> list[str]:
    """Apply `change` to an active key, as `actor` may (accounts/key_limits.py); returns the names of
    the fields that changed."""
    values = dict(change.given)
    if "name" in values:
        values["name"] = _name(values["name"])
    if "allowed_origins" in values:
        values["allowed_origins"] = _origins_for(key, values["allowed_origins"])
    for cap in ("daily_cap", "monthly_cap"):
        if cap in values:
            values[cap] = _cap(values[cap], cap)
    changed = [name for name, value in values.items() if getattr(key, name) != value]
    change_permitted(actor, key, {name: values[name] for name in changed})
    for name in changed:
        setattr(key, name, values[name])
    if changed:
        key.save(update_fields=changed)
    return changed


def key_describe(key: ApiKey) -> dict[str, Any]:
    """The key object of the keys API (docs/keys.md): never the key itself."""
    return {
        "id": key.pk,
        "kind": key.kind,
        "mode": key.key_mode,
        "scope": key.scope,
        "prefix": key.prefix,
        "name": key.name,
        "allowed_origins": key.origin_list(),
        "daily_cap": key.daily_cap,
        "monthly_cap": key.monthly_cap,
        "spent_today": key.spent_today,
        "spent_this_month": key.spent_this_month,
        "created_at": key.created_at,
        "last_used_at": key.last_used_at,
        "expires_at": key.expires_at,
    }


def created_summary(key: ApiKey) -> str:
    """For the audit log: the key made, its scope, and its kind when it is not a secret key."""
    kind = ", publishable" if key.is_publishable else ""
    return f"{key.prefix}… “{key.name}”, scope {key.scope}{kind}"


def change_summary(key: ApiKey, changed: list[str]) -> str:
    """For the audit log: the key and what each changed field is now."""
    parts = [f"{name} {_shown(getattr(key, name))}" for name in changed]
    return f"{key.prefix}… “{key.name}”: " + "; ".join(parts)


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    return ", ".join(str(value).splitlines()) or "none"


def _origins_for(key: ApiKey, origins: Any) -> str:
    if not isinstance(origins, list) or not all(isinstance(origin, str) for origin in origins):
        raise DomainError("allowed_origins: a list of origins such as https://shop.example.com.", "allowed_origins")
    normalised = origins_normalised(origins)
    if key.is_publishable and not normalised:
        raise DomainError("A publishable key needs at least one allowed origin.", "allowed_origins")
    if not key.is_publishable and normalised:
        raise DomainError("Only a publishable key has allowed origins.", "allowed_origins")
    return "\n".join(normalised)


def _publishable_scope(scope: str | None) -> str:
    if scope not in (None, "", ApiKey.Scope.VERIFY):
        raise DomainError("A publishable key only verifies: its scope is verify.", "scope")
    return str(ApiKey.Scope.VERIFY)


def _choice(value: Any, choices: Any, param: str) -> str:
    if value not in choices.values:
        raise DomainError(f"{param}: {value!r} is not one of {', '.join(choices.values)}.", param)
    return str(value)


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > 100:
        raise DomainError("name: 1 to 100 characters.", "name")
    return plain_text(value, "name").strip()  # checked before strip(), which drops \x1c-\x1f too


def _cap(value: Any, param: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CAP:
        raise DomainError(f"{param}: a whole number of credits from 0 to {MAX_CAP:,}, or null.", param)
    return value
