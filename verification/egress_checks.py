"""The egresses' self-checks (docs/deep.md, "Running deep mode on the internet"; the rules are
verification/engine/egress_dns.py's): each egress's identity (forward-confirmed reverse DNS) every
hour, and its address against each zone of VERIFIER_SMTP_DNSBL_ZONES every
VERIFIER_SMTP_DNSBL_INTERVAL_SECONDS.

A one-minute schedule (verification/queue.py) runs what is due. Each worker process checks every
egress's identity at its first run, so a (re)started qcluster checks them within a minute whatever
an earlier process found; a finding is kept for the EHLO name and address it was made for, so a
changed egress is checked afresh too. Findings live in the shared cache (Redis, else the database
cache), as egress health does, so every process shows and obeys the same ones: a listed egress
rests until a check finds it delisted (verification/egresses.py); a misconfigured one is shown, and
goes on carrying sessions.
A lookup DNS did not answer changes nothing: the previous finding stands, and is asked again at the
next minute.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache

from verification.engine.dns import parse_nameserver, system_nameservers
from verification.engine.egress import Egress
from verification.engine.egress_dns import (
    Identity,
    IdentityState,
    Listing,
    Lookup,
    blocklist_checked,
    dns_lookup,
    identity_checked,
)

logger = logging.getLogger(__name__)

IDENTITY_SECONDS = 3600
# Findings no check has renewed for this long are forgotten: with the checks stopped (no qcluster),
# a listing does not keep an egress resting for ever, and the dashboard says "not checked".
KEEP_SECONDS = 3 * 3600
# The egresses whose identity this process has checked since it started (forget() empties it).
_CHECKED_SINCE_START: set[str] = set()
# A label this long in a zone is its key (a Spamhaus Data Query Service zone carries one): shown as <key>.
_KEY_LABEL = re.compile(r"^[A-Za-z0-9]{20,}$")


@dataclass(frozen=True, slots=True)
class IdentityFinding:
    state: IdentityState
    reason: str
    checked: float  # unix time


@dataclass(frozen=True, slots=True)
class ZoneFinding:
    zone: str
    listing: Listing
    codes: tuple[str, ...]
    since: float  # when this listing (or its absence) was first found
    checked: float

    @property
    def shown(self) -> str:
        """The zone without its key, for the dashboard, /readyz and the metric's label."""
        return zone_shown(self.zone)

    @property
    def found_at(self) -> datetime:
        return datetime.fromtimestamp(self.since, UTC)

    def describe(self) -> str:
        if self.listing is Listing.LISTED:
            return f"listed on {self.shown} ({', '.join(self.codes)}) since {self.found_at:%Y-%m-%d %H:%M} UTC"
        return f"{self.shown} refused the query ({', '.join(self.codes)}): an error, not a listing"


def zone_shown(zone: str) -> str:
    return ".".join("<key>" if _KEY_LABEL.match(label) else label for label in zone.split("."))


def egress_key(kind: str, name: str) -> str:
    """The shared cache's key for one of an egress's records (its health's, its findings')."""
    return f"verifier:{kind}:{hashlib.sha256(name.encode()).hexdigest()[:16]}"


def checks_run(egresses: Iterable[Egress], *, now: float | None = None) -> None:
    """Every check that is due, for each egress (the one-minute schedule)."""
    now = time.time() if now is None else now
    lookup = _lookup()
    for egress in egresses:
        _identity_if_due(egress, lookup, now)
        if egress.address:
            _blocklists_if_due(egress, lookup, now)


def identity_key(name: str) -> str:
    return egress_key("egress-identity", name)


def blocklists_key(name: str) -> str:
    return egress_key("egress-dnsbl", name)


def identity_findings(egresses: Iterable[Egress]) -> dict[str, IdentityFinding]:
    """Each egress's identity finding for its present EHLO name and address (absent: not checked)."""
    egresses = list(egresses)
    stored = cache.get_many([identity_key(egress.name) for egress in egresses])
    found = ((egress.name, identity_read(stored.get(identity_key(egress.name)), egress)) for egress in egresses)
    return {name: finding for name, finding in found if finding is not None}


def zone_findings(egresses: Iterable[Egress]) -> dict[str, list[ZoneFinding]]:
    """Each egress's findings for the zones configured now, about its present address."""
    egresses = [egress for egress in egresses if egress.address]
    stored = cache.get_many([blocklists_key(egress.name) for egress in egresses])
    return {egress.name: zones_read(stored.get(blocklists_key(egress.name)), egress) for egress in egresses}


def identity_read(kept: dict[str, Any] | None, egress: Egress) -> IdentityFinding | None:
    """What identity_key held, if it was found for the egress's present EHLO name and address."""
    if not kept or kept["for"] != [_helo(egress), egress.address]:
        return None
    return IdentityFinding(IdentityState(kept["state"]), kept["reason"], kept["checked"])


def zones_read(kept: dict[str, Any] | None, egress: Egress) -> list[ZoneFinding]:
    """What blocklists_key held about the egress's present address, for the zones configured now."""
    if not kept or not egress.address or kept["address"] != egress.address:
        return []
    zones = kept["zones"]
    return [_zone_finding(zone, zones[zone]) for zone in settings.VERIFIER_SMTP_DNSBL_ZONES if zone in zones]


def _zone_finding(zone: str, kept: dict[str, Any]) -> ZoneFinding:
    return ZoneFinding(zone, Listing(kept["listing"]), tuple(kept["codes"]), kept["since"], kept["checked"])


def _helo(egress: Egress) -> str:
    return egress.helo or settings.VERIFIER_SMTP_HELO


def _lookup() -> Lookup:
    """The service's own resolver (VERIFIER_DNS_NAMESERVERS, else the machine's nameservers)."""
    specs = settings.VERIFIER_DNS_NAMESERVERS
    servers = tuple(parse_nameserver(spec) for spec in specs) if specs else system_nameservers()
    return dns_lookup(servers, timeout=settings.VERIFIER_DNS_TIMEOUT, lifetime=settings.VERIFIER_DNS_LIFETIME)


def forget() -> None:
    """Forget which egresses this process has checked, as a fresh start does (tests)."""
    _CHECKED_SINCE_START.clear()


def _identity_if_due(egress: Egress, lookup: Lookup, now: float) -> None:
    known = identity_findings([egress]).get(egress.name)
    fresh = known is not None and now - known.checked < IDENTITY_SECONDS
    if fresh and egress.name in _CHECKED_SINCE_START:
        return
    identity = identity_checked(_helo(egress), egress.address, lookup) if egress.address else _unknown_address(egress)
    if identity is None:
        logger.warning("egress %s: DNS did not answer its identity check; asked again in a minute", egress.name)
        return
    _CHECKED_SINCE_START.add(egress.name)
    if identity.state is IdentityState.MISCONFIGURED:
        logger.warning("egress %s is misconfigured: %s", egress.name, identity.reason)
    kept = {"for": [_helo(egress), egress.address], "state": identity.state.value, "reason": identity.reason}
    cache.set(identity_key(egress.name), {**kept, "checked": now}, timeout=KEEP_SECONDS)


def _unknown_address(egress: Egress) -> Identity:
    """A SOCKS5 egress without |address=, or the machine's own address (no VERIFIER_SMTP_EGRESS)."""
    if egress.proxy:
        how = "give it with |address="
    else:
        how = "list this machine's public address in VERIFIER_SMTP_EGRESS (bind:<address>, or a proxy with |address=)"
    return Identity(IdentityState.UNCHECKED, f"the address mail servers see is not known here: {how}")


def _blocklists_if_due(egress: Egress, lookup: Lookup, now: float) -> None:
    key = blocklists_key(egress.name)
    kept = cache.get(key)
    zones: dict[str, dict[str, Any]] = kept["zones"] if kept and kept["address"] == egress.address else {}
    interval = settings.VERIFIER_SMTP_DNSBL_INTERVAL_SECONDS
    for zone in settings.VERIFIER_SMTP_DNSBL_ZONES:
        before = zones.get(zone)
        if before is not None and now - before["checked"] < interval:
            continue
        answer = blocklist_checked(egress.address, zone, lookup)
        if answer.listing is Listing.UNKNOWN:
            logger.warning("egress %s: %s did not answer; its last finding stands", egress.name, zone_shown(zone))
            continue
        changed = before is None or before["listing"] != answer.listing.value
        since = now if changed or before is None else before["since"]
        zones[zone] = {"listing": answer.listing.value, "codes": list(answer.codes), "since": since, "checked": now}
        if answer.listing is Listing.ERROR or (changed and (before is not None or answer.listing is Listing.LISTED)):
            _log_change(egress, _zone_finding(zone, zones[zone]))  # a first "not listed" is not news
    cache.set(key, {"address": egress.address, "zones": zones}, timeout=max(KEEP_SECONDS, 3 * interval))


def _log_change(egress: Egress, finding: ZoneFinding) -> None:
    if finding.listing is Listing.CLEAR:
        logger.info("egress %s is no longer listed on %s: it carries sessions again", egress.name, finding.shown)
    elif finding.listing is Listing.LISTED:
        logger.warning("egress %s (%s) is %s: it rests until delisted", egress.name, egress.address, finding.describe())
    else:
        logger.error("egress %s: %s", egress.name, finding.describe())
