"""The deep scenario's MX farm and its DNS, in a process of their own (never sharing a GIL with
the service or the bench).

    python -m bench.mxfarm --addresses 100 --domains 400 --delay-ms 50

    python -m bench.mxfarm --verdict-table --serve

Serves `--addresses` scripted MX servers (tests/support/mx_farm.py) on 127.0.1.1 and up, each
answering every command `--delay-ms` late, plus one on 127.0.1.250 answering at once; and the
loopback DNS server (tests/support/dns_server.py) with `--domains` domains `d<i>.deepbench.net`
(MX on address i mod `--addresses`), `instant.deepbench.net` (the prompt MX), and every other
name as `bench.data.behaviour` says. Mailboxes `alice`, `bob`, `carol`, `dave` exist; any
other local part is refused 5.1.1. Prints one JSON line `{"dns": "host:port", "smtp_port": N}`,
then a JSON line of the farm's counts each time it reads a line on stdin; stops on EOF.

`--rate-limited-every K` puts a connection rate limit on every K-th address (`--rate-limit`
connections per client in `--rate-window` seconds, then Postfix's 421 at the banner), and
`--greylist-every K` greylists every recipient of every K-th address other than those for
`--greylist-seconds` (the `deep-unknown` scenario, bench/deep_unknown.py).

`--verdict-table` serves the tests' farm instead (tests/support/deep.py): a domain per row of the
verdict table in docs/deep.md, for trying deep mode by hand ("Try it on this machine" there).
`--serve` runs until interrupted (Ctrl-C) rather than reading stdin.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from bench.data import behaviour
from bench.procs import PY
from tests.support.deep import SCRIPTS, farm_zone
from tests.support.dns_server import HOST, MX, DnsServer
from tests.support.mx_farm import ACCEPT, MxFarm, Script
from verification.engine import dnswire

MAILBOXES = ("alice", "bob", "carol", "dave")
INSTANT_ADDRESS = "127.0.1.250"
INSTANT_DOMAIN = "instant.deepbench.net"


@dataclass(frozen=True)
class Farm:
    """A farm process started by a scenario: its DNS server's host:port, its SMTP port, and the
    process (its stdin asks for the counts: bench/deep.py `_farm_counts`)."""

    dns: str
    smtp_port: int
    process: subprocess.Popen[str]


@contextlib.contextmanager
def farm_started(*options: object) -> Iterator[Farm]:
    """`python -m bench.mxfarm` with these options in a process of its own, stopped on leaving."""
    process = subprocess.Popen(
        [PY, "-m", "bench.mxfarm", *map(str, options)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdin is not None
        started = json.loads(process.stdout.readline())
        yield Farm(started["dns"], started["smtp_port"], process)
    finally:
        process.terminate()
        process.wait(timeout=10)


def address(index: int) -> str:
    return f"127.0.1.{index + 1}"


def domain(index: int) -> str:
    return f"d{index}.deepbench.net"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mxfarm")
    parser.add_argument("--addresses", type=int, default=100)
    parser.add_argument("--domains", type=int, default=400)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--verdict-table", action="store_true", help="serve the tests' farm (tests/support/deep.py)")
    parser.add_argument("--serve", action="store_true", help="run until interrupted instead of reading stdin")
    parser.add_argument(
        "--port", type=int, default=0, help="the farm's SMTP port on every address (default: a free one)"
    )
    parser.add_argument("--dns-port", type=int, default=0, help="the DNS server's port (default: a free one)")
    parser.add_argument("--rate-limited-every", type=int, default=0, help="rate-limit every K-th address (0: none)")
    parser.add_argument("--rate-limit", type=int, default=2, help="connections a client may open per window")
    parser.add_argument("--rate-window", type=float, default=60.0, help="the rate limit's window, seconds")
    parser.add_argument("--greylist-every", type=int, default=0, help="greylist at every K-th address (0: none)")
    parser.add_argument("--greylist-seconds", type=float, default=1.0)
    args = parser.parse_args()
    if args.serve:
        # Before the farm starts: a process that a non-interactive shell started in the background (a
        # CI runner's) ignores SIGINT until its handler is set, and a Ctrl-C sent as soon as the
        # ready line is read would otherwise be lost, the farm serving on.
        _stop_on_signals()
    with contextlib.suppress(KeyboardInterrupt) if args.serve else contextlib.nullcontext():
        _run(args)


def _run(args: argparse.Namespace) -> None:
    if args.verdict_table:
        with DnsServer(default=behaviour, port=args.dns_port) as dns, MxFarm(SCRIPTS, port=args.port) as farm:
            farm_zone(dns)
            print(json.dumps({"dns": dns.address, "smtp_port": farm.port}), flush=True)
            _until_interrupted()
        return
    mailboxes = dict.fromkeys(MAILBOXES, ACCEPT)
    scripts = {address(i): _script(args, i, mailboxes) for i in range(args.addresses)}
    scripts[INSTANT_ADDRESS] = Script(mailboxes=mailboxes)
    with DnsServer(default=behaviour, port=args.dns_port) as dns, MxFarm(scripts, port=args.port) as farm:
        for i in range(args.domains):
            dns.set(domain(i), MX(f"mx1.{domain(i)}"))
            dns.set(f"mx1.{domain(i)}", HOST(address(i % args.addresses)))
        dns.set(INSTANT_DOMAIN, MX(f"mx1.{INSTANT_DOMAIN}"))
        dns.set(f"mx1.{INSTANT_DOMAIN}", HOST(INSTANT_ADDRESS))
        # Every answer the scenarios ask for, built before the clock (DnsServer.warm): the farm stands
        # for other people's servers, and its own CPU should not be what a run measures.
        domains = [domain(i) for i in range(args.domains)] + [INSTANT_DOMAIN]
        dns.warm(domains, dnswire.MX)
        for rdtype in (dnswire.A, dnswire.AAAA):
            dns.warm((f"mx1.{name}" for name in domains), rdtype)
        print(json.dumps({"dns": dns.address, "smtp_port": farm.port}), flush=True)
        if args.serve:
            _until_interrupted()
            return
        for _ in sys.stdin:
            stats = farm.stats
            slow = [a for a in scripts if a != INSTANT_ADDRESS]
            counts = {
                "sessions": sum(stats.sessions[a] for a in slow),
                "peak_per_address": max((stats.peak[a] for a in slow), default=0),
                "data_commands": stats.commands["DATA"],
                "rcpt": len(stats.recipients),
                "rate_refused": sum(stats.rate_refused.values()),
            }
            print(json.dumps(counts), flush=True)
            farm.reset()


def _script(args: argparse.Namespace, index: int, mailboxes: dict[str, str]) -> Script:
    """Address `index`'s behaviour: late by --delay-ms; rate-limited or greylisting as the options say."""
    limited = bool(args.rate_limited_every) and index % args.rate_limited_every == 0
    greylisting = bool(args.greylist_every) and index % args.greylist_every == 1 % args.greylist_every
    return Script(
        mailboxes=mailboxes,
        delay=args.delay_ms / 1000,
        rate_limit=args.rate_limit if limited else 0,
        rate_window=args.rate_window,
        greylist_seconds=args.greylist_seconds if greylisting else 0.0,
    )


def _stop_on_signals() -> None:
    """Ctrl-C or SIGTERM stops it (SIGINT too when a shell started it in the background)."""
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.default_int_handler)


def _until_interrupted() -> None:
    """Until a signal `_stop_on_signals` set raises KeyboardInterrupt (`main` ends quietly on it)."""
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
