"""The one outbound HTTP client (callbacks, and the confirmation of an SNS subscription).

A URL is checked once: scheme, no credentials, nothing a request line cannot carry (a space or a
control character), and every address its host resolves to must be public. An IRI
(`https://example.com/café`) is sent as its URI: the host in IDNA, the rest percent-encoded UTF-8.
The connection then goes to exactly the address that was checked (no second DNS lookup, so
rebinding cannot slip a private address in between). Redirects are never followed; every request has a timeout.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
import time
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# A space, CR, LF, NUL or other control character: no request line can carry it.
_UNSENDABLE = re.compile(r"[\x00-\x20\x7f]")
# Every printable ASCII character a URI may hold as it is; the rest (non-ASCII) is percent-encoded.
_URI_SAFE = "!#$%&'()*+,/:;=?@[]~"
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
# The most of an answer's body read (and kept, by get_body).
MAX_BODY = 64 * 1024
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class UnsafeUrl(Exception):
    """The URL may not be called: a permanent refusal, not worth retrying."""


@dataclass(frozen=True, slots=True)
class Target:
    url: str  # the URI that is called (an IRI encoded)
    scheme: str
    host: str
    port: int
    path: str
    ip: str


@dataclass(frozen=True, slots=True)
class Outcome:
    status_code: int | None
    error: str
    duration_ms: int

    @property
    def ok(self) -> bool:
        return is_success(self.status_code)


def is_success(status_code: int | None) -> bool:
    """A 2xx answer: the one thing that counts as delivered."""
    return status_code is not None and 200 <= status_code < 300


def is_public(ip: IPAddress) -> bool:
    """False for loopback, private, link-local, CGNAT, multicast, reserved, documentation..."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None:
            return is_public(embedded)
    if ip.version == 4 and ip in _CGNAT:
        return False
    return ip.is_global and not (ip.is_multicast or ip.is_reserved or ip.is_link_local)


def check_url(url: str) -> Target:
    """Resolve and vet `url`; raises UnsafeUrl with a reason a customer can read."""
    url = url.strip()
    if _UNSENDABLE.search(url):
        raise UnsafeUrl("The URL contains a space or a control character: percent-encode it.")
    try:
        url = as_uri(url)
        parts = urlsplit(url)
    except (ValueError, UnicodeError):  # "http://[::1", a host IDNA cannot encode
        raise UnsafeUrl("The URL is not a valid URL.") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeUrl("The URL must be an absolute http or https URL.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeUrl("The URL must not contain credentials.")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise UnsafeUrl("The URL has an invalid port.") from None
    ip = _checked_address(parts.hostname, port)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(url=url, scheme=parts.scheme, host=parts.hostname, port=port, path=path, ip=ip)


MAX_CALLBACK_URL = 2000


def callback_url_checked(url: object) -> str:
    """A callback URL as it is stored ('' for none), vetted as `check_url` vets it; raises UnsafeUrl
    with a reason a customer can read. Bulk uploads and single verifications take it alike."""
    if not isinstance(url, str):
        raise UnsafeUrl("callback_url must be a URL.")
    if len(url) > MAX_CALLBACK_URL:
        raise UnsafeUrl(f"callback_url is longer than {MAX_CALLBACK_URL} characters.")
    if not url:
        return url
    target = check_url(url)
    if len(target.url) > MAX_CALLBACK_URL:
        raise UnsafeUrl(f"callback_url is longer than {MAX_CALLBACK_URL} characters once percent-encoded.")
    return target.url


def as_uri(url: str) -> str:
    """The URI of an IRI: the host in IDNA, the path, query and fragment percent-encoded UTF-8."""
    if url.isascii():
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.hostname and not parts.hostname.isascii():
        host = parts.hostname.encode("idna").decode("ascii")
        netloc = host if parts.port is None else f"{host}:{parts.port}"
    path, query, fragment = (quote(part, safe=_URI_SAFE) for part in (parts.path, parts.query, parts.fragment))
    return urlunsplit((parts.scheme, netloc, path, query, fragment))


def _checked_address(host: str, port: int) -> str:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise UnsafeUrl(f"The host {host!r} does not resolve.") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not settings.CALLBACK_ALLOW_PRIVATE_NETWORKS and not all(is_public(a) for a in addresses):
        raise UnsafeUrl("The URL points at a private, loopback, link-local or otherwise non-public address.")
    return str(addresses[0])


def post(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """POST once. Raises UnsafeUrl; network trouble and non-2xx are in the Outcome."""
    return _request("POST", url, body, headers)[0]


def get(url: str, headers: dict[str, str]) -> Outcome:
    """GET once (an SNS subscription's confirmation link), as `post` does."""
    return _request("GET", url, None, headers)[0]


def get_body(url: str, headers: dict[str, str]) -> tuple[Outcome, bytes]:
    """GET once, as `get` does, and keep the body's first MAX_BODY bytes (an SNS signing certificate)."""
    return _request("GET", url, None, headers)


def _request(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> tuple[Outcome, bytes]:
    target = check_url(url)
    started = time.perf_counter()
    connection = _connection(target, settings.CALLBACK_TIMEOUT_SECONDS)
    try:
        connection.request(method, target.path, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read(MAX_BODY)
        return Outcome(response.status, "", _elapsed_ms(started)), answer
    except (OSError, http.client.HTTPException) as exc:
        return Outcome(None, f"{type(exc).__name__}: {exc}"[:255], _elapsed_ms(started)), b""
    finally:
        connection.close()


def _elapsed_ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)


def _connection(target: Target, timeout: float) -> http.client.HTTPConnection:
    if target.scheme == "https":
        return _PinnedHTTPSConnection(target, timeout)
    return _PinnedHTTPConnection(target, timeout)


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the vetted IP while the Host header keeps the URL's name."""

    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self.pinned_ip = target.ip

    def connect(self) -> None:
        self.sock = socket.create_connection((self.pinned_ip, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=ssl.create_default_context())
        self.pinned_ip = target.ip

    def connect(self) -> None:
        sock = socket.create_connection((self.pinned_ip, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]
