"""A farm of scripted MX servers on loopback, for deep-verification tests and the benchmark.

Each server listens on its own 127.0.0.x address, all on one port (tests point
VERIFIER_SMTP_PORT at it), and plays one `Script`: which mailboxes exist, what it answers,
how late, and how it limits us (connections, recipients per session, greylisting, a tarpit,
STARTTLS required, a banner naming a blocklist, a connection rate per client as Postfix's anvil
counts it). It speaks SMTP over asyncio streams on a loop
of its own thread, and counts what a test must check: DATA and VRFY commands (must stay 0),
sessions, and the most connections at once per address. It also tells the client's source
address apart (the egresses of docs/deep.md bind 127.0.0.50 and the like): sessions, the most at
once and the EHLO names per (source, address), and it refuses a source in `blocked_sources` with
a blocklist banner, as an MX refuses a listed sending address.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from tempfile import TemporaryDirectory

ACCEPT = "250 2.1.5 OK"
# What a farm server says to a source in MxFarm.blocked_sources (a Spamhaus-style listing).
LISTED = "554 5.7.1 Service unavailable; Client host [{source}] blocked using zen.spamhaus.org"
UNKNOWN_USER = "550 5.1.1 The email account that you tried to reach does not exist"
# What Postfix's smtpd answers at the banner past smtpd_client_connection_rate_limit.
RATE_LIMITED = "421 4.7.0 mx.farm Error: too many connections from {source}"


@dataclass
class Script:
    mailboxes: dict[str, str] = field(default_factory=dict)  # local part -> RCPT reply
    others: str = UNKNOWN_USER  # RCPT reply for any other local part (ACCEPT: a catch-all domain)
    banner: str = "220 mx.farm ESMTP ready"
    mail_reply: str = "250 2.1.0 OK"
    delay: float = 0.0  # every reply this many seconds late
    tarpit: bool = False  # accept the connection, then say nothing
    max_connections: int = 0  # more at once get "421 4.7.0 Too many connections"; 0: no cap
    max_recipients: int = 0  # per session; further ones get "452 4.5.3 Too many recipients"; 0: no cap
    # Per transaction (MAIL FROM begins one), as Postfix's smtpd_recipient_limit: further ones get 452 4.5.3.
    transaction_recipients: int = 0
    pipelining: bool = True  # offer PIPELINING (RFC 2920)
    greylist_seconds: float = 0.0  # each recipient gets 450 until this long after it was first asked
    starttls: bool = False  # offer STARTTLS
    starttls_required: bool = False  # MAIL FROM before STARTTLS gets 530
    starttls_injected: str = ""  # a reply sent in clear in the same write as STARTTLS's 220 (an attack)
    smtputf8: bool = False  # offer SMTPUTF8 (RFC 6531); a non-ASCII command without it gets 553 5.6.7
    # Postfix's anvil: at most `rate_limit` connections per client source in a window of
    # `rate_window` seconds, begun by the first (refused ones count too); more get RATE_LIMITED. 0: none.
    rate_limit: int = 0
    rate_window: float = 60.0

    def rcpt_reply(self, local: str) -> str:
        return self.mailboxes.get(local, self.others)


@dataclass
class Stats:
    commands: Counter[str] = field(default_factory=Counter)
    sessions: Counter[str] = field(default_factory=Counter)  # address -> sessions opened
    active: Counter[str] = field(default_factory=Counter)
    peak: Counter[str] = field(default_factory=Counter)  # address -> most connections at once
    recipients: list[str] = field(default_factory=list)  # every RCPT TO, in order
    tls_sessions: int = 0
    by_source: Counter[tuple[str, str]] = field(default_factory=Counter)  # (source, address) -> sessions
    active_by_source: Counter[tuple[str, str]] = field(default_factory=Counter)
    peak_by_source: Counter[tuple[str, str]] = field(default_factory=Counter)  # (source, address) -> most at once
    helos: Counter[tuple[str, str]] = field(default_factory=Counter)  # (source, EHLO name) -> times said
    rate_refused: Counter[str] = field(default_factory=Counter)  # address -> connections refused by its rate limit
    # address -> commands answered while the next command had already arrived (pipelined: RFC 2920)
    pipelined: Counter[str] = field(default_factory=Counter)
    # (source, address) -> when each connection came (time.monotonic()), refused or not
    connected_at: dict[tuple[str, str], list[float]] = field(default_factory=dict)


class MxFarm:
    def __init__(self, scripts: dict[str, Script], *, port: int = 0) -> None:
        """`port`: the one every farm address listens on; 0 finds one free on all of them."""
        self.scripts = scripts
        self.stats = Stats()
        self.first_asked: dict[tuple[str, str], float] = {}
        self.windows: dict[tuple[str, str], tuple[float, int]] = {}  # (source, address) -> (start, connections)
        self.blocked_sources: set[str] = set()  # client addresses answered with LISTED
        self.wanted_port = port
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mx-farm", daemon=True)
        self._servers: list[asyncio.Server] = []

    def __enter__(self) -> MxFarm:
        if any(script.starttls for script in self.scripts.values()):
            _server_tls()  # made before any session, not inside one
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def reset(self) -> None:
        self.stats = Stats()
        self.first_asked.clear()
        self.windows.clear()
        self.blocked_sources.clear()

    def greylist_over(self) -> None:
        """Every recipient asked so far is let through from now on, as if its script's
        `greylist_seconds` had passed: a test moves on at once instead of sleeping them out."""
        for asked in self.first_asked:
            self.first_asked[asked] = float("-inf")

    async def _start(self) -> None:
        for _ in range(1 if self.wanted_port else 20):  # a port free on every address of the farm
            try:
                await self._bind_all()
                return
            except OSError:
                await self._stop()
        raise OSError("no port free on every farm address")

    async def _bind_all(self) -> None:
        self.port = self.wanted_port
        for address in self.scripts:
            server = await asyncio.start_server(
                lambda r, w, a=address: self._session(a, r, w), address, self.port, reuse_address=True
            )
            self.port = server.sockets[0].getsockname()[1]
            self._servers.append(server)

    async def _stop(self) -> None:
        for server in self._servers:
            server.close()
            with contextlib.suppress(Exception):
                server.close_clients()
        self._servers.clear()
        # Sessions still open (a tarpit's) end here, not after the loop has closed under them.
        sessions = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in sessions:
            task.cancel()
        await asyncio.gather(*sessions, return_exceptions=True)

    async def _session(self, address: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        script, stats = self.scripts[address], self.stats
        pair = (writer.get_extra_info("peername")[0], address)
        stats.sessions[address] += 1
        stats.by_source[pair] += 1
        stats.active[address] += 1
        stats.active_by_source[pair] += 1
        stats.peak[address] = max(stats.peak[address], stats.active[address])
        stats.peak_by_source[pair] = max(stats.peak_by_source[pair], stats.active_by_source[pair])
        stats.connected_at.setdefault(pair, []).append(time.monotonic())
        try:
            if pair[0] in self.blocked_sources:
                await self._say(writer, script, LISTED.format(source=pair[0]))
            elif self._over_rate(script, pair):
                stats.rate_refused[address] += 1
                await self._say(writer, script, RATE_LIMITED.format(source=pair[0]))
            else:
                await self._converse(address, script, reader, writer)
        except (OSError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            stats.active[address] -= 1
            stats.active_by_source[pair] -= 1
            writer.close()

    def _over_rate(self, script: Script, pair: tuple[str, str]) -> bool:
        """Count the connection in its source's window (anvil's: a new one begins with the first
        connection after the last has run out) and say whether it is one too many."""
        if not script.rate_limit:
            return False
        now = time.monotonic()
        start, count = self.windows.get(pair, (now, 0))
        if now - start >= script.rate_window:
            start, count = now, 0
        self.windows[pair] = (start, count + 1)
        return count + 1 > script.rate_limit

    async def _converse(
        self, address: str, script: Script, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        if script.tarpit:
            await reader.read()  # until the client gives up
            return
        if script.max_connections and self.stats.active[address] > script.max_connections:
            await self._say(writer, script, "421 4.7.0 Too many connections from your IP, try again later")
            return
        await self._say(writer, script, script.banner)
        if not script.banner.startswith("220"):
            return
        state = {"tls": False, "rcpts": 0, "utf8": False, "in_transaction": 0}
        while line := (await reader.readline()).decode("utf-8", "replace").strip():
            verb, _, argument = line.partition(" ")
            if not line.isascii() and not (script.smtputf8 and state["utf8"]):
                self.stats.commands[verb.upper()] += 1
                await self._say(writer, script, "553 5.6.7 Non-ASCII address without SMTPUTF8")
                continue
            self.stats.commands[verb.upper()] += 1
            if verb.upper() in ("EHLO", "HELO"):
                self.stats.helos[(writer.get_extra_info("peername")[0], argument)] += 1
            reply = self._reply(address, script, state, verb.upper(), argument)
            if verb.upper() == "STARTTLS" and script.starttls:
                await self._say(writer, script, f"{reply}\r\n{script.starttls_injected}".rstrip())
                await writer.start_tls(_server_tls())
                state["tls"] = True
                self.stats.tls_sessions += 1
                continue
            await self._say(writer, script, reply)
            if getattr(reader, "_buffer", b""):  # StreamReader has no public peek: the next command is here
                self.stats.pipelined[address] += 1
            if verb.upper() == "QUIT" or reply.startswith("421"):
                return

    def _reply(self, address: str, script: Script, state: dict[str, int], verb: str, argument: str) -> str:
        if verb in ("EHLO", "HELO"):
            offer = "250-STARTTLS\r\n" if script.starttls and not state["tls"] else ""
            offer += "250-SMTPUTF8\r\n" if script.smtputf8 else ""
            offer += "250-PIPELINING\r\n" if script.pipelining else ""
            return f"250-mx.farm hello\r\n{offer}250 8BITMIME"
        if verb == "MAIL":
            if script.starttls_required and not state["tls"]:
                return "530 5.7.0 Must issue a STARTTLS command first"
            state["utf8"] = script.smtputf8 and "SMTPUTF8" in argument.upper()
            state["in_transaction"] = 0
            return script.mail_reply
        if verb == "RCPT":
            return self._rcpt(address, script, state, argument)
        replies = {"RSET": "250 2.0.0 OK", "NOOP": "250 2.0.0 OK", "QUIT": "221 2.0.0 Bye", "STARTTLS": "220 2.0.0 Go"}
        if verb in replies:
            return replies[verb]
        return {"DATA": "554 5.5.1 No DATA here", "VRFY": "502 5.5.1 VRFY disabled"}.get(verb, "500 5.5.2 What?")

    def _rcpt(self, address: str, script: Script, state: dict[str, int], argument: str) -> str:
        recipient = argument.partition(":")[2].strip().strip("<>").lower()
        self.stats.recipients.append(recipient)
        if script.max_recipients and state["rcpts"] >= script.max_recipients:
            return "452 4.5.3 Too many recipients"
        if script.transaction_recipients and state["in_transaction"] >= script.transaction_recipients:
            return "452 4.5.3 Error: too many recipients"
        state["rcpts"] += 1
        state["in_transaction"] += 1
        if script.greylist_seconds:
            first = self.first_asked.setdefault((address, recipient), time.monotonic())
            if time.monotonic() - first < script.greylist_seconds:
                return "450 4.2.0 Recipient address rejected: Greylisted, try again later"
        return script.rcpt_reply(recipient.partition("@")[0])

    @staticmethod
    async def _say(writer: asyncio.StreamWriter, script: Script, reply: str) -> None:
        if script.delay:
            await asyncio.sleep(script.delay)  # not a wait: the script's reply latency
        writer.write(reply.encode() + b"\r\n")
        await writer.drain()


@cache
def _server_tls() -> ssl.SSLContext:
    """A self-signed certificate, made once: the verifier checks none (opportunistic TLS)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "mx.farm")])
    now = datetime.datetime.now(datetime.UTC)
    builder = x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
    cert = builder.serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
    signed = cert.sign(key, hashes.SHA256())
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    with TemporaryDirectory(prefix="mx-farm-") as folder:  # ssl loads a chain from files only
        (Path(folder) / "cert.pem").write_bytes(signed.public_bytes(serialization.Encoding.PEM))
        (Path(folder) / "key.pem").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        context.load_cert_chain(Path(folder) / "cert.pem", Path(folder) / "key.pem")
    return context
