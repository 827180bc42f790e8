"""Amazon SES through SNS: a message is believed only with a valid SNS signature (feedback/sns.py), the
certificate fetched through the outbound client from an SNS certificate URL, and cached."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from config.settings import SNS_SIGNING_CERT_URL_PATTERN as DEFAULT_PATTERN
from feedback.models import FeedbackEvent
from tests.conftest import Persona
from tests.feedback.conftest import RECENT_ISO, SnsSigner, keyed, post, sample, sns, stored
from tests.jobs.conftest import Receiver


def delivery() -> dict[str, Any]:
    message = sample("ses_delivery_message.json")
    message["delivery"]["timestamp"] = RECENT_ISO
    return message


@pytest.mark.parametrize("version", ["1", "2"])
def test_a_notification_signed_with_either_signature_version_is_taken(
    owner: Persona, sns_signer: SnsSigner, version: str
) -> None:
    envelope = sample("sns_notification_envelope.json") | {"Message": json.dumps(delivery())}
    envelope = sns_signer.sign(envelope, version=version)
    assert post(owner, "ses", envelope).json() == {"accepted": 1, "ignored": 0}
    assert stored(owner) == keyed([("jane@example.com", "delivered")])


def refused(response: Any) -> str:
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_signature"
    return str(response.json()["error"]["message"])


def test_a_message_changed_after_signing_is_refused_and_nothing_stored(owner: Persona, sns_signer: SnsSigner) -> None:
    envelope = sns(sns_signer, delivery())
    envelope["Message"] = envelope["Message"].replace("jane@example.com", "john@example.com")
    assert "does not match" in refused(post(owner, "ses", envelope))
    assert not FeedbackEvent.objects.exists()


def test_a_signature_by_another_key_is_refused(owner: Persona, sns_signer: SnsSigner) -> None:
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    envelope = sns_signer.sign(
        sample("sns_notification_envelope.json") | {"Message": json.dumps(delivery())}, key=stranger
    )
    refused(post(owner, "ses", envelope))
    assert stored(owner) == []


def test_an_unsigned_notification_is_refused(owner: Persona, sns_signer: SnsSigner) -> None:
    envelope = sample("sns_notification_envelope.json") | {"Message": json.dumps(delivery())}
    refused(post(owner, "ses", envelope))  # the documentation's own signature, by a certificate on AWS
    del envelope["Signature"]
    refused(post(owner, "ses", envelope))
    assert stored(owner) == []


def test_an_unknown_signature_version_is_refused(owner: Persona, sns_signer: SnsSigner) -> None:
    envelope = sns(sns_signer, delivery()) | {"SignatureVersion": "3"}
    assert "SignatureVersion" in refused(post(owner, "ses", envelope))


def test_an_unsigned_subscription_confirmation_is_not_followed(
    owner: Persona, receiver: Receiver, sns_signer: SnsSigner
) -> None:
    confirmation = sns_signer.sign(sample("sns_subscription_confirmation.json") | {"SubscribeURL": receiver.url})
    confirmation["Token"] = "forged"
    refused(post(owner, "ses", confirmation))
    assert receiver.received == []


@pytest.mark.parametrize(
    "cert_url",
    [
        "http://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem",  # not https
        "https://sns.us-east-1.amazonaws.com.evil.example/SimpleNotificationService-x.pem",
        "https://evil.example/sns.us-east-1.amazonaws.com/x.pem",
        "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.txt",
        "https://sns.us-east-1.amazonaws.com/x.pem?.pem",
        "https://user@sns.us-east-1.amazonaws.com/x.pem",
    ],
)
def test_a_certificate_url_off_amazons_sns_hosts_is_refused_before_any_fetch(
    owner: Persona, sns_signer: SnsSigner, settings: Any, cert_url: str
) -> None:
    settings.SNS_SIGNING_CERT_URL_PATTERN = DEFAULT_PATTERN  # as deployed: AWS's hosts only
    envelope = sns(sns_signer, delivery()) | {"SigningCertURL": cert_url}
    assert "SigningCertURL" in refused(post(owner, "ses", envelope))
    assert sns_signer.fetches == []


def test_the_default_pattern_takes_amazons_certificate_urls() -> None:
    for url in (
        "https://sns.us-west-2.amazonaws.com/SimpleNotificationService-f3ecfb7224c7233fe7bb5f59f96de52f.pem",
        "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-3250158c6b0e3d4b1ae1a1f7b3e1dd05.pem",
    ):
        assert re.fullmatch(DEFAULT_PATTERN, url)


def test_the_certificate_is_fetched_once_then_cached(owner: Persona, sns_signer: SnsSigner) -> None:
    post(owner, "ses", sns(sns_signer, delivery()))
    second = delivery()
    second["delivery"]["recipients"] = ["john@example.com"]
    assert post(owner, "ses", sns(sns_signer, second)).json() == {"accepted": 1, "ignored": 0}
    assert sns_signer.fetches == ["/SimpleNotificationService-test.pem"]
