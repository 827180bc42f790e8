"""Address syntax: practical RFC 5321/5322, as email-validator judges it."""

from __future__ import annotations

import contextlib
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
_ATEXT = r"[a-z0-9_!#$%&'*+\-/=?^`{|}~]"
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_FAST_ADDRESS = re.compile(rf"({_ATEXT}+(?:\.{_ATEXT}+)*)@((?:{_LABEL}\.)+[a-z]{{2,63}})")


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
    if not email or len(email) > 254:
        return None
    fast = _FAST_ADDRESS.fullmatch(email)
    if fast is not None and "--" not in fast[2]:
        local, domain = fast[1], fast[2]
        if len(local) > 64 or len(domain) > 253 or _is_reserved(domain):
            return None
        return Address(email=email, local=local, domain=domain, ascii_domain=domain)
    return _parse_with_email_validator(email)


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
    with contextlib.suppress(UnicodeError):
        domain = domain.encode("idna").decode("ascii")
    return local, domain
