"""Egresses: where deep verification's SMTP sessions leave from (docs/deep.md, "Egresses").

An MX judges the sending address, not us: a listed address turns every answer into
`smtp_blocked`. So sessions can leave from several egresses, each a local source address to bind
(`bind:203.0.113.7`) or a SOCKS5 proxy (`socks5://10.0.0.5:1080`), optionally with an EHLO name of
its own (`|helo=mx1.example.com`), the name its address's reverse DNS says. With none configured,
sessions leave from the machine's own address (DIRECT).

Health is a share: of an egress's sessions over the last window, how many were refused for the
egress's own reputation (a blocklist banner, a 5.7.x naming our address or a listing) or identity
(a refusal naming the client, its host names or its HELO). Past the
threshold (with enough sessions to judge) the egress rests and the others carry its work; the
bookkeeping lives with the caller (shared by every process), the rules live here.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

from verification.engine.smtp import Session, SmtpConfig
from verification.engine.smtp_replies import Meaning, meaning

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*")
# Names that stand for this machine or a private network: no mail server can look them up.
_PRIVATE_SUFFIXES = frozenset({"localhost", "localdomain", "local", "internal", "invalid", "lan", "arpa"})
# A refusal naming our address or a listing: about the egress, not the mailbox or the domain.
_REPUTATION = re.compile(
    r"spamhaus|spamcop|barracuda|sorbs|dnsbl|\brbl\b|block ?list|black ?list|\blisted\b|client host|your ip"
    r"|ip address|reputation|poor reputation|sender score",
    re.IGNORECASE,
)
# A refusal naming our client, its host names or its HELO: about the egress's identity, 4xx or 5xx.
_IDENTITY = re.compile(
    r"client host rejected|cannot find your (?:reverse )?hostname|helo command rejected", re.IGNORECASE
)


class EgressError(ValueError):
    """VERIFIER_SMTP_EGRESS names something that is not an egress."""


@dataclass(frozen=True, slots=True)
class Egress:
    name: str  # as configured, without the EHLO part: the metric's label and the lock's key
    bind: str = ""  # local source address
    proxy: str = ""  # socks5://host:port
    helo: str = ""  # the EHLO name; empty: VERIFIER_SMTP_HELO
    # The address mail servers see: the bind address unless |address= says otherwise (behind NAT, a
    # proxy's); empty: not known here, so its identity and blocklists go unchecked.
    address: str = ""
    # Where it leaves from, for accounts that pin their probes to a region (docs/privacy.md); "": none said.
    region: str = ""

    def config(self, base: SmtpConfig) -> SmtpConfig:
        """The session settings for sessions leaving through this egress."""
        if self is DIRECT or self.name == DIRECT.name:
            return base
        return replace(base, bind=self.bind, proxy=self.proxy, helo=self.helo or base.helo)


# The machine's own address (or VERIFIER_SMTP_PROXY, which SmtpConfig carries already).
DIRECT = Egress("direct")


def parse_egresses(spec: str) -> tuple[Egress, ...]:
    """`bind:<address>` or `socks5://host:port`, each optionally `|helo=<name>`,
    `|address=<the address mail servers see>` and `|region=<name>`, comma-separated.
    Empty: (DIRECT,). Raises EgressError naming the bad entry."""
    entries = [entry.strip() for entry in spec.split(",") if entry.strip()]
    egresses = tuple(parse_egress(entry) for entry in entries)
    names = [egress.name for egress in egresses]
    if len(set(names)) != len(names):
        raise EgressError(f"VERIFIER_SMTP_EGRESS names an egress twice: {spec!r}")
    return egresses or (DIRECT,)


def parse_egress(entry: str) -> Egress:
    where, _, options = (part.strip() for part in entry.partition("|"))
    found = _options(entry, options) if options else {}
    helo, address, region = found.get("helo", ""), found.get("address", ""), found.get("region", "")
    if where.startswith("bind:"):
        bind = where.removeprefix("bind:")
        if not _is_address(bind):
            raise EgressError(f"VERIFIER_SMTP_EGRESS: {entry!r}: bind: needs an IP address")
        return Egress(where, bind=bind, helo=helo, address=address or bind, region=region)
    if where.startswith("socks5://"):
        _socks5_checked(entry, where)
        return Egress(where, proxy=where, helo=helo, address=address, region=region)
    raise EgressError(f"VERIFIER_SMTP_EGRESS: {entry!r} is neither bind:<address> nor socks5://host:port")


def _options(entry: str, text: str) -> dict[str, str]:
    """helo, address and region from `helo=<host name>|address=<IP address>|region=<name>`, each at most once."""
    options: dict[str, str] = {}
    for option in text.split("|"):
        key, equals, value = (part.strip() for part in option.partition("="))
        valid = _OPTION_VALUES.get(key)
        if valid is None or not equals or key in options or not valid(value):
            raise EgressError(
                f"VERIFIER_SMTP_EGRESS: {entry!r}: the options are |helo=<host name>, |address=<IP address> "
                "and |region=<name> (lower-case letters, digits, dashes)"
            )
        options[key] = value
    return options


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# A region's name; `any` is every egress (an account's default), so no egress may be called that.
REGION = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
ANY_REGION = "any"

_OPTION_VALUES: dict[str, Callable[[str], bool]] = {
    "helo": lambda value: _HOSTNAME.fullmatch(value) is not None,
    "address": _is_address,
    "region": lambda value: REGION.fullmatch(value) is not None and value != ANY_REGION,
}


def _socks5_checked(entry: str, where: str) -> None:
    parts = urlsplit(where)
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None or parts.path not in ("", "/"):
        raise EgressError(f"VERIFIER_SMTP_EGRESS: {entry!r}: socks5:// needs host:port")


def helo_problem(name: str) -> str | None:
    """Why `name` is not a fully qualified domain name a mail server could look up (None: it is).
    Postfix's common reject_non_fqdn_helo_hostname refuses every session that names itself so."""
    bare = name.rstrip(".")
    try:
        ipaddress.ip_address(bare.strip("[]"))
        return "an IP address, not a name"
    except ValueError:
        pass
    if not _HOSTNAME.fullmatch(bare):
        return "not a host name"
    labels = bare.lower().split(".")
    if len(labels) < 2:
        return "a bare label, not a fully qualified domain name"
    if labels[-1] in _PRIVATE_SUFFIXES or (not labels[-1].isalpha() and not labels[-1].startswith("xn--")):
        return "a name no mail server can look up"
    return None


def helo_names_checked(egresses: tuple[Egress, ...], default: str) -> None:
    """Raises EgressError naming VERIFIER_SMTP_HELO when an egress would introduce itself with a
    name that is not a fully qualified domain name (its own |helo=, else `default`)."""
    for egress in egresses:
        name = egress.helo or default
        problem = helo_problem(name)
        if problem is None:
            continue
        whose = f"the EHLO name of egress {egress.name} (VERIFIER_SMTP_EGRESS)" if egress.helo else "the EHLO name"
        raise EgressError(
            f"VERIFIER_SMTP_HELO: {name!r}, {whose}, is {problem}: mail servers that check it refuse every "
            "session; give the name the sending address's PTR record names, e.g. mx1.example.com"
        )


def is_reputation_refusal(session: Session) -> bool:
    """Whether the session was turned away for the egress's own reputation or identity: a 5xx
    banner, a 5xx at any step naming our address or a listing (the 5.7.x refusals of blocklisted
    senders), or a 4xx or 5xx naming our client, its host names or its HELO (Postfix's
    reject_unknown_client_hostname answers 450: another egress may well be let through)."""
    refusal = session.refusal
    if refusal is None or meaning(refusal, recipient=False) is not Meaning.BLOCKED:
        return False
    if _IDENTITY.search(refusal.text):
        return True
    return refusal.code >= 500 and (session.failed_at == "banner" or bool(_REPUTATION.search(refusal.text)))


def should_rest(sessions: int, refused: int, *, minimum: int, share: float) -> bool:
    """An egress rests when over the window at least `minimum` sessions went out through it and
    more than `share` of them were refused for its reputation."""
    return sessions >= minimum and refused > share * sessions
