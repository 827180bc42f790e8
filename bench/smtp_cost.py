"""The CPU one SMTP command costs deep verification's side: aiosmtplib against our client.

    python -m bench.smtp_cost [--sessions 100] [--recipients 80] [--at-once 30] [--rounds 3]

Starts bench/mxfarm.py in a process of its own (its CPU is not counted) and runs `--sessions`
sessions, `--at-once` at a time, each banner, EHLO, MAIL FROM, `--recipients` RCPTs and QUIT,
against the farm's instant address (no reply delay), three ways: aiosmtplib one command at a time
(as verification/engine/smtp.py spoke before smtp_client.py), our client one command at a time (a
server without PIPELINING), and run_session (our client, RCPTs pipelined). Prints the CPU seconds
of this process per command, the median of `--rounds` with min–max.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import aiosmtplib

from bench.mxfarm import INSTANT_ADDRESS, INSTANT_DOMAIN, farm_started
from verification.engine.smtp import SmtpConfig, open_socket, run_session
from verification.engine.smtp_client import SmtpClient

Way = Callable[[SmtpConfig, list[str]], Awaitable[None]]


async def _aiosmtplib(config: SmtpConfig, recipients: list[str]) -> None:
    sock = await open_socket(INSTANT_ADDRESS, config)
    client = aiosmtplib.SMTP(hostname=INSTANT_ADDRESS, sock=sock, local_hostname=config.helo, start_tls=False)
    await client.connect()
    await client.ehlo()
    await client.mail(config.mail_from)
    for recipient in recipients:
        await client.execute_command(b"RCPT", b"TO:<" + recipient.encode() + b">")
    await client.quit()


async def _ours_one_at_a_time(config: SmtpConfig, recipients: list[str]) -> None:
    client = await SmtpClient.over(await open_socket(INSTANT_ADDRESS, config), config.timeout)
    await client.reply()
    await client.ehlo(config.helo)
    await client.command(b"MAIL FROM:<" + config.mail_from.encode() + b">")
    for recipient in recipients:
        client.write(b"RCPT TO:<" + recipient.encode() + b">")
        await client.reply()
    await client.command(b"QUIT", expect=221)
    client.close()


async def _ours_pipelined(config: SmtpConfig, recipients: list[str]) -> None:
    found = await run_session(INSTANT_ADDRESS, recipients, config)
    if found.failure is not None or len(found.answers) != len(recipients):
        raise RuntimeError(f"session failed: {found.failure}")


WAYS: dict[str, Way] = {
    "aiosmtplib, one command at a time": _aiosmtplib,
    "ours, one command at a time": _ours_one_at_a_time,
    "ours, run_session, RCPTs pipelined": _ours_pipelined,
}


async def _cpu_per_command(way: Way, config: SmtpConfig, args: argparse.Namespace) -> float:
    recipients = [f"user{i}@{INSTANT_DOMAIN}" for i in range(args.recipients - 1)] + [f"alice@{INSTANT_DOMAIN}"]
    gate = asyncio.Semaphore(args.at_once)

    async def one() -> None:
        async with gate:
            await way(config, recipients)

    await one()  # warm: imports, the first connection
    started = time.process_time()
    await asyncio.gather(*(one() for _ in range(args.sessions)))
    return (time.process_time() - started) / (args.sessions * (args.recipients + 4))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.smtp_cost")
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--recipients", type=int, default=80)
    parser.add_argument("--at-once", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with farm_started("--addresses", 1, "--domains", 1, "--delay-ms", 0) as farm:
        config = SmtpConfig(helo="bench.example", mail_from="bench@example.com", port=farm.smtp_port)
        for name, way in WAYS.items():
            costs = [asyncio.run(_cpu_per_command(way, config, args)) * 1e6 for _ in range(args.rounds)]
            print(f"{name}: {statistics.median(costs):.1f} µs CPU a command ({min(costs):.1f}–{max(costs):.1f})")


if __name__ == "__main__":
    main()
