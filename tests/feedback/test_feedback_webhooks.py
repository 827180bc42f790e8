"""POST /webhooks/feedback/<provider>/<token>: each sending service's documented samples (tests/fixtures/feedback)."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from feedback.models import FeedbackInbox, MailgunToken
from feedback.services import inbox_of, inbox_rotate, webhook_urls
from lib.prune import prune_expired
from tests.conftest import Persona
from tests.feedback.conftest import RECENT_ISO, THEN, SnsSigner, keyed, post, sns, stored, url_path
from tests.jobs.conftest import Receiver
from tests.support.esp_events import mailgun_signed as signed
from tests.support.esp_events import sample

RECENT = int(THEN.timestamp())


def test_sendgrid_sample_delivered_bounce_dropped_and_spamreport_are_taken_the_rest_ignored(owner: Persona) -> None:
    events = sample("sendgrid_events.json")
    for event in events:
        event["timestamp"] = RECENT
    response = post(owner, "sendgrid", events)
    assert response.status_code == 200
    # Taken: delivered, bounce (type bounce), dropped (Bounced Address), spamreport.
    # Ignored: processed, deferred, open, unsubscribe.
    assert response.json() == {"accepted": 4, "ignored": 4}
    assert stored(owner) == keyed(
        [
            ("example@test.com", "complaint"),
            ("example@test.com", "delivered"),
            ("example@test.com", "hard_bounce"),
        ]
    )  # the bounce and the drop share one moment: one hard bounce


def test_sendgrid_blocked_is_a_soft_bounce(owner: Persona) -> None:
    events = sample("sendgrid_blocked.json")
    events[0]["timestamp"] = RECENT
    assert post(owner, "sendgrid", events).json() == {"accepted": 1, "ignored": 0}
    assert stored(owner) == keyed([("noemail@this.does.not.exist.tld", "soft_bounce")])


def test_old_sample_times_are_ignored_as_over_365_days(owner: Persona) -> None:
    assert post(owner, "sendgrid", sample("sendgrid_events.json")).json() == {"accepted": 0, "ignored": 8}


@pytest.mark.parametrize(
    ("name", "recipient", "outcome"),
    [
        ("mailgun_delivered.json", "john@example.com", "delivered"),
        ("mailgun_permanent_failure.json", "slava@mailgun.com", "hard_bounce"),
        ("mailgun_temporary_failure.json", "test@test.com", "soft_bounce"),
    ],
)
def test_mailgun_samples(owner: Persona, name: str, recipient: str, outcome: str) -> None:
    body = sample(name)
    body["event-data"]["timestamp"] = RECENT
    assert post(owner, "mailgun", body).json() == {"accepted": 1, "ignored": 0}
    assert stored(owner) == keyed([(recipient, outcome)])


def test_mailgun_signature_is_checked_once_the_account_sets_its_key(owner: Persona) -> None:
    inbox = inbox_of(owner.account)
    inbox.mailgun_signing_key = "key-abc123"
    inbox.save()
    body = sample("mailgun_delivered.json")
    body["event-data"]["timestamp"] = RECENT
    refused = post(owner, "mailgun", body)  # the documentation's signature, made with another key
    assert refused.status_code == 401
    assert refused.json()["error"]["code"] == "invalid_signature"
    assert stored(owner) == []
    assert post(owner, "mailgun", signed(body, "key-abc123")).json() == {"accepted": 1, "ignored": 0}


def signing_key_set(persona: Persona) -> str:
    inbox = inbox_of(persona.account)
    inbox.mailgun_signing_key = "key-abc123"
    inbox.save()
    return inbox.mailgun_signing_key


def delivered_to(recipient: str) -> dict[str, Any]:
    body = sample("mailgun_delivered.json")
    body["event-data"] |= {"timestamp": RECENT, "recipient": recipient}
    return body


def test_a_mailgun_event_signed_long_ago_is_401_and_stores_nothing(owner: Persona) -> None:
    key = signing_key_set(owner)
    refused = post(owner, "mailgun", signed(delivered_to("john@example.com"), key, timestamp=1600000000))
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "invalid_signature")
    assert "15 minutes" in refused.json()["error"]["message"]
    assert stored(owner) == []


@pytest.mark.parametrize("skew", [-16 * 60, 16 * 60])
def test_a_mailgun_timestamp_more_than_15_minutes_from_now_is_401(owner: Persona, skew: int) -> None:
    key = signing_key_set(owner)
    body = signed(delivered_to("john@example.com"), key, timestamp=int(time.time()) + skew)
    assert post(owner, "mailgun", body).status_code == 401
    within = signed(delivered_to("john@example.com"), key, timestamp=int(time.time()) + skew // 16 * 14)
    assert post(owner, "mailgun", within).json() == {"accepted": 1, "ignored": 0}


def test_a_mailgun_signature_replayed_for_another_recipient_is_401_and_changes_no_verdict(owner: Persona) -> None:
    key = signing_key_set(owner)
    first = signed(delivered_to("john@example.com"), key)
    assert post(owner, "mailgun", first).json() == {"accepted": 1, "ignored": 0}
    forged = delivered_to("victim@example.com") | {"signature": first["signature"]}
    forged["event-data"] |= {"event": "failed", "severity": "permanent"}
    refused = post(owner, "mailgun", forged)
    assert (refused.status_code, refused.json()["error"]["code"]) == (401, "invalid_signature")
    assert "replay" in refused.json()["error"]["message"]
    assert post(owner, "mailgun", first).status_code == 401  # the very same request again, too
    assert stored(owner) == keyed([("john@example.com", "delivered")])


def test_a_mailgun_token_is_kept_24_hours_then_pruned(owner: Persona) -> None:
    key = signing_key_set(owner)
    assert post(owner, "mailgun", signed(delivered_to("john@example.com"), key)).status_code == 200
    assert MailgunToken.objects.count() == 1
    with time_machine.travel(timezone.now() + timedelta(hours=23), tick=False):
        prune_expired()
        assert MailgunToken.objects.count() == 1
    with time_machine.travel(timezone.now() + timedelta(hours=24, seconds=1), tick=False):
        prune_expired()
        assert MailgunToken.objects.count() == 0


def test_the_same_mailgun_token_to_two_accounts_is_taken_by_each(owner: Persona, outsider: Persona) -> None:
    body = signed(delivered_to("john@example.com"), signing_key_set(owner))
    signing_key_set(outsider)
    assert post(owner, "mailgun", body).status_code == post(outsider, "mailgun", body).status_code == 200


def test_mailgun_signature_is_not_asked_without_a_key(owner: Persona) -> None:
    body = sample("mailgun_delivered.json")
    body["event-data"]["timestamp"] = RECENT
    del body["signature"]
    assert post(owner, "mailgun", body).json() == {"accepted": 1, "ignored": 0}


@pytest.mark.parametrize(
    ("name", "field", "recipient", "outcome"),
    [
        ("postmark_bounce.json", "BouncedAt", "john@example.com", "hard_bounce"),
        ("postmark_delivery.json", "DeliveredAt", "recipeint@example.com", "delivered"),  # the sample's own spelling
        ("postmark_spam_complaint.json", "BouncedAt", "john@example.com", "complaint"),
    ],
)
def test_postmark_records(owner: Persona, name: str, field: str, recipient: str, outcome: str) -> None:
    body = sample(name)
    day = body[field][:10]
    body[field] = body[field].replace(day, THEN.strftime("%Y-%m-%d"))  # the rest kept: 7 fractional digits, offsets
    assert post(owner, "postmark", body).json() == {"accepted": 1, "ignored": 0}
    assert stored(owner) == keyed([(recipient, outcome)])


def test_postmark_modular_delivery_record_names_its_type(owner: Persona) -> None:
    body = sample("postmark_delivery.json") | {"RecordType": "Delivery", "DeliveredAt": RECENT_ISO}
    assert post(owner, "postmark", body).json() == {"accepted": 1, "ignored": 0}
    assert post(owner, "postmark", body | {"RecordType": "Open"}).json() == {"accepted": 0, "ignored": 1}


def test_postmark_soft_bounce_and_other_records(owner: Persona) -> None:
    body = sample("postmark_bounce.json") | {"Type": "SoftBounce", "BouncedAt": RECENT_ISO}
    assert post(owner, "postmark", body).json() == {"accepted": 1, "ignored": 0}
    assert post(owner, "postmark", {"RecordType": "Open", "Recipient": "john@example.com"}).json() == {
        "accepted": 0,
        "ignored": 1,
    }
    assert stored(owner) == keyed([("john@example.com", "soft_bounce")])


def test_ses_bounce_and_delivery_through_sns(owner: Persona, sns_signer: SnsSigner) -> None:
    bounce, delivery = sample("ses_bounce_message.json"), sample("ses_delivery_message.json")
    bounce["bounce"]["timestamp"] = RECENT_ISO
    delivery["delivery"]["timestamp"] = (THEN - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    headers = {"x-amz-sns-message-type": "Notification"}
    assert post(owner, "ses", sns(sns_signer, bounce), **headers).json() == {"accepted": 1, "ignored": 0}
    assert post(owner, "ses", sns(sns_signer, delivery), **headers).json() == {"accepted": 1, "ignored": 0}
    assert stored(owner) == keyed([("jane@example.com", "delivered"), ("jane@example.com", "hard_bounce")])


def test_ses_transient_bounce_and_complaint(owner: Persona, sns_signer: SnsSigner) -> None:
    bounce = sample("ses_bounce_message.json")
    bounce["bounce"].update(timestamp=RECENT_ISO, bounceType="Transient")
    complaint = {
        "notificationType": "Complaint",
        "complaint": {"complainedRecipients": [{"emailAddress": "richard@example.com"}], "timestamp": RECENT_ISO},
        "mail": bounce["mail"],
    }
    post(owner, "ses", sns(sns_signer, bounce))
    post(owner, "ses", sns(sns_signer, complaint))
    assert stored(owner) == keyed([("richard@example.com", "complaint"), ("jane@example.com", "soft_bounce")])


def test_sns_subscription_is_confirmed_through_the_outbound_client(
    owner: Persona, receiver: Receiver, sns_signer: SnsSigner
) -> None:
    confirmation = sample("sns_subscription_confirmation.json")
    query = confirmation["SubscribeURL"].split("?", 1)[1]
    confirmation = sns_signer.sign(confirmation | {"SubscribeURL": f"{receiver.url}?{query}"})
    response = post(owner, "ses", confirmation, **{"x-amz-sns-message-type": "SubscriptionConfirmation"})
    assert response.status_code == 200
    assert response.json()["confirmed"] is True
    [call] = receiver.received
    assert call.method == "GET" and call.path.startswith("/hooks/bulk?Action=ConfirmSubscription&TopicArn=")


def test_sns_confirmation_to_a_private_address_is_refused(owner: Persona, settings: Any, sns_signer: SnsSigner) -> None:
    confirmation = sample("sns_subscription_confirmation.json") | {"SubscribeURL": "http://127.0.0.1:9/confirm"}
    # The certificate is fetched (from loopback) and cached by a first message; then loopback is refused.
    assert post(owner, "ses", sns(sns_signer, {"notificationType": "Open"})).status_code == 200
    settings.CALLBACK_ALLOW_PRIVATE_NETWORKS = False
    response = post(owner, "ses", sns_signer.sign(confirmation))
    assert response.status_code == 400
    assert "private" in response.json()["error"]["message"]


def test_a_wrong_token_or_provider_is_404_and_stores_nothing(owner: Persona) -> None:
    body = sample("postmark_delivery.json") | {"DeliveredAt": RECENT_ISO}
    good = url_path(owner, "postmark")
    other = "y" if good.endswith("x") else "x"  # the token's last character, changed (1 in 64 ended in x)
    for path in (good[:-1] + other, good.replace("/postmark/", "/mandrill/")):
        response = Client().post(path, data=json.dumps(body), content_type="application/json")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert stored(owner) == []


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_a_webhook_asked_with_another_method_than_post_is_405_in_the_error_shape(owner: Persona, method: str) -> None:
    response = getattr(Client(), method)(url_path(owner, "sendgrid"))
    assert (response.status_code, response["Allow"]) == (405, "POST")
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert stored(owner) == []


def test_a_rotated_token_is_404_and_the_new_one_works(owner: Persona) -> None:
    body = sample("postmark_delivery.json") | {"DeliveredAt": RECENT_ISO}
    old = url_path(owner, "postmark")
    inbox_rotate(account=owner.account)
    assert Client().post(old, data=json.dumps(body), content_type="application/json").status_code == 404
    assert post(owner, "postmark", body).status_code == 200


def test_each_account_has_its_own_urls(owner: Persona, outsider: Persona) -> None:
    assert webhook_urls(owner.account)["sendgrid"] != webhook_urls(outsider.account)["sendgrid"]
    body = sample("postmark_delivery.json") | {"DeliveredAt": RECENT_ISO}
    post(outsider, "postmark", body)
    assert stored(owner) == [] and stored(outsider) == keyed([("recipeint@example.com", "delivered")])


def test_a_body_that_is_not_json_or_not_the_format_is_400(owner: Persona) -> None:
    path = url_path(owner, "sendgrid")
    assert Client().post(path, data="{", content_type="application/json").status_code == 400
    assert post(owner, "sendgrid", {"event": "delivered"}).status_code == 400
    assert post(owner, "mailgun", [1, 2]).status_code == 400


def test_the_urls_are_in_get_v1_account(owner: Persona) -> None:
    urls = owner.get("/v1/account").json()["feedback_webhooks"]
    assert sorted(urls) == ["mailgun", "postmark", "sendgrid", "ses"]
    assert urls == webhook_urls(owner.account)
    assert urls["sendgrid"].endswith(
        "/webhooks/feedback/sendgrid/" + FeedbackInbox.objects.get(account=owner.account).token
    )
