"""What the shared store keeps of a mail server's reply: never the address it names (docs/privacy.md)."""

from __future__ import annotations

from verification.models.mailbox_answers import ADDRESS_PLACEHOLDER, reply_text


def test_a_reply_naming_the_address_in_another_case_keeps_the_placeholder() -> None:
    kept = reply_text("550 5.1.1 <Jo.Smith@Example.COM>: no such user", "jo.smith@example.com")
    assert kept == f"550 5.1.1 <{ADDRESS_PLACEHOLDER}>: no such user"


def test_a_reply_not_naming_the_address_is_kept_whole() -> None:
    assert reply_text("250 2.1.5 OK", "jo@example.com") == "250 2.1.5 OK"


def test_a_reply_naming_an_international_address_keeps_the_placeholder() -> None:
    kept = reply_text("550 Jöe@Bücher.example unknown, and jöe@bücher.example again", "jöe@bücher.example")
    assert kept == f"550 {ADDRESS_PLACEHOLDER} unknown, and {ADDRESS_PLACEHOLDER} again"


def test_a_kept_reply_is_cut_at_a_thousand_characters() -> None:
    assert len(reply_text("550 " + "x" * 2000, "jo@example.com")) == 1000
