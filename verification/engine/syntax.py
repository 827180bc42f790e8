"""Address syntax: practical RFC 5321/5322, as email-validator judges it."""

from __future__ import annotations

import contextlib
import functools
import re
from dataclasses import dataclass

from email_validator import SPECIAL_USE_DOMAIN_NAMES, EmailNotValidError, validate_email

# email-validator already refuses localhost, .local, .test, .invalid, .onion, .arpa (so
# .home.arpa too). RFC 2606 reserves .example; RFC 9476 .alt; ICANN .internal (2024): none of
# them is ever delegated in the public DNS, so an address there can never receive mail.
_RESERVED_SUFFIXES = frozenset(SPECIAL_USE_DOMAIN_NAMES) | {"example", "alt", "internal", "onion", "localhost"}

# The plain ASCII shape nearly every real address has. email-validator costs ~100 us
# an address, too much for a 100,000-row file, so what this matches skips it; anything
# else (Unicode, IDNA, odd labels) still goes through it. A test checks they agree.
# The local part and the domain are matched apart: a chunk's rows share few domains, whose
# verdict on shape is kept (`_domain_shape`), so a row pays for its local part alone.
_ATEXT = r"[a-z0-9_!#$%&'*+\-/=?^`{|}~]"
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_FAST_LOCAL = re.compile(rf"{_ATEXT}+(?:\.{_ATEXT}+)*")
_FAST_DOMAIN = re.compile(rf"(?:{_LABEL}\.)+[a-z]{{2,63}}")
_PLAIN, _REFUSED, _ODD = 0, 1, 2  # a domain's shape: fast and fine, fast but never mail, email-validator's


@dataclass(frozen=True, slots=True)
class Address:
    email: str
    local: str
    domain: str
    ascii_domain: str


def normalise(raw: str) -> str:
    return raw.strip().lower()


def parse(email: str) -> Address | None:
    """Return the parts of a normalised address, or None when it is not one."""
    parts = _fast_parts(email)
    if parts is None:
        return _parse_with_email_validator(email)
    if not parts:
        return None
    return Address(email=email, local=parts[0], domain=parts[1], ascii_domain=parts[1])


def split(email: str) -> tuple[str, str] | None:
    """(local part, ASCII domain) of a normalised address, or None when it is not one: `parse`
    without building an Address, for a chunk's rows."""
    parts = _fast_parts(email)
    if parts is None:
        address = _parse_with_email_validator(email)
        return (address.local, address.ascii_domain) if address else None
    return parts or None


def _fast_parts(email: str) -> tuple[str, str] | tuple[()] | None:
    """(local, domain) of a plain ASCII address, () for one refused without email-validator, None
    for a shape only email-validator can judge."""
    if not email or len(email) > 254:
        return ()
    local, _, domain = email.partition("@")
    shape = _domain_shape(domain)
    if shape == _ODD or _FAST_LOCAL.fullmatch(local) is None:
        return () if _never_an_address(email, local, domain) else None
    if shape == _REFUSED or len(local) > 64:
        return ()
    return local, domain


def _never_an_address(email: str, local: str, domain: str) -> bool:
    """Refused by email-validator whatever else it holds, told without it (~20 us an address, and a
    list's broken rows are mostly these): a plain ASCII text without quotes, that has no @-sign or
    more than one, nothing with a dot after it, or a local part that is no dot-atom (a space, two
    dots in a row). Quoted local parts are refused too, but left to it; so is anything not ASCII,
    which IDNA may still make an address of. A test compares the two on generated texts."""
    if not email.isascii() or '"' in email:
        return False
    return "@" in domain or "." not in domain or _FAST_LOCAL.fullmatch(local.lower()) is None


@functools.lru_cache(maxsize=1 << 16)
def _domain_shape(domain: str) -> int:
    if _FAST_DOMAIN.fullmatch(domain) is None or "--" in domain:
        return _ODD
    return _REFUSED if len(domain) > 253 or _is_reserved(domain) else _PLAIN


def _parse_with_email_validator(email: str) -> Address | None:
    try:
        info = validate_email(
            email,
            check_deliverability=False,
            allow_smtputf8=True,
            allow_quoted_local=False,
            allow_domain_literal=False,
            allow_display_name=False,
            allow_empty_local=False,
            strict=True,
        )
    except EmailNotValidError:
        return None
    ascii_domain = info.ascii_domain.lower()
    if _is_reserved(ascii_domain):
        return None
    return Address(email=email, local=info.local_part, domain=info.domain, ascii_domain=ascii_domain)


def _is_reserved(domain: str) -> bool:
    return domain.rsplit(".", 1)[-1] in _RESERVED_SUFFIXES or domain in _RESERVED_SUFFIXES


def rough_parts(email: str) -> tuple[str, str]:
    """Best-effort (local, domain) of something that failed `parse`, for the list checks."""
    local, at, domain = email.rpartition("@")
    if not at:
        return "", ""
    if domain.isascii():  # the IDNA codec returns an ASCII name as it is, or fails
        return local, domain
    with contextlib.suppress(UnicodeError):
        domain = domain.encode("idna").decode("ascii")
    return local, domain
