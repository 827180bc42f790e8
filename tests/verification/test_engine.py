"""The pure engine: syntax, lists, DNS answers. No Django, no database."""

from __future__ import annotations

import string

import pytest
from email_validator import EmailNotValidError, validate_email
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.examples import examples
from verification.engine import disposable, lists
from verification.engine.syntax import _parse_with_email_validator, parse

# --- syntax --------------------------------------------------------------------------------

_local_chars = string.ascii_lowercase + string.digits + "._+-!#$%&'*/=?^`{|}~"
_domain_chars = string.ascii_lowercase + string.digits + "-."


@settings(max_examples=examples(3000), deadline=None)
@given(
    local=st.text(_local_chars, min_size=0, max_size=70),
    domain=st.text(_domain_chars, min_size=0, max_size=40),
    tld=st.sampled_from(
        [
            "com",
            "de",
            "co.uk",
            "io",
            "x",
            "1",
            "local",
            "test",
            "example",
            "arpa",
            "alt",
            "internal",
            "home.arpa",
            "onion",
            "xn--p1ai",
            "",
        ]
    ),
)
def test_fast_path_agrees_with_email_validator(local: str, domain: str, tld: str) -> None:
    email = f"{local}@{domain}.{tld}" if tld else f"{local}@{domain}"
    assert parse(email) == _parse_with_email_validator(email)


def test_email_validator_accepts_the_fast_path_shapes() -> None:
    for email in ["a@b.co", "first.last+tag@sub.domain.co.uk", "o'neil@company.com", "x_y-z@a-b.io"]:
        validate_email(email, check_deliverability=False)
        assert parse(email) is not None


@pytest.mark.parametrize("email", ["a@b", "a@.com", "@b.com", "a@b..com", "a b@c.com", "a@b.c_m"])
def test_broken_shapes_are_refused(email: str) -> None:
    assert parse(email) is None
    with pytest.raises(EmailNotValidError):
        validate_email(email, check_deliverability=False)


def test_length_limits_are_64_and_254() -> None:
    assert parse("x" * 64 + "@good.com") is not None
    assert parse("x" * 65 + "@good.com") is None
    long_domain = ".".join(["a" * 60] * 4) + ".com"  # 247 characters
    assert len("x" * 6 + "@" + long_domain) == 254
    assert parse("x" * 6 + "@" + long_domain) is not None
    assert parse("x" * 7 + "@" + long_domain) is None


# --- lists -----------------------------------------------------------------------------------------


def test_lists_are_big_enough_to_be_useful() -> None:
    assert len(lists.free_providers()) >= 300
    assert len(lists.role_local_parts()) >= 60
    assert {"gmail.com", "outlook.com", "yahoo.co.uk", "mail.ru", "qq.com"} <= lists.free_providers()
    assert {"info", "admin", "support", "sales", "postmaster", "noreply"} <= lists.role_local_parts()


def test_list_files_are_clean() -> None:
    for name in ["free_providers.txt", "role_local_parts.txt", "typo_targets.txt"]:
        entries = [
            line for line in (lists.DATA_DIR / name).read_text().splitlines() if line and not line.startswith("#")
        ]
        assert entries == sorted(set(entries)) or name != "free_providers.txt"
        assert all(entry == entry.strip().lower() for entry in entries)


def test_typo_targets_are_all_free_providers() -> None:
    assert lists.read_list("typo_targets.txt") <= lists.free_providers()


def test_no_free_provider_is_suggested_as_a_typo_of_another() -> None:
    assert all(lists.suggest_domain(domain) is None for domain in lists.free_providers())


@pytest.mark.parametrize("domain", ["mi.com", "ao.com", "good.com", "gmail.com", "gmx.org"])
def test_no_suggestion_for_short_or_unrelated_domains(domain: str) -> None:
    assert lists.suggest_domain(domain) is None


def test_disposable_parent_domain_counts() -> None:
    assert disposable.is_disposable("mailinator.com")
    assert disposable.is_disposable("a.b.mailinator.com")
    assert not disposable.is_disposable("good.com")
