"""Self-signed certificates made at test time (no key or certificate is kept in the repository)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID


def self_signed(key: rsa.RSAPrivateKey, common_name: str) -> bytes:
    """A PEM certificate for `common_name`, signed by its own `key`, valid from yesterday for 30 days."""
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.now(UTC)
    builder = x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
    builder = builder.serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1))
    certificate = builder.not_valid_after(now + timedelta(days=30)).sign(key, hashes.SHA256())
    return certificate.public_bytes(serialization.Encoding.PEM)


def key_pem(key: rsa.RSAPrivateKey) -> bytes:
    encoding, layout = serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8
    return key.private_bytes(encoding, layout, serialization.NoEncryption())
