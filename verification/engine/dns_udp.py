"""The resolvers' one UDP client: a few connected sockets per nameserver, each query sent with an id
no other query in flight on its socket holds, and a datagram taken as an answer only when it comes
on that socket with that id and the question asked. Late, duplicate and forged datagrams are dropped.

Both resolvers use it: the domain lookups (dns.py, a selector loop in one thread) and the MX hosts'
address lookups (mxhosts.py, on the event loop of deep mode's sessions). Each says how it is woken
when a socket has data (`watch`) and what a query in flight carries (`T`): the client keeps the
sockets and the ids, the resolver its own retries and timers.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator, Sequence

from verification.engine import dnswire

Nameserver = tuple[str, int]
Key = tuple[int, int, int]  # (nameserver, socket slot, query id)
# Datagrams larger than any answer we ask for (UDP_PAYLOAD) are read whole and dropped by the decoder.
_LARGEST_DATAGRAM = 65535
_RECEIVE_BUFFER = 1 << 20  # a batch's burst of answers waits here, not in the kernel's drop counter


class DnsSockets[T]:
    def __init__(
        self,
        nameservers: Sequence[Nameserver],
        per_nameserver: int,
        *,
        watch: Callable[[socket.socket, int, int], object],
        unwatch: Callable[[socket.socket], object],
    ) -> None:
        self.nameservers = list(nameservers)
        self.per_nameserver = per_nameserver
        self.watch, self.unwatch = watch, unwatch
        self.sockets: dict[tuple[int, int], socket.socket] = {}  # (nameserver, slot)
        self.inflight: dict[Key, tuple[str, T]] = {}  # the question asked, and what the resolver keeps
        self.sent = 0

    def send(self, server: int, name: str, carried: T, rdtype: int = dnswire.MX) -> Key:
        """Ask nameserver `server` about `name`; raises WireError (not a name a query can carry) or
        OSError (the nameserver is unreachable from here)."""
        self.sent += 1
        slot = self.sent % self.per_nameserver
        qid = dnswire.query_id()
        inflight = self.inflight
        while (server, slot, qid) in inflight:
            qid = dnswire.query_id()
        question = name.rstrip(".").lower()
        query = dnswire.encode_query(qid, question, rdtype)
        sock = self.sockets.get((server, slot)) or self._socket(server, slot)
        sock.send(query)
        key = (server, slot, qid)
        inflight[key] = (question, carried)
        return key

    def answers(self, sock: socket.socket, server: int, slot: int) -> Iterator[tuple[Key, T, dnswire.Reply]]:
        """Every datagram waiting on the socket that answers a query in flight, with what it carries.
        The query stays in flight: the resolver decides whether the answer ends it (`forget`)."""
        while True:
            try:
                data = sock.recv(_LARGEST_DATAGRAM)
            except BlockingIOError:
                return
            except OSError:  # an ICMP "port unreachable" from a nameserver that is down, reported once
                continue
            try:
                reply = dnswire.decode_reply(data)
            except dnswire.WireError:
                continue
            key = (server, slot, reply.qid)
            asked = self.inflight.get(key)
            if asked is not None and reply.question == asked[0]:
                yield key, asked[1], reply

    def forget(self, key: Key) -> None:
        self.inflight.pop(key, None)

    def close(self) -> None:
        for sock in self.sockets.values():
            self.unwatch(sock)
            sock.close()
        self.sockets.clear()

    def _socket(self, server: int, slot: int) -> socket.socket:
        if (server, slot) not in self.sockets:
            address, port = self.nameservers[server]
            sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_DGRAM)
            sock.setblocking(False)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _RECEIVE_BUFFER)
            try:
                sock.connect((address, port))
            except OSError:
                sock.close()
                raise
            self.watch(sock, server, slot)
            self.sockets[server, slot] = sock
        return self.sockets[server, slot]
