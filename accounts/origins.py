"""Which web pages may use a publishable key: its allowed origins (docs/widget.md, "Allowed origins").

An origin is `scheme://host[:port]` as a browser sends it in the `Origin` header: http or https, a
host name or address, a port only when it is not the scheme's default. A pattern matches one origin
exactly, or with `*.` before a registrable domain (`https://*.example.com`, `https://*.shop.co.uk`:
never a public suffix of the Public Suffix List, such as `com`, `co.uk` or `github.io`, nor the tail
of an address) any single label there: `https://shop.example.com` but neither
`https://example.com` nor `https://a.b.example.com`.

Every decision about a page's origin is made here: a key's request (`origin_refusal`, which
accounts/permissions.py asks for the API's door) and a browser's preflight, which carries no key
(`some_key_allows`, for apikit/cors.py). Those two modules keep only the HTTP around it.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList

from accounts.models import ApiKey
from lib.errors import DomainError
from lib.text import has_controls

MAX_ORIGINS = 20
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_HOST = re.compile(rf"(\*\.)?{_LABEL}(\.{_LABEL})*")
_ADDRESS = re.compile(r"\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:.]+\]")


class OriginRefused(DomainError):
    param = "allowed_origins"


def origin_normalised(text: str) -> str:
    """`text` as an origin pattern in its one spelling (lower case, no default port); raises
    OriginRefused for anything that is not one."""
    if has_controls(text):  # urlsplit would quietly drop a tab or a line break: refuse them all
        raise OriginRefused(f"{text!r}: control characters (such as NUL) are not allowed in an origin.")
    candidate = text.strip().lower()
    try:
        parts = urlsplit(candidate)
        port = parts.port
    except ValueError:
        raise OriginRefused(f"“{text}” is not an origin such as https://shop.example.com.") from None
    host = parts.hostname or ""
    if parts.scheme not in _DEFAULT_PORTS or parts.path or parts.query or parts.fragment or parts.username:
        raise OriginRefused(f"“{text}” is not an origin: scheme://host[:port], with no path.")
    if not (_HOST.fullmatch(host) or _ADDRESS.fullmatch(parts.netloc.rsplit(":", 1)[0] if port else parts.netloc)):
        raise OriginRefused(f"“{text}” does not name a host.")
    if host.startswith("*.") and not _registrable(host[2:]):
        raise OriginRefused(
            f"“{text}”: a wildcard stands for one subdomain of a registrable domain, as https://*.example.com "
            "(not of a public suffix such as co.uk or github.io, nor of an address)."
        )
    netloc = parts.netloc.rsplit(":", 1)[0] if port is not None else parts.netloc
    shown_port = "" if port in (None, _DEFAULT_PORTS[parts.scheme]) else f":{port}"
    return f"{parts.scheme}://{netloc}{shown_port}"


@functools.cache
def _suffixes() -> PublicSuffixList:
    """The Public Suffix List as the publicsuffixlist package ships it (its ICANN and private sections):
    read once, never fetched."""
    return PublicSuffixList()


def _registrable(domain: str) -> bool:
    """Whether `domain` is, or is under, a registrable domain: not a public suffix (`com`, `co.uk`,
    `github.io`) and not the tail of an IPv4 address (no top-level domain is all digits)."""
    if "." not in domain or domain.rsplit(".", 1)[1].isdigit():
        return False
    return _suffixes().privatesuffix(domain) is not None


def origins_normalised(texts: list[str]) -> list[str]:
    if len(texts) > MAX_ORIGINS:
        raise OriginRefused(f"At most {MAX_ORIGINS} allowed origins.")
    return list(dict.fromkeys(origin_normalised(text) for text in texts))


def origin_allowed(origin: str, patterns: list[str]) -> bool:
    """Whether a browser's `Origin` header value matches one of `patterns` (already normalised)."""
    try:
        wanted = origin_normalised(origin)
    except OriginRefused:
        return False
    if "*" in wanted:
        return False  # a page's origin never holds a wildcard
    return any(_matches(wanted, pattern) for pattern in patterns)


def _matches(origin: str, pattern: str) -> bool:
    if "*." not in pattern:
        return origin == pattern
    scheme_and_star, rest = pattern.split("*.", 1)
    if not origin.startswith(scheme_and_star) or not origin.endswith("." + rest):
        return False
    label = origin[len(scheme_and_star) : -len(rest) - 1]
    return bool(label) and "." not in label and ":" not in label and "/" not in label


def origin_refusal(key: ApiKey, origin: str | None) -> str | None:
    """Why a publishable key may not be used from the page at `origin` (the request's `Origin`
    header), or None when one of its allowed origins matches."""
    if not origin:
        return "A publishable key is used from a web page: this request has no Origin."
    if not origin_allowed(origin, key.origin_list()):
        return "This publishable key may not be used from this origin."
    return None


def some_key_allows(origin: str) -> bool:
    """Whether any active publishable key lists `origin`: a preflight carries no key to ask."""
    keys = ApiKey.objects.active().filter(kind=ApiKey.Kind.PUBLISHABLE).exclude(allowed_origins="")
    return any(origin_allowed(origin, key.origin_list()) for key in keys.only("allowed_origins"))
