"""``python -m bench --only address-keys``: what keying the shared stores by an HMAC of the address costs
(docs/privacy.md, "Keep less"), as a share of a 100,000-row fast job.

`lib.address_keys.address_key` is HMAC-SHA256 with VERIFIER_ADDRESS_PEPPER over the normalised address.
A fast bulk job computes it twice per distinct address: once in the objections check
(`Objection.objects.objected`, every chunk) and once in the reported-outcomes lookup
(`FeedbackEvent.objects.deciding`, every chunk); deep mode adds the mailbox answers' lookup and store.
This times, in one Django process (no stack: the function reads only the setting):

- `address_key` alone, per call, over CALLS calls of distinct addresses;
- `address_keys` over ROWS distinct addresses, as a 100,000-row job's chunks ask it in all, once;
- the same with the HMAC replaced by the plain address bytes (what the stores were keyed by before):
  the difference is what the keying adds per lookup pass.

ROUNDS rounds: median (min, max), with the load average before and after.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

CALLS = 100_000
ROWS = 100_000
ROUNDS = 3


def _addresses(count: int) -> list[str]:
    return [f"Person.{n}@Company{n % 20_000}.example " for n in range(count)]


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _unkeyed(emails: list[str]) -> dict[str, str]:
    """The lookup's map as it was before the keying: the normalised address stands for itself."""
    return {email.strip().lower(): email for email in emails}


def measure() -> dict[str, list[float]]:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    django.setup()
    from lib.address_keys import address_key, address_keys

    calls, rows = _addresses(CALLS), _addresses(ROWS)
    found: dict[str, list[float]] = {"per_call_us": [], "keys_100k_s": [], "plain_100k_s": []}
    for _ in range(ROUNDS):
        found["per_call_us"].append(_timed(lambda: [address_key(e) for e in calls]) / CALLS * 1e6)
        found["keys_100k_s"].append(_timed(lambda: address_keys(rows)))
        found["plain_100k_s"].append(_timed(lambda: _unkeyed(rows)))
    return found


def main() -> int:
    before = os.getloadavg()
    found = measure()
    print(
        f"address_key: {CALLS:,} calls; address_keys: {ROWS:,} distinct addresses; {ROUNDS} rounds: median (min, max)"
    )
    for figure, values in found.items():
        print(f"  {figure:14s} {statistics.median(values):9.3f} ({min(values):.3f}, {max(values):.3f})")
    added = [k - p for k, p in zip(found["keys_100k_s"], found["plain_100k_s"], strict=True)]
    print(f"  a fast 100,000-row job's two passes add {2 * statistics.median(added):.2f} s of CPU "
          f"({2 * min(added):.2f}, {2 * max(added):.2f})")  # fmt: skip
    after = os.getloadavg()
    print(f"Load average (1, 5, 15 min): before {before[0]:.2f}, {before[1]:.2f}, {before[2]:.2f}; "
          f"after {after[0]:.2f}, {after[1]:.2f}, {after[2]:.2f}")  # fmt: skip
    return 0
