"""The verification engine: plain Python, no Django.

An address goes in, a :class:`Verdict` comes out. DNS is reached only through
the ``DomainLookup`` the caller passes in, so the API, the portal and the bulk
worker share every rule here and tests can point it at a loopback server.
"""

from __future__ import annotations

from verification.engine.core import verify_many, verify_one
from verification.engine.dns import BatchResolver, DomainAnswer, DomainStatus, ResolverConfig, lookup_domains
from verification.engine.verdict import Checks, Status, SubStatus, Verdict

__all__ = [
    "BatchResolver",
    "Checks",
    "DomainAnswer",
    "DomainStatus",
    "ResolverConfig",
    "Status",
    "SubStatus",
    "Verdict",
    "lookup_domains",
    "verify_many",
    "verify_one",
]
