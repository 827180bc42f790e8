"""The MX farm of the deep-verification tests: one behaviour per loopback address and domain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.dns_server import HOST, MX, DnsServer
from tests.support.mx_farm import ACCEPT, MxFarm, Script
from verification.engine.dns import ResolverConfig
from verification.engine.egress import parse_egresses
from verification.engine.leases import allowance_key
from verification.engine.mxhosts import host_resolver
from verification.engine.smtp import SmtpConfig
from verification.engine.smtp_scheduling import Prober
from verification.engine.smtp_slots import HostSlots

SENDER = "verify@deep-sender.net"
# A fully qualified name: with DEBUG off (the live stacks) a start with deep mode on refuses `localhost`.
HELO = "verifier.deep-sender.net"
# Forty MX hosts on addresses of their own, each turning every session away at the banner.
FORTY_BUSY = [f"127.0.0.{n}" for n in range(60, 100)]
BUSY_BANNER = "450 4.3.2 Service busy, try again later"
RATE_LIMITED, ANVIL = "127.0.0.17", "127.0.0.18"
# Nothing listens on this one's farm port: a dead MX host.
DEAD_ADDRESS = "127.0.0.40"

SCRIPTS = {
    "127.0.0.2": Script(
        mailboxes={
            "alice": ACCEPT,
            "info": ACCEPT,
            "gone": "550 5.2.1 The email account that you tried to reach is disabled",
            "full": "552 5.2.2 The email account that you tried to reach is over quota",
            "quota": "452 4.2.2 Mailbox full, try again later",
        }
    ),
    "127.0.0.3": Script(others=ACCEPT),  # catch-all
    "127.0.0.4": Script(mailboxes={"alice": ACCEPT}, greylist_seconds=1.0),
    "127.0.0.5": Script(banner="554 5.7.1 Service unavailable; Client host blocked using zen.spamhaus.org"),
    "127.0.0.6": Script(others="550 5.7.1 Recipient rejected by policy", mailboxes={"alice": ACCEPT}),
    "127.0.0.7": Script(tarpit=True),
    "127.0.0.8": Script(mailboxes={"alice": ACCEPT}, max_recipients=1),
    "127.0.0.9": Script(mailboxes={"alice": ACCEPT}, starttls=True, starttls_required=True),
    "127.0.0.10": Script(mailboxes={f"user{i}": ACCEPT for i in range(12)}, max_connections=1, delay=0.02),
    "127.0.0.11": Script(mailboxes={"alice": ACCEPT}, mail_reply="550 5.7.1 Sender blocked: poor reputation"),
    "127.0.0.12": Script(banner="421 4.7.0 Too many connections, try again later"),
    "127.0.0.13": Script(mailboxes={"alice": ACCEPT}, delay=0.05),
    "127.0.0.14": Script(mailboxes={"alice": ACCEPT}, others="450 4.7.1 Greylisted, try again later"),
    "127.0.0.15": Script(mailboxes={"alice": ACCEPT, "jöe": ACCEPT, "ñ": ACCEPT}, smtputf8=True),
    "127.0.0.16": Script(banner=BUSY_BANNER),
    # Postfix's smtpd_client_connection_rate_limit = 2 (docs/deep.md, "Rate limits"): a second's
    # window here, anvil's minute there.
    RATE_LIMITED: Script(
        mailboxes={f"user{i}": ACCEPT for i in range(0, 100, 2)}, rate_limit=2, rate_window=1.0, delay=0.01
    ),
    ANVIL: Script(mailboxes={"alice": ACCEPT, "bob": ACCEPT, "carol": ACCEPT}, rate_limit=2, rate_window=60.0),
    **{address: Script(banner=BUSY_BANNER) for address in FORTY_BUSY},
}

# domain -> its MX hosts' addresses, in preference order (one host each).
DOMAINS = {
    "mailbox.deepfarm.net": ["127.0.0.2"],
    "anything.deepfarm.net": ["127.0.0.3"],
    "bounces.deepfarm.net": ["127.0.0.3"],  # a second catch-all domain, with other outcomes (tests/feedback)
    "greylist.deepfarm.net": ["127.0.0.4"],
    "listed.deepfarm.net": ["127.0.0.5"],
    "policy.deepfarm.net": ["127.0.0.6"],
    "tarpit.deepfarm.net": ["127.0.0.7"],
    "onercpt.deepfarm.net": ["127.0.0.8"],
    "tls.deepfarm.net": ["127.0.0.9"],
    "busy.deepfarm.net": ["127.0.0.10"],
    "badsender.deepfarm.net": ["127.0.0.11"],
    "toobusy.deepfarm.net": ["127.0.0.12"],
    "slow.deepfarm.net": ["127.0.0.13"],
    "probegrey.deepfarm.net": ["127.0.0.14"],
    "deadfirst.deepfarm.net": [DEAD_ADDRESS, "127.0.0.2"],
    "alldead.deepfarm.net": [DEAD_ADDRESS],
    "tarpitfirst.deepfarm.net": ["127.0.0.7", "127.0.0.2"],
    "utf8.deepfarm.net": ["127.0.0.15"],
    "xn--bcher-kva.deepfarm.net": ["127.0.0.15"],  # bücher.deepfarm.net, as DNS (and SMTP) see it
    "ascii-only.deepfarm.net": ["127.0.0.2"],  # 127.0.0.2 does not offer SMTPUTF8
    "forty.deepfarm.net": FORTY_BUSY,
    "ratelimited.deepfarm.net": [RATE_LIMITED],
    "anvil.deepfarm.net": [ANVIL],
}


def farm_zone(dns: DnsServer, domains: dict[str, list[str]] = DOMAINS) -> None:
    for domain, addresses in domains.items():
        hosts = [f"mx{i}.{domain}" for i in range(1, len(addresses) + 1)]
        dns.set(domain, MX(*hosts))
        for host, address in zip(hosts, addresses, strict=True):
            dns.set(host, HOST(address))


def domains_on(dns: DnsServer, address: str, count: int, name: str) -> list[str]:
    """Domains of different providers whose first MX host is `address`: each names a backup host
    of its own (never reached while `address` answers), so each is a group of its own."""
    domains = [f"d{i}.{name}.deepfarm.net" for i in range(count)]
    farm_zone(dns, {domain: [address, f"127.0.2.{i + 1}"] for i, domain in enumerate(domains)})
    return domains


# Per SMTP step: long enough for a loaded machine (a load of 20 on 2 cores happens); the tarpit tests shorten it.
TIMEOUT = 5.0


def deep_settings(settings: Any, port: int, lock_dir: Path) -> None:
    """Deep mode on, its sessions to `port` (the farm's, or the real MTAs' of tests/mta)."""
    settings.VERIFIER_DEEP_MODE = True
    settings.VERIFIER_SMTP_PORT = port
    settings.VERIFIER_SMTP_TIMEOUT = TIMEOUT
    settings.VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS = True
    settings.VERIFIER_SMTP_LOCK_DIR = str(lock_dir)
    settings.VERIFIER_SMTP_FROM = SENDER
    settings.VERIFIER_SMTP_HELO = HELO


def allowances_forgotten(settings: Any) -> None:
    """Every farm address starts a test at the default allowance, as it does in a test's own lock
    directory: with REDIS_URL the allowance is kept in Redis for an hour (docs/deep.md, "Rate
    limits"), from one test, and one run of the suite, to the next."""
    if settings.REDIS_URL:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL)
        client.delete(*(allowance_key(address, "") for address in SCRIPTS))
        client.close()


MAILBOX = "127.0.0.2"  # alice exists, others do not


def tenants(dns: DnsServer, count: int) -> list[str]:
    """Domains each naming an MX host of its own, every one of them on MAILBOX."""
    domains = [f"tenant{i}.deepfarm.net" for i in range(count)]
    for domain in domains:
        dns.set(domain, MX(f"{domain.replace('.', '-')}.mail.protection.deepfarm.net"))
        dns.set(f"{domain.replace('.', '-')}.mail.protection.deepfarm.net", HOST(MAILBOX))
    return domains


CATCH_ALL = "127.0.0.3"  # the farm's catch-all: every recipient accepted


def hosted_on(dns: DnsServer, address: str, count: int, name: str) -> list[str]:
    """Domains each naming an MX host of its own, every one of them on `address` (as tenants())."""
    domains = [f"{name}{i}.deepfarm.net" for i in range(count)]
    for domain in domains:
        dns.set(domain, MX(f"mx.{domain}"))
        dns.set(f"mx.{domain}", HOST(address))
    return domains


SLOW = "127.0.0.13"  # answers every command 50 ms late


def prober(dns: DnsServer, farm: MxFarm, lock_dir: Path, *, egress: str = "", proxy: str = "") -> Prober:
    """The engine's prober on its own (no Django): the farm's port, the loopback resolver, three
    sessions an address, through `egress` (VERIFIER_SMTP_EGRESS's form; none: direct) or `proxy`."""
    return Prober(
        config=SmtpConfig(helo=HELO, mail_from="v@deep-sender.net", port=farm.port, proxy=proxy),
        resolve=host_resolver(ResolverConfig(nameservers=(dns.address,), timeout=0.5, lifetime=1.0)),
        allowed=lambda address: True,
        slots=HostSlots(lock_dir, 3),
        egresses=parse_egresses(egress),
    )
