"""The one way a test gets committed data (threads, a live server, the raw WSGI app)."""

from __future__ import annotations

import pytest

# Every such test uses serialized_rollback. A plain flush re-creates content types under new
# ids, and a serialized_rollback test running after it fails re-inserting the original rows,
# so mixing the two makes the suite depend on the order its files run in.
committed_db = pytest.mark.django_db(transaction=True, serialized_rollback=True)
