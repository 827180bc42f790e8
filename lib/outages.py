"""What an outage of a service we depend on looks like from inside a request or a task: the
database, the cache and broker (Redis) or the media storage (local disk or S3) cannot be reached.

Such an error is nobody's input: the API answers `503 service_unavailable` with `Retry-After`
(apikit/exceptions.py), a portal page a plain 503 page, and a row being judged is not blamed for it
(verification/engine/core.verdicts_isolated lets it through). docs/api.md, "Errors".
"""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError
from django.db import InterfaceError, OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# OSError: local media storage (a full or unwritable disk) and every socket error of a client.
OUTAGES: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
    BotoCoreError,
    ClientError,
)
RETRY_AFTER_SECONDS = 5


# SQLite says OperationalError for a broken schema too (PostgreSQL: ProgrammingError): a bug, not an outage.
_SCHEMA_ERRORS = ("no such table", "no such column")


def is_outage(exc: BaseException | None) -> bool:
    if isinstance(exc, OperationalError) and str(exc).startswith(_SCHEMA_ERRORS):
        return False
    return isinstance(exc, OUTAGES)
