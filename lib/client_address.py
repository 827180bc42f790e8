"""The client's address: one function that every door uses (throttles, key allow-lists, the
audit log, sign-up limits).

Behind a reverse proxy the socket's peer is the proxy. Only when that peer is one of
`TRUSTED_PROXIES` is `X-Forwarded-For` read, right to left, skipping the proxies we trust: the
first address that is not ours is the client. Anything to its left was written by the client and
is never believed; a header sent by an untrusted peer is ignored whole (docs/portal.md,
"Behind a proxy").
"""

from __future__ import annotations

from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network
from typing import Any

from django.conf import settings

type Network = IPv4Network | IPv6Network


def trusted_networks(entries: list[str]) -> list[Network]:
    """`TRUSTED_PROXIES` parsed: addresses or CIDRs (a bad entry raises ValueError at start-up)."""
    return [ip_network(entry, strict=False) for entry in entries]


def client_address(request: Any) -> str:
    """The client's IP address as text, or "" when there is no request or no usable address."""
    if request is None:
        return ""
    peer = _parsed(request.META.get("REMOTE_ADDR", ""))
    if peer is None:
        return ""
    networks: list[Network] = settings.TRUSTED_PROXIES
    if not _is_trusted(peer, networks):
        return str(peer)
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for entry in reversed(forwarded.split(",")):
        hop = _parsed(entry.strip())
        if hop is None:
            break  # a hop we cannot read: stop at the last one we could
        if not _is_trusted(hop, networks):
            return str(hop)
        peer = hop
    return str(peer)


def _parsed(text: str) -> Any:
    try:
        return ip_address(text)
    except ValueError:
        return None


def _is_trusted(address: Any, networks: list[Network]) -> bool:
    return any(address in network for network in networks)
