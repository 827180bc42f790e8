"""The SMTP dialogue of deep verification: one session with one MX address.

banner, EHLO, STARTTLS when offered (no certificate check, as MTAs do), MAIL FROM, RCPT TO each
recipient, QUIT. Never DATA, never VRFY. Domains go on the wire in their IDNA form (`xn--…`); a
mailbox name outside ASCII is asked with SMTPUTF8 (RFC 6531) when the server offers it and not at
all when it does not (`Meaning.UTF8_UNSUPPORTED`). Our own client (smtp_client.py, which says why not
aiosmtplib) speaks the protocol on a socket we connected ourselves (directly or through a SOCKS5
proxy), so the connection goes to exactly the address the caller vetted. Every reply is waited
for at most `timeout` seconds. What the replies mean is smtp_replies.py's business; which address
to ask, and when, is smtp_scheduling.py's.

A server that offers PIPELINING (RFC 2920) gets its RCPTs in groups of up to PIPELINE_GROUP, one
write each, the first group behind MAIL FROM, and their replies are read back in order; one that
does not gets one command at a time. The catch-all probes go after every address, and a probe
waits for the next group when an address of its domain is still in the current one (whether to
send it depends on their replies): a session's RCPTs take two writes, whatever its domains.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from python_socks.async_.asyncio import Proxy

from verification.engine.smtp_client import Disconnected, Refused, SmtpClient, SmtpError
from verification.engine.smtp_replies import PROBE_NOT_ASKED, PROBE_SPARED, UTF8_NOT_OFFERED, Meaning, Reply, meaning
from verification.engine.syntax import parse

logger = logging.getLogger(__name__)

# RCPTs in one write to a server offering PIPELINING: a session's share is rarely larger, and a
# bounded group keeps what one write asks of a server's input buffer modest.
PIPELINE_GROUP = 100


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
    # sent when the server refused every address of its domain in the session by policy. A batch in
    # parts passes a live view, which each part's join before its recipients reach a session.
    probes: AbstractSet[str] = frozenset()


@dataclass(slots=True)
class Session:
    """What one session learnt: each asked recipient's RCPT reply, or why it ended early."""

    address: str
    answers: dict[str, Reply] = field(default_factory=dict)
    failure: Reply | None = None  # the reply (code 0: no answer) that ended it before every recipient was asked
    failed_at: str = ""  # "connect", "banner", "ehlo", "starttls", "mail", "rcpt"
    asking: bool = False  # past the greeting, its first RCPTs written

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


# What a session asks once its own recipients are answered: more recipients for the same address,
# waited for while the caller may still have some (a batch's later parts); [] when it has none.
More = Callable[[], Awaitable[list[str]]]


async def run_session(
    address: str, recipients: list[str], config: SmtpConfig, more: More | None = None, session: Session | None = None
) -> Session:
    """Ask `address` about each recipient in one session, then about those `more` hands over (folded
    into the transaction, _Dialogue.fold_in). Recipients it did not get to (the server limits
    recipients per session, or cut us off) are missing from `answers`. Never raises: whatever goes
    wrong ends the session with a failure (its recipients are then asked elsewhere or answered
    unreachable), never the caller's batch. `session`: the one to fill (a caller reading its
    `answers` while it runs), else a new one."""
    session = Session(address) if session is None else session
    try:
        sock = await open_socket(address, config)
    except (OSError, TimeoutError, Exception) as exc:  # refused, unreachable, proxy refused, timed out
        session.failure, session.failed_at = Reply(0, f"connect: {exc or type(exc).__name__}"), "connect"
        return session
    client: SmtpClient | None = None
    try:
        client = await SmtpClient.over(sock, config.timeout)
        await _Dialogue(client, session, config).run(recipients, more)
    except Exception as exc:  # a bug of ours: this session fails, not the batch
        logger.exception("SMTP session with %s failed", address)
        session.failure, session.failed_at = Reply(0, f"error: {type(exc).__name__}"), "error"
    finally:
        if client is not None:
            client.close()
        else:
            sock.close()
    return session


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """STARTTLS without a certificate check, as MTAs do: one context for every session (a default
    one per session would read the system's CA store for nothing, about 16 ms of CPU each)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class _Dialogue:
    """One session's commands after the connection: greeting, EHLO, STARTTLS, the transaction."""

    def __init__(self, client: SmtpClient, session: Session, config: SmtpConfig) -> None:
        self.client, self.session, self.config = client, session, config
        self.step = "banner"  # where a failure happened (Session.failed_at)
        self.wire: dict[str, str] = {}  # each recipient asked: its wire form
        self.utf8 = False  # the transaction asked for SMTPUTF8
        self.in_transaction = 0  # RCPTs the current transaction took
        self.limit = 0  # RCPTs a transaction takes, once the server refused one as one too many
        self.mail_sent = False
        self.meanings: dict[str, set[Meaning]] = {}  # each domain asked: the meanings of its replies so far
        self.counted = 0  # the session's answers counted in `meanings` (they are only ever added)

    async def run(self, recipients: list[str], more: More | None) -> None:
        try:
            await self._greet()
            self.wire = _wire_forms(recipients)
            askable = self._askable(recipients)
            if askable:
                self.step = "mail"
                self.utf8 = not all(self.wire[recipient].isascii() for recipient in askable)
                if await self._ask(askable) and more is not None:
                    await self._fold_in(more)
            with contextlib.suppress(SmtpError, OSError, TimeoutError):
                await self.client.command(b"QUIT", expect=221, timeout=min(self.config.timeout, 2.0))
        except Refused as exc:
            self.session.failure, self.session.failed_at = exc.reply, self.step
        except (SmtpError, OSError, TimeoutError) as exc:
            self.session.failure, self.session.failed_at = self._no_reply(exc), self.step

    async def _greet(self) -> None:
        banner = await self.client.reply()
        if banner.code != 220:
            raise Refused(banner)
        self.step = "ehlo"
        await self.client.ehlo(self.config.helo)
        if "STARTTLS" in self.client.offered:
            self.step = "starttls"
            await self.client.starttls(_tls_context())
            self.step = "ehlo"
            await self.client.ehlo(self.config.helo)  # what the server offers inside TLS (SMTPUTF8 among it)

    def _no_reply(self, exc: BaseException) -> Reply:
        """What ended the session without a reply we could read. A server that hangs up among the
        RCPTs, having answered some, sent the 421 RFC 5321 asks of it between two commands (Postfix
        after `smtpd_hard_error_limit` rejects: "421 4.7.0 Error: too many errors") or none: it is
        read as that 421, so the recipients left are asked again in a new session rather than
        judged unreachable."""
        if self.step == "rcpt" and self.session.answers and isinstance(exc, Disconnected):
            count = len(self.session.answers)
            return Reply(421, f"4.7.0 the server closed the session after {count} recipients")
        return Reply(0, f"{self.step}: {exc or type(exc).__name__}")

    def _askable(self, recipients: list[str]) -> list[str]:
        """The recipients this server can be asked about: all when it offers SMTPUTF8, else those whose
        mailbox name is ASCII (the others are answered UTF8_NOT_OFFERED here)."""
        if "SMTPUTF8" in self.client.offered:
            return recipients
        answers = self.session.answers
        for recipient in recipients:
            if not self.wire[recipient].isascii():
                answers[recipient] = UTF8_NOT_OFFERED
        return [recipient for recipient in recipients if recipient not in answers]

    async def _ask(self, recipients: list[str]) -> bool:
        """RCPT TO each, in groups (module docstring). A recipient refused as one too many gets a
        fresh transaction (RSET, MAIL FROM), with those after it in its group; refused again as the
        first of one, the session stops there: the caller asks it, and those after it, in sessions
        of their own. Once a transaction met the server's limit, the next is begun before a group
        would pass it. The probes go last (each still after its domain's addresses): dealt domain by
        domain, each probe would wait for its domain's replies, and a session's RCPTs take a write
        and a wait a domain rather than two in all. Returns whether the server may take more
        (neither that nor a 421)."""
        probes = self.config.probes
        waiting = [r for r in recipients if r not in probes] + [r for r in recipients if r in probes]
        while waiting:
            if self.limit and self.in_transaction >= self.limit:
                await self._fresh_transaction()
            group, waiting = self._group(waiting)
            if not group:
                continue
            unanswered = await self._send(group)
            if unanswered is None:
                return False
            waiting = unanswered + waiting
        return True

    def _group(self, waiting: list[str]) -> tuple[list[str], list[str]]:
        """The next RCPTs to send in one write, and those left. A probe whose answer its domain's
        replies already give is answered here (_probes_known); one whose domain is still being asked
        in this group waits for the next."""
        size = PIPELINE_GROUP if "PIPELINING" in self.client.offered else 1
        if self.limit:
            size = min(size, self.limit - self.in_transaction)
        group: list[str] = []
        domains: set[str] = set()
        known: dict[str, Reply] | None = None  # read once a write, at its first probe
        for index, recipient in enumerate(waiting):
            domain = self.wire[recipient].rpartition("@")[2]
            if recipient in self.config.probes:
                if domain in domains:
                    return group, waiting[index:]
                known = self._probes_known() if known is None else known
                if domain in known:
                    self.session.answers[recipient] = known[domain]
                    continue
            if len(group) == size:
                return group, waiting[index:]
            group.append(recipient)
            domains.add(domain)
        return group, []

    def _probes_known(self) -> dict[str, Reply]:
        """What each domain's probe would answer, where the session's replies about the domain's
        addresses already say it, so it is not sent: refused by policy when every one was (554 5.7.1
        and the like: the probe would be refused too, and tell nothing); refused as unknown when
        one was (a server that refuses an address it does not know is no catch-all)."""
        answers, meanings = self.session.answers, self.meanings
        for recipient, reply in itertools.islice(answers.items(), self.counted, None):
            meanings.setdefault(self.wire[recipient].rpartition("@")[2], set()).add(meaning(reply))
        self.counted = len(answers)
        known: dict[str, Reply] = {}
        for domain, found in meanings.items():
            if Meaning.NO_MAILBOX in found:
                known[domain] = PROBE_SPARED
            elif found == {Meaning.BLOCKED}:
                known[domain] = PROBE_NOT_ASKED
        return known

    async def _send(self, group: list[str]) -> list[str] | None:
        """One write of RCPTs (behind MAIL FROM in the transaction's first, where pipelining), their
        replies read together. Returns the recipients to send again in a fresh transaction (refused
        as one too many after others were taken), or None when the session must stop."""
        client, answers = self.client, self.session.answers
        mail: list[bytes] = []  # MAIL FROM, when it goes in this write
        if not self.mail_sent and "PIPELINING" in client.offered:
            mail = [self._mail()]
        elif not self.mail_sent:
            await self._mail_alone()
        client.write(*mail, *(b"RCPT TO:<" + self.wire[recipient].encode() + b">" for recipient in group))
        self.session.asking = True
        replies, error = await client.replies(len(mail) + len(group))
        if mail:
            self._mail_taken(replies.pop(0) if replies else None, error)
        for index, (recipient, reply) in enumerate(zip(group, replies, strict=False)):
            found = meaning(reply)
            if found is Meaning.TOO_MANY_RECIPIENTS:  # and those after it in the group met a full transaction
                if error is not None:  # cut off before the rest of the group was answered
                    raise error
                if not self.in_transaction:  # refused as the first of a transaction
                    return None
                self.limit = self.in_transaction
                await self._fresh_transaction()
                return group[index:]
            if found is Meaning.TOO_MANY_CONNECTIONS:  # 421: the server is closing the session
                self.session.failure, self.session.failed_at = reply, "rcpt"
                return None
            answers[recipient] = reply
            self.in_transaction += 1
        if error is not None:  # the replies stopped coming: the session ends as without pipelining
            raise error
        return []

    def _mail(self) -> bytes:
        """MAIL FROM, asking for SMTPUTF8 when a recipient of this session needs it (and it was offered)."""
        self.mail_sent = True
        return b"MAIL FROM:<" + self.config.mail_from.encode() + (b"> SMTPUTF8" if self.utf8 else b">")

    def _mail_taken(self, reply: Reply | None, error: Exception | None = None) -> None:
        """MAIL FROM's reply: a refusal (or none: `error`) ends the session at "mail"."""
        if reply is None:
            raise error or Disconnected("no reply to MAIL FROM")
        if not 200 <= reply.code < 300:
            raise Refused(reply)
        self.step = "rcpt"

    async def _fresh_transaction(self) -> None:
        """RSET and MAIL FROM: a new transaction in the same session, for the recipients the last one
        had no room for."""
        await self.client.command(b"RSET")
        self.step = "mail"
        await self._mail_alone()
        self.in_transaction = 0

    async def _mail_alone(self) -> None:
        """MAIL FROM on its own, and its reply."""
        self.client.write(self._mail())
        self._mail_taken(await self.client.reply())

    async def _fold_in(self, more: More) -> None:
        """RCPT TO the recipients `more` hands over while the server takes them: those of a session to
        the same address turned away for our rate (Postfix's connection rate limit lets two sessions a
        minute in, each able to carry a thousand recipients), and a batch's later parts. ASCII ones
        only, unless this transaction asked for SMTPUTF8. Those it does not get to stay unanswered:
        the caller asks them in a session of their own. Their wire forms join the session's `wire`,
        which then names every recipient it asked."""
        answers = self.session.answers
        while handed := await more():
            extra = [r for r in handed if r not in answers and (self.utf8 or r.isascii())]
            if not extra:
                continue
            self.wire.update(_wire_forms(extra))
            if not await self._ask(extra) or any(recipient not in answers for recipient in extra):
                return  # the server takes no more in this session
