"""``python -m bench --only address-keys``: what keying the shared stores by an HMAC of the address costs
(docs/privacy.md, "Keep less"), on the verify path and on a 100,000-row fast job.

`lib.address_keys.address_key` is HMAC-SHA256 with VERIFIER_ADDRESS_PEPPER over the normalised address.
A verification computes it for the objections check, the reported-outcomes lookup and, for a charged
`valid`, the guarantee's record; a fast bulk job twice per distinct address (objections and outcomes,
every chunk) plus its valid answers. Three parts, `--repeat` rounds each (3), keyed and unkeyed alternating
(which goes first swaps each round, so that drifting load falls on both):

- in this process: `address_key` per call (CALLS distinct addresses), against the function as it was
  before it kept its prepared HMAC (`_key_before`), and `address_keys` over ROWS addresses against
  the same map keyed by the address itself;
- the `single` scenario's "verify, one key, domain cached" case on a fresh SQLite stack (req/s);
- a `--rows` fast job on a fresh SQLite stack, upload to callback (rows/s), as `bulk` runs it.

"Unkeyed" stacks run bench/unkeyed_settings.py: the same service with `lib.address_keys` replaced by
bench/unkeyed_addresses.py (the normalised address is its own key), so the two differ by the HMAC
alone. Each stack is read afterwards: a keyed one must hold no address in `billing_validanswer`'s
keys, an unkeyed one nothing but addresses, else the run says so.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import statistics
import time
from collections.abc import Callable

from bench import bulk, single
from bench.data import generate
from bench.dnsd import start_dns
from bench.procs import Processes, interruptible
from bench.results import Measurement
from bench.stack import Stack

CALLS = 100_000
ROWS = 100_000
KEYED, UNKEYED = "bench.settings", "bench.unkeyed_settings"
SIDES = {KEYED: "keyed", UNKEYED: "unkeyed"}
KEYS_SEEN = """
from billing.guarantee import answers_filed
from billing.models import ValidAnswer
answers_filed()  # a bulk job's answers may still wait for the task that files them
keys = list(ValidAnswer.objects.values_list("address_key", flat=True)[:1000])
print(sum("@" in key for key in keys), len(keys))
"""


def _addresses(count: int) -> list[str]:
    return [f"Person.{n}@Company{n % 20_000}.example " for n in range(count)]


def _timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def _key_before(email: str) -> str:
    """`address_key` as it was before it kept its prepared HMAC: the pepper encoded, and the HMAC's
    key schedule computed, at every call. Kept here only to measure the change."""
    from django.conf import settings

    message = email.strip().lower().encode("utf-8", "surrogatepass")
    return hmac.new(settings.VERIFIER_ADDRESS_PEPPER.encode(), message, hashlib.sha256).hexdigest()


def _unkeyed(emails: list[str]) -> dict[str, str]:
    """The lookup's map as it was before the keying: the normalised address stands for itself."""
    return {email.strip().lower(): email for email in emails}


def in_process(rounds: int) -> dict[str, list[float]]:
    """Per call (µs) and over ROWS addresses (s), the two sides of each alternating."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    django.setup()
    from lib.address_keys import address_key, address_keys

    calls, rows = _addresses(CALLS), _addresses(ROWS)
    assert [address_key(e) for e in calls[:100]] == [_key_before(e) for e in calls[:100]]
    found: dict[str, list[float]] = {"per_call_us": [], "per_call_before_us": [], "keys_s": [], "plain_s": []}
    for _ in range(rounds):
        found["per_call_us"].append(_timed(lambda: [address_key(e) for e in calls]) / CALLS * 1e6)
        found["per_call_before_us"].append(_timed(lambda: [_key_before(e) for e in calls]) / CALLS * 1e6)
        found["keys_s"].append(_timed(lambda: address_keys(rows)))
        found["plain_s"].append(_timed(lambda: _unkeyed(rows)))
    return found


def _keys_seen(settings_module: str) -> Callable[[Stack], dict[str, object]]:
    """What the stack stored as keys of its valid answers: hex digests when keyed, addresses when not."""

    def seen(stack: Stack) -> dict[str, object]:
        plain, total = (int(n) for n in stack.shell(KEYS_SEEN).split()[-2:])
        expected = plain == 0 if settings_module == KEYED else plain == total
        wrong = [] if total and expected else [f"{plain} of {total} valid answers keyed by the address"]
        return {"side": SIDES[settings_module], "keys_read": total, "keys_that_are_addresses": plain, "wrong": wrong}

    return seen


def _order(number: int) -> tuple[str, str]:
    return (KEYED, UNKEYED) if number % 2 == 0 else (UNKEYED, KEYED)


def on_stacks(args: argparse.Namespace) -> list[Measurement]:
    """The single case and the bulk job, keyed and unkeyed, `--repeat` rounds each, on loopback DNS."""
    data = generate(args.rows, args.domains)
    measured: list[Measurement] = []
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, args.delay_ms)
        for number in range(args.repeat):
            for side in _order(number):
                measured += single.run(
                    dns.address, args.requests, settings_module=side, only=[single.DOMAIN_CACHED],
                    inspect=_keys_seen(side),
                )  # fmt: skip
            for side in _order(number + 1):
                measured += bulk.run(
                    data, dns.address, bulk.SQLITE, scenario="address-keys", settings_module=side,
                    inspect=_keys_seen(side),
                )  # fmt: skip
    return measured


def _spread(values: list[float], unit: str = "", digits: int = 1) -> str:
    return f"{statistics.median(values):,.{digits}f}{unit} ({min(values):,.{digits}f}–{max(values):,.{digits}f})"


def _rates(measured: list[Measurement], scenario: str, side: str) -> list[float]:
    return [m.rate for m in measured if m.scenario == scenario and m.extra["side"] == side]


def report(found: dict[str, list[float]], measured: list[Measurement], rows: int) -> list[str]:
    lines = [
        f"address_key, per call ({CALLS:,} calls, in process): {_spread(found['per_call_us'], ' µs', 2)}; "
        f"as before it kept its prepared HMAC: {_spread(found['per_call_before_us'], ' µs', 2)}",
        f"address_keys over {ROWS:,} addresses: {_spread(found['keys_s'], ' s', 3)}; "
        f"keyed by the address itself: {_spread(found['plain_s'], ' s', 3)}",
    ]
    for scenario, what, unit in (
        ("single", single.DOMAIN_CACHED, "req/s"),
        ("address-keys", f"{rows:,}-row fast job, SQLite, 1 qcluster", "rows/s"),
    ):
        keyed, unkeyed = _rates(measured, scenario, "keyed"), _rates(measured, scenario, "unkeyed")
        if keyed and unkeyed:
            ratio = statistics.median(keyed) / statistics.median(unkeyed)
            lines.append(f"{what}: keyed {_spread(keyed, ' ' + unit)}, unkeyed {_spread(unkeyed, ' ' + unit)}: "
                         f"keyed ÷ unkeyed {ratio:.3f}")  # fmt: skip
    lines += [
        f"!!! {m.scenario} ({m.extra['side']}): {error}" for m in measured for error in m.errors + m.extra["wrong"]
    ]
    return lines


def _load(load: tuple[float, float, float]) -> str:
    return ", ".join(f"{value:.2f}" for value in load)


def main(args: argparse.Namespace) -> int:
    interruptible()
    load_before = os.getloadavg()
    found = in_process(args.repeat)
    measured = on_stacks(args)
    load_after = os.getloadavg()
    lines = report(found, measured, args.rows)
    lines.append(f"{args.repeat} rounds each: median (min–max). Load average (1, 5, 15 min): {_load(load_before)} "
                 f"before, {_load(load_after)} after")  # fmt: skip
    print("\n".join(lines))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    document = {"in_process": found, "measurements": [m.to_dict() for m in measured], "load": [load_before, load_after]}
    args.json.write_text(json.dumps(document, indent=2, default=str) + "\n")
    print(f"JSON: {args.json}")
    return 1 if any("!!!" in line for line in lines) else 0
