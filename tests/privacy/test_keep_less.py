"""Keep less: what is shared across accounts (deep mode's mailbox answers, reported outcomes) is keyed
by the address's HMAC with VERIFIER_ADDRESS_PEPPER, never the address (docs/privacy.md)."""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
import sys
from typing import Any

import pytest

from feedback.models import FeedbackEvent
from lib import address_keys as address_keys_module
from lib.address_keys import address_key, address_keys, remembered
from tests.conftest import Persona
from tests.support.stored import cells_holding
from verification.engine.smtp_answers import Answer
from verification.engine.smtp_replies import Meaning, Reply
from verification.models import CatchAllAnswer, MailboxAnswer

SHARED = [MailboxAnswer, CatchAllAnswer, FeedbackEvent]


@pytest.mark.usefixtures("deep_farm")
def test_the_shared_stores_hold_no_address_after_deep_verifications_and_reports(owner: Persona) -> None:
    for email in ["alice@mailbox.deepfarm.net", "nobody@mailbox.deepfarm.net", "gone@mailbox.deepfarm.net"]:
        assert owner.post_json("/v1/verify", {"email": email, "validation_mode": "deep"}).status_code == 200
    events = [{"email": "alice@mailbox.deepfarm.net", "outcome": "hard_bounce"}]
    assert owner.post_json("/v1/feedback", {"events": events}).status_code == 200
    assert MailboxAnswer.objects.count() == 3 and FeedbackEvent.objects.count() == 1
    assert cells_holding(["alice@", "nobody@", "gone@"], SHARED) == []
    second = owner.post_json("/v1/verify", {"email": "Nobody@Mailbox.deepfarm.net", "validation_mode": "deep"})
    assert second.json()["sub_status"] == "mailbox_not_found"  # found again by its key


def test_a_reply_naming_the_address_is_kept_without_it(db: Any) -> None:
    email = "jo.smith@example.com"
    reply = Reply(550, "5.1.1 <Jo.Smith@Example.com>: Recipient address rejected")
    MailboxAnswer.objects.store_many({email: Answer(reply, Meaning.NO_MAILBOX)})
    assert (
        MailboxAnswer.objects.fresh_many([email])[email].reply.text == "5.1.1 <<address>>: Recipient address rejected"
    )
    assert cells_holding(["jo.smith"], [MailboxAnswer]) == []


def test_the_key_is_the_hmac_of_the_normalised_address_with_the_pepper(settings: Any) -> None:
    first = address_key(" Jo@Example.com ")
    assert first == address_key("jo@example.com") and len(first) == 64 and "jo" not in first
    settings.VERIFIER_ADDRESS_PEPPER = "another secret"
    assert address_key("jo@example.com") != first


def test_the_key_is_plain_hmac_sha256_the_same_at_every_call_so_stored_keys_still_match(settings: Any) -> None:
    settings.VERIFIER_ADDRESS_PEPPER = "s3cret"
    expected = hmac.new(b"s3cret", b"jo@example.com", hashlib.sha256).hexdigest()
    assert [address_key(" Jo@Example.com "), address_key("jo@example.com")] == [expected, expected]


@pytest.mark.parametrize(
    "pepper",
    [
        "s3cret",
        "p" * 63,
        "p" * 64,
        "p" * 65,
        "a pepper longer than SHA-256's block of 64 bytes, hashed first" * 3,
        "pépère 🔑",
    ],
)
@pytest.mark.parametrize("email", ["jo@example.com", "Ünïcode.Name@bücher.example", "x" * 300 + "@example.com"])
def test_the_hand_made_hmac_agrees_with_the_hmac_module_on_every_length_of_pepper(
    settings: Any, pepper: str, email: str
) -> None:
    """The key is HMAC-SHA256 written out over hashlib (lib/address_keys.py `_pads`): keys shorter than,
    equal to and longer than the hash's 64-byte block (RFC 2104 hashes those first), and non-ASCII."""
    settings.VERIFIER_ADDRESS_PEPPER = pepper
    message = email.strip().lower().encode("utf-8", "surrogatepass")
    assert address_key(email) == hmac.new(pepper.encode(), message, hashlib.sha256).hexdigest()


def test_within_a_batch_each_key_is_computed_once_and_forgotten_after(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk worker's batch asks for a row's key up to five times (lib/address_keys.py `remembered`)."""
    settings.VERIFIER_ADDRESS_PEPPER = "s3cret"
    computed: list[str] = []
    keyed = address_keys_module._keyed
    monkeypatch.setattr(address_keys_module, "_keyed", lambda email: computed.append(email) or keyed(email))
    with remembered():
        first = [address_key("jo@example.com") for _ in range(5)]
        assert address_keys(["jo@example.com", "al@example.com"]) == {
            first[0]: "jo@example.com",
            keyed("al@example.com"): "al@example.com",
        }
    assert computed == ["jo@example.com", "al@example.com"] and len(set(first)) == 1
    address_key("jo@example.com")
    assert computed == ["jo@example.com", "al@example.com", "jo@example.com"]  # forgotten on leaving


def _settings_with(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "VERIFIER_ADDRESS_PEPPER"} | env
    code = "import config.settings as s; print(s.VERIFIER_ADDRESS_PEPPER)"
    return subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=60)


def test_production_refuses_to_start_without_a_pepper_and_debug_uses_a_fixed_one() -> None:
    refused = _settings_with(DEBUG="0")
    assert refused.returncode != 0 and "VERIFIER_ADDRESS_PEPPER must be set" in refused.stderr
    assert _settings_with(DEBUG="1").stdout.strip() == "dev-only-address-pepper"
    assert _settings_with(DEBUG="0", VERIFIER_ADDRESS_PEPPER="s3cret").stdout.strip() == "s3cret"
