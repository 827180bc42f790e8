"""The official Python client of the email verification API (README.md beside this package)."""

from verifier.client import Client, RateLimit, VerifierError
from verifier.webhooks import CallbackVerificationError, verify_callback

__all__ = ["CallbackVerificationError", "Client", "RateLimit", "VerifierError", "verify_callback"]
