"""Amazon SNS message signatures, checked before an SNS message is believed (docs/feedback.md, "Amazon
SES through SNS"): SignatureVersion 1 (SHA1) or 2 (SHA256), RSA PKCS #1 v1.5, over the message's signed
fields, with the certificate at SigningCertURL. That URL must match SNS_SIGNING_CERT_URL_PATTERN (AWS's
own hosts, https, a .pem) before anything is fetched; the certificate comes through lib/outbound.py and
is cached a day.

Written on `cryptography` rather than a package: the SNS validators on PyPI are unmaintained (last
releases 2015-2022) and fetch the certificate with their own HTTP client, around the outbound client's
refusal of private addresses, its timeout and its no-redirect rule.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature as _Mismatch
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from django.conf import settings
from django.core.cache import cache

from lib import outbound

_CONFIRMATION = ("Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type")
SIGNED_FIELDS = {
    "Notification": ("Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"),
    "SubscriptionConfirmation": _CONFIRMATION,
    "UnsubscribeConfirmation": _CONFIRMATION,
}
_HASHES: dict[str, type[hashes.HashAlgorithm]] = {"1": hashes.SHA1, "2": hashes.SHA256}
CERTIFICATE_CACHE_SECONDS = 24 * 3600


class BadSignature(Exception):
    """The message is not provably from SNS; the text says why, for the sender's log."""


def verify(message: dict[str, Any]) -> None:
    """Raises BadSignature unless `message` carries a valid SNS signature."""
    fields = SIGNED_FIELDS.get(str(message.get("Type")))
    if fields is None:
        raise BadSignature("Type is not an SNS message type.")
    algorithm = _HASHES.get(str(message.get("SignatureVersion")))
    if algorithm is None:
        raise BadSignature("SignatureVersion is neither 1 nor 2.")
    signature = _decoded(message.get("Signature"))
    key = _certificate(message.get("SigningCertURL")).public_key()
    if not isinstance(key, rsa.RSAPublicKey):
        raise BadSignature("The signing certificate has no RSA key.")
    try:
        key.verify(signature, string_to_sign(message, fields), padding.PKCS1v15(), algorithm())
    except _Mismatch:
        raise BadSignature("The signature does not match the message.") from None


def string_to_sign(message: dict[str, Any], fields: tuple[str, ...]) -> bytes:
    """Each signed field present, in SNS's order, as its name and value on lines of their own."""
    return "".join(f"{name}\n{message[name]}\n" for name in fields if name in message).encode()


def _decoded(signature: object) -> bytes:
    try:
        return base64.b64decode(str(signature), validate=True)
    except (binascii.Error, ValueError):
        raise BadSignature("Signature is not base64.") from None


def _certificate(url: object) -> x509.Certificate:
    if not isinstance(url, str) or not re.fullmatch(settings.SNS_SIGNING_CERT_URL_PATTERN, url):
        raise BadSignature("SigningCertURL is not an Amazon SNS certificate URL.")
    key = "sns-cert:" + hashlib.sha256(url.encode()).hexdigest()
    cached = cache.get(key)
    pem = cached if isinstance(cached, bytes) else _fetched(url)
    try:
        certificate = x509.load_pem_x509_certificate(pem)
    except ValueError:
        raise BadSignature("SigningCertURL did not answer a PEM certificate.") from None
    if not certificate.not_valid_before_utc <= datetime.now(UTC) <= certificate.not_valid_after_utc:
        raise BadSignature("The signing certificate is outside its validity period.")
    if cached is None:
        cache.set(key, pem, CERTIFICATE_CACHE_SECONDS)
    return certificate


def _fetched(url: str) -> bytes:
    try:
        answer, body = outbound.get_body(url, {"User-Agent": "email-verifier feedback"})
    except outbound.UnsafeUrl as error:
        raise BadSignature(f"SigningCertURL: {error}") from None
    if not answer.ok:
        raise BadSignature(f"SigningCertURL answered {answer.status_code or answer.error}.")
    return body
