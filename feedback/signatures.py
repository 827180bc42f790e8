"""Proof that an event came from the account's sending service, for SendGrid and Postmark (docs/feedback.md,
"Webhooks"); Mailgun's signature is checked in esp.py, SNS's in feedback/sns.py.

- SendGrid's Signed Event Webhook: ECDSA (P-256, SHA-256) over the timestamp header followed by the raw
  body, checked with the verification key the account copied from SendGrid (base64 DER, or PEM).
- Postmark: the basic-auth credentials the account chose, which Postmark sends from the URL they are
  written into.
"""

from __future__ import annotations

import base64
import binascii
import hmac

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_der_public_key, load_pem_public_key

from feedback.esp import BadSignature
from lib.errors import DomainError

SENDGRID_SIGNATURE = "X-Twilio-Email-Event-Webhook-Signature"
SENDGRID_TIMESTAMP = "X-Twilio-Email-Event-Webhook-Timestamp"


class BadVerificationKey(DomainError):
    message = "Not an ECDSA P-256 public key: paste SendGrid's verification key as it shows it."


def sendgrid_key(text: str) -> ec.EllipticCurvePublicKey:
    """The verification key, from SendGrid's base64 (DER) or a PEM block; BadVerificationKey otherwise."""
    text = text.strip()
    try:
        if text.startswith("-----BEGIN"):
            key = load_pem_public_key(text.encode())
        else:
            key = load_der_public_key(base64.b64decode(text, validate=True))
    except (ValueError, binascii.Error, TypeError):
        raise BadVerificationKey from None
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise BadVerificationKey
    return key


def sendgrid_check(*, key_text: str, body: bytes, signature: str | None, timestamp: str | None) -> None:
    """BadSignature unless `signature` (base64 DER) is the key's ECDSA signature of timestamp + body."""
    if not signature or not timestamp:
        raise BadSignature("The SendGrid event carries no signature: its Signed Event Webhook is off.")
    try:
        raw = base64.b64decode(signature, validate=True)
        sendgrid_key(key_text).verify(raw, timestamp.encode() + body, ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError, binascii.Error, BadVerificationKey):
        raise BadSignature("The SendGrid signature does not match the account's verification key.") from None


def postmark_check(*, username: str, password: str, authorization: str | None) -> None:
    """BadSignature unless the Authorization header is Basic with these credentials (compared in constant time)."""
    scheme, _, encoded = (authorization or "").partition(" ")
    try:
        given = base64.b64decode(encoded.strip(), validate=True)
    except (ValueError, binascii.Error):
        given = b""
    expected = f"{username}:{password}".encode()
    if scheme.lower() != "basic" or not hmac.compare_digest(given, expected):
        raise BadSignature("The Postmark request does not carry this account's basic-auth credentials.")
