"""A stand-in for `lib.address_keys` in the address-keys scenario's "before" stacks only
(bench/unkeyed_settings.py puts it in place): the shared stores keyed by the normalised address
itself, as they were before the HMAC, so that the two sides differ by the HMAC alone. Never in the
service: nothing outside bench/ imports it, and import-linter forbids the app to import bench/.
"""

from __future__ import annotations

from collections.abc import Iterable

KEY_LENGTH = 64  # the columns stay as migrated; the bench's addresses are all shorter


def address_key(email: str) -> str:
    # lib/address_keys.py's normalisation, without the HMAC.
    return email.strip().lower()


def address_keys(emails: Iterable[str]) -> dict[str, str]:
    return {address_key(email): email for email in emails}
