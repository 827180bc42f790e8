"""The SMTP dialogue of deep verification: one session with one MX address.

banner, EHLO, STARTTLS when offered (no certificate check, as MTAs do), MAIL FROM, RCPT TO each
recipient, QUIT. Never DATA, never VRFY. Domains go on the wire in their IDNA form (`xn--…`); a
mailbox name outside ASCII is asked with SMTPUTF8 (RFC 6531) when the server offers it and not at
all when it does not (`Meaning.UTF8_UNSUPPORTED`). aiosmtplib speaks the protocol; it is handed a socket we
connected ourselves (directly or through a SOCKS5 proxy), so the connection goes to exactly the
address the caller vetted. Every step waits at most `timeout` seconds. What the replies mean is
smtp_replies.py's business; which address to ask, and when, is smtp_scheduling.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field

import aiosmtplib
from python_socks.async_.asyncio import Proxy

from verification.engine.smtp_replies import PROBE_NOT_ASKED, UTF8_NOT_OFFERED, Meaning, Reply, meaning
from verification.engine.syntax import parse

logger = logging.getLogger(__name__)

# A plain address (dot-atom mailbox name, ASCII domain) goes on the wire as it is: aiosmtplib's
# rcpt() re-parses every recipient with email.utils.parseaddr, a third of a session's CPU in a
# 2,000-row profile; anything else (quoted, non-ASCII) still takes that road.
_PLAIN = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+")


# A session's outcome by the meaning of what ended it (Session.outcome); anything else: unreachable.
_OUTCOMES = {
    Meaning.BLOCKED: "blocked",
    Meaning.TOO_MANY_CONNECTIONS: "backed_off",
    Meaning.TRY_AGAIN: "backed_off",
}


@dataclass(frozen=True, slots=True)
class SmtpConfig:
    helo: str = "localhost"
    mail_from: str = ""
    port: int = 25
    timeout: float = 10.0
    proxy: str = ""  # "socks5://host:port": every connection goes through it
    bind: str = ""  # the local source address to connect from (an egress, egress.py); "": the system's choice
    # The catch-all probes among the recipients (asked after their domain's addresses): one is not
    # sent when the server refused every address of its domain in the session by policy.
    probes: frozenset[str] = frozenset()


@dataclass(slots=True)
class Session:
    """What one session learnt: each asked recipient's RCPT reply, or why it ended early."""

    address: str
    answers: dict[str, Reply] = field(default_factory=dict)
    failure: Reply | None = None  # the reply (code 0: no answer) that ended it before every recipient was asked
    failed_at: str = ""  # "connect", "banner", "ehlo", "starttls", "mail", "rcpt"

    @property
    def refused_at_connect(self) -> bool:
        """Refused, silent or 4xx before the first command: the next MX host may do better."""
        return self.failed_at in ("connect", "banner") and (self.failure is None or self.failure.code < 500)

    @property
    def refusal(self) -> Reply | None:
        """What turned the session away (the failure, or a policy refusal of a recipient), if anything."""
        if self.failure is not None:
            return self.failure
        return next((reply for reply in self.answers.values() if meaning(reply) is Meaning.BLOCKED), None)

    @property
    def outcome(self) -> str:
        """One word for the metrics and the staff dashboard: completed, blocked (a policy or
        blocklist refusal at any step), backed_off (turned away for now: a rate limit, 421, too
        many connections, a 4xx "try again later"), or unreachable (no answer)."""
        if self.failure is None:
            refused = any(meaning(reply) is Meaning.BLOCKED for reply in self.answers.values())
            return "blocked" if refused else "completed"
        found = meaning(self.failure, recipient=False)
        return _OUTCOMES.get(found, "unreachable")


async def open_socket(address: str, config: SmtpConfig) -> socket.socket:
    """A connected socket to `address`, directly or through the SOCKS5 proxy (no name lookup)."""
    if config.proxy:
        return await Proxy.from_url(config.proxy).connect(address, config.port, timeout=config.timeout)
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        if config.bind:
            sock.bind((config.bind, 0))
        await asyncio.wait_for(asyncio.get_running_loop().sock_connect(sock, (address, config.port)), config.timeout)
    except BaseException:
        sock.close()
        raise
    return sock


def wire_form(recipient: str) -> str:
    """The recipient as it goes on the wire: its domain in IDNA form, the mailbox name as it is."""
    address = parse(recipient)
    if address is None:
        return recipient
    return f"{address.local}@{address.ascii_domain}"


def _wire_forms(recipients: list[str]) -> dict[str, str]:
    """Each recipient's wire form, read once a session (each is asked about twice or more)."""
    return {recipient: wire_form(recipient) for recipient in recipients}


async def run_session(
    address: str, recipients: list[str], config: SmtpConfig, more: Callable[[], list[str]] | None = None
) -> Session:
    """Ask `address` about each recipient in one session, then about those `more` hands over (folded
    into the transaction, _folded_in). Recipients it did not get to (the server limits recipients
    per session, or cut us off) are missing from `answers`. Never raises: whatever goes wrong ends
    the session with a failure (its recipients are then asked elsewhere or answered unreachable),
    never the caller's batch."""
    session = Session(address)
    try:
        sock = await open_socket(address, config)
    except (OSError, TimeoutError, Exception) as exc:  # refused, unreachable, proxy refused, timed out
        session.failure, session.failed_at = Reply(0, f"connect: {exc or type(exc).__name__}"), "connect"
        return session
    client = aiosmtplib.SMTP(
        hostname=address, sock=sock, timeout=config.timeout, local_hostname=config.helo, start_tls=False
    )
    try:
        await _dialogue(client, session, recipients, config, more)
    except Exception as exc:  # a bug of ours or the library's: this session fails, not the batch
        logger.exception("SMTP session with %s failed", address)
        session.failure, session.failed_at = Reply(0, f"error: {type(exc).__name__}"), "error"
    finally:
        client.close()
    return session


async def _dialogue(
    client: aiosmtplib.SMTP,
    session: Session,
    recipients: list[str],
    config: SmtpConfig,
    more: Callable[[], list[str]] | None,
) -> None:
    step = "banner"
    try:
        await client.connect()
        step = "ehlo"
        await client.ehlo()
        if client.supports_extension("starttls"):
            step = "starttls"
            await client.starttls(tls_context=_tls_context())
            step = "ehlo"
            await client.ehlo()  # what the server offers inside TLS (SMTPUTF8 among it)
        wire = _wire_forms(recipients)
        askable = _askable(client, session, recipients, wire)
        if askable:
            step = "mail"
            utf8 = not all(wire[recipient].isascii() for recipient in askable)
            await _mail(client, config, utf8=utf8)
            step = "rcpt"
            await _recipients(client, session, askable, wire, config, utf8=utf8)
            if more is not None:
                await _folded_in(client, session, more, wire, config, utf8=utf8)
        with contextlib.suppress(aiosmtplib.SMTPException, OSError, TimeoutError):
            await client.quit(timeout=min(config.timeout, 2.0))
    except aiosmtplib.SMTPResponseException as exc:
        session.failure, session.failed_at = Reply(exc.code, exc.message), step
    except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
        session.failure, session.failed_at = _no_reply(step, exc, session), step


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """STARTTLS without a certificate check, as MTAs do: one context for every session. aiosmtplib
    builds a default one per session otherwise, reading the system's CA store for nothing (about
    16 ms of CPU a session: five seconds over a 2,000-row job's 300 sessions)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _no_reply(step: str, exc: BaseException, session: Session) -> Reply:
    """What ended the session without a reply we could read. A server that hangs up among the
    RCPTs, having answered some, sent the 421 RFC 5321 asks of it between two commands (Postfix
    after `smtpd_hard_error_limit` rejects: "421 4.7.0 Error: too many errors"), and aiosmtplib drops
    a reply nobody asked for: it is read as that 421, so the recipients left are asked again in a new
    session rather than judged unreachable."""
    if step == "rcpt" and session.answers and isinstance(exc, aiosmtplib.SMTPServerDisconnected):
        return Reply(421, f"4.7.0 the server closed the session after {len(session.answers)} recipients")
    return Reply(0, f"{step}: {exc or type(exc).__name__}")


def _askable(client: aiosmtplib.SMTP, session: Session, recipients: list[str], wire: dict[str, str]) -> list[str]:
    """The recipients this server can be asked about: all when it offers SMTPUTF8, else those whose
    mailbox name is ASCII (the others are answered UTF8_NOT_OFFERED here)."""
    if client.supports_extension("smtputf8"):
        return recipients
    for recipient in recipients:
        if not wire[recipient].isascii():
            session.answers[recipient] = UTF8_NOT_OFFERED
    return [recipient for recipient in recipients if recipient not in session.answers]


async def _recipients(
    client: aiosmtplib.SMTP,
    session: Session,
    recipients: list[str],
    wire: dict[str, str],
    config: SmtpConfig,
    *,
    utf8: bool,
) -> None:
    """RCPT TO each. A further recipient refused as one too many gets a fresh transaction (RSET,
    MAIL FROM, with SMTPUTF8 as the first one asked: `utf8`); refused again as the first of one,
    the session stops there: the caller asks it, and those after it, in sessions of their own."""
    in_transaction = 0
    for recipient in recipients:
        if recipient in config.probes and _refused_by_policy(session, wire, wire[recipient]):
            session.answers[recipient] = PROBE_NOT_ASKED
            continue
        reply = await _rcpt(client, wire[recipient])
        if meaning(reply) is Meaning.TOO_MANY_RECIPIENTS and in_transaction:
            await client.rset()
            await _mail(client, config, utf8=utf8)
            in_transaction = 0
            reply = await _rcpt(client, wire[recipient])
        found = meaning(reply)
        if found is Meaning.TOO_MANY_RECIPIENTS:
            return
        if found is Meaning.TOO_MANY_CONNECTIONS:  # 421: the server is closing the session
            session.failure, session.failed_at = reply, "rcpt"
            return
        session.answers[recipient] = reply
        in_transaction += 1


def _refused_by_policy(session: Session, wire: dict[str, str], probe: str) -> bool:
    """Whether the session asked about addresses of the probe's domain and every one was refused
    by policy (554 5.7.1 and the like): the probe would be refused too, and tell nothing."""
    domain = probe.rpartition("@")[2]
    same = [reply for recipient, reply in session.answers.items() if wire[recipient].rpartition("@")[2] == domain]
    return bool(same) and all(meaning(reply) is Meaning.BLOCKED for reply in same)


async def _folded_in(
    client: aiosmtplib.SMTP,
    session: Session,
    more: Callable[[], list[str]],
    wire: dict[str, str],
    config: SmtpConfig,
    *,
    utf8: bool,
) -> None:
    """RCPT TO the recipients `more` hands over while the server takes them: those of a session to
    the same address turned away for our rate (Postfix's connection rate limit lets two sessions a
    minute in, each able to carry a thousand recipients). ASCII ones only, unless this transaction
    asked for SMTPUTF8. Those it does not get to stay unanswered: their own session asks them.
    Their wire forms join the session's `wire`, which then names every recipient it asked."""
    while session.failure is None and (extra := [r for r in more() if r not in session.answers]):
        extra = [recipient for recipient in extra if utf8 or recipient.isascii()]
        wire.update(_wire_forms(extra))
        await _recipients(client, session, extra, wire, config, utf8=utf8)
        if any(recipient not in session.answers for recipient in extra):
            return  # the server takes no more in this session


async def _mail(client: aiosmtplib.SMTP, config: SmtpConfig, *, utf8: bool) -> None:
    """MAIL FROM, asking for SMTPUTF8 when a recipient of this session needs it (and it was offered)."""
    await client.mail(config.mail_from, options=["SMTPUTF8"] if utf8 else None)


async def _rcpt(client: aiosmtplib.SMTP, wire: str) -> Reply:
    """RCPT TO the recipient's wire form."""
    if _PLAIN.fullmatch(wire):
        response = await client.execute_command(b"RCPT", b"TO:<" + wire.encode("ascii") + b">")
        return Reply(response.code, response.message)
    try:
        response = await client.rcpt(wire, encoding="utf-8" if not wire.isascii() else "ascii")
    except aiosmtplib.SMTPRecipientRefused as exc:
        return Reply(exc.code, exc.message)
    return Reply(response.code, response.message)
