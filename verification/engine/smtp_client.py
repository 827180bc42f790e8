"""The wire of deep verification's SMTP sessions: a small client of our own on asyncio.Protocol.

Why not aiosmtplib, as the project otherwise prefers a library: it cannot pipeline (RFC 2920; its
protocol must be awaited once per command, or replies are lost), and a deep session through it
cost about 42 µs of CPU per command against 8 µs now, pipelined (bench/smtp_cost.py and
bench/README.md, "Deep sessions on the wire"); one command at a time the two cost about the same
(17 µs). A 20,000-row deep batch sends some 25,000 commands on a worker that was CPU-bound. We need
only a client's half of a few commands (EHLO, STARTTLS, MAIL, RCPT, RSET, QUIT), never DATA, and
the socket is always one we connected (smtp.open_socket: directly, bound to an egress, or a proxy's).

Replies are parsed as RFC 5321 section 4.2 says (three digits, "-" for a line to follow), lines
joined by "\n", and queue in order: a pipelined group's replies are read together with `replies()`,
which wakes its reader once when the last has come, not once a reply (a server answers a group's
RCPTs one at a time, each in a packet of its own). Every wait has one timer (loop.call_at), not
an asyncio.wait_for; each reply may take up to the timeout after the one before it.
"""

from __future__ import annotations

import asyncio
import collections
import socket
import ssl

from verification.engine.smtp_replies import Reply

MAX_LINE = 8192  # a reply line longer than this is no SMTP server's (aiosmtplib's limit too)
MAX_REPLY_LINES = 100  # a multi-line reply (EHLO's offer) of more lines than this: not SMTP either
MAX_QUEUED = 1000  # replies nobody asked for yet: more is a flood, not an answer


class SmtpError(Exception):
    """The server broke the protocol or the connection, or did not answer in time."""


class Disconnected(SmtpError):
    """The server closed the connection."""


class Refused(SmtpError):
    """A reply other than the one the command needs to go on (a non-220 banner, a refused MAIL FROM)."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(f"{reply.code} {reply.text}")
        self.reply = reply


class _Wire(asyncio.Protocol):
    """The bytes in: complete replies queue in `replies`; a reader waiting for `wanted` of them is
    woken when they are there or the connection ends."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.lines: list[str] = []  # the reply being read, until its last line
        self.replies: collections.deque[Reply] = collections.deque()
        self.last_reply_at = 0.0  # the event loop's time when the last reply was complete
        self.ended: SmtpError | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.wanted = 0
        self.transport: asyncio.Transport | None = None
        self.clock = asyncio.get_running_loop().time

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        buffer += data
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            self._line(bytes(buffer[start:end]))
            start = end + 1
        del buffer[:start]
        if len(buffer) > MAX_LINE:
            self._end(SmtpError("reply line too long"))
        if len(self.replies) >= self.wanted:
            self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self._end(Disconnected(f"connection lost: {exc}" if exc else "the server closed the connection"))

    def _line(self, line: bytes) -> None:
        if self.ended is not None:
            return
        code = line[:3]
        if len(line) > MAX_LINE or not code.isdigit() or len(self.lines) >= MAX_REPLY_LINES:
            self._end(SmtpError(f"not an SMTP reply: {line[:80]!r}"))
            return
        self.lines.append(line[4:].strip(b" \t\r").decode("utf-8", "surrogateescape"))
        if line[3:4] != b"-":
            self.replies.append(Reply(int(code), "\n".join(self.lines)))
            self.lines = []
            self.last_reply_at = self.clock()
            if len(self.replies) > MAX_QUEUED:
                self._end(SmtpError("more replies than commands"))

    def _end(self, error: SmtpError) -> None:
        if self.ended is None:
            self.ended = error
        if self.transport is not None:
            self.transport.abort()
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


class SmtpClient:
    """One session's wire: `write` commands (one, or a pipelined group), `reply()` each in order."""

    def __init__(self, wire: _Wire, timeout: float) -> None:
        self._wire = wire
        self.timeout = timeout
        self.offered: frozenset[str] = frozenset()  # EHLO's keywords, upper case ("PIPELINING", ...)

    @classmethod
    async def over(cls, sock: socket.socket, timeout: float) -> SmtpClient:
        """A client on a socket already connected (smtp.open_socket: directly, bound, or a proxy's)."""
        loop = asyncio.get_running_loop()
        _, wire = await loop.create_connection(_Wire, sock=sock)
        return cls(wire, timeout)

    def write(self, *commands: bytes) -> None:
        """Send the commands in one write (a pipelined group when more than one), CRLF added."""
        if self._wire.ended is not None:
            raise self._wire.ended
        if any(b"\r" in command or b"\n" in command for command in commands):
            raise ValueError("a line break inside an SMTP command")
        assert self._wire.transport is not None
        self._wire.transport.write(b"\r\n".join(commands) + b"\r\n")

    async def reply(self, timeout: float | None = None) -> Reply:
        """The next reply, waiting at most `timeout` (default: the client's) seconds for it."""
        got, error = await self.replies(1, timeout)
        if error is not None:
            raise error
        return got[0]

    async def replies(self, count: int, timeout: float | None = None) -> tuple[list[Reply], Exception | None]:
        """The next `count` replies, each waited for at most `timeout` (default: the client's)
        seconds after the one before; fewer when the connection ended or a reply was late, with
        the error that says why. A 421 (the server closes the channel) is returned, and the
        connection dropped after it."""
        wire, error = self._wire, None
        if len(wire.replies) < count:
            try:
                await self._wait(count, self.timeout if timeout is None else timeout)
            except (SmtpError, TimeoutError) as exc:
                error = exc
        got = [wire.replies.popleft() for _ in range(min(count, len(wire.replies)))]
        if any(reply.code == 421 for reply in got):
            self.close()
        return got, error

    async def command(self, command: bytes, *, expect: int = 250, timeout: float | None = None) -> Reply:
        """Send one command and read its reply; raise Refused when its code is not `expect`."""
        self.write(command)
        reply = await self.reply(timeout)
        if reply.code != expect:
            raise Refused(reply)
        return reply

    async def ehlo(self, name: str) -> None:
        """EHLO, keeping what the server offers (its reply's lines after the first)."""
        reply = await self.command(b"EHLO " + name.encode("ascii"))
        self.offered = frozenset(line.split(" ", 1)[0].upper() for line in reply.text.split("\n")[1:])

    async def starttls(self, context: ssl.SSLContext) -> None:
        """STARTTLS and the handshake; what was offered before it is forgotten (RFC 3207)."""
        await self.command(b"STARTTLS", expect=220)
        wire, loop = self._wire, asyncio.get_running_loop()
        # Nothing sent in clear after the 220 may be read as if inside TLS: neither the bytes
        # waiting nor replies already queued (a STARTTLS response injection).
        wire.buffer.clear()
        wire.replies.clear()
        wire.lines = []
        assert wire.transport is not None
        transport = await loop.start_tls(wire.transport, wire, context, ssl_handshake_timeout=self.timeout)
        if transport is None:
            raise Disconnected("the connection closed during the TLS handshake")
        wire.transport = transport
        self.offered = frozenset()

    def close(self) -> None:
        """Drop the connection (no QUIT); what is read or written after it raises Disconnected."""
        self._wire._end(Disconnected("the session was closed"))

    async def _wait(self, count: int, timeout: float) -> None:
        """Until `count` replies are queued, the connection ended, or a reply took more than
        `timeout` seconds after the one before it (or after the wait began). One timer at a time:
        when it fires the wait goes on if replies came meanwhile (a server dripping the lines of
        one reply gets no more time)."""
        wire, loop = self._wire, asyncio.get_running_loop()
        started = loop.time()
        wire.wanted = count
        try:
            while len(wire.replies) < count:
                if wire.ended is not None:
                    raise wire.ended
                deadline = max(started, wire.last_reply_at) + timeout
                if loop.time() >= deadline - 0.001:  # a timer may fire a clock tick early
                    raise TimeoutError("no reply in time")
                wire.waiter = waiter = loop.create_future()
                timer = loop.call_at(deadline, _time_out, waiter)
                try:
                    await waiter
                finally:
                    timer.cancel()
                    wire.waiter = None
        finally:
            wire.wanted = 0


def _time_out(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)  # the wait looks at the time itself
