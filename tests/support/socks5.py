"""A small SOCKS5 proxy on loopback (RFC 1928: no authentication, CONNECT only), for the tests of
VERIFIER_SMTP_PROXY. It relays to loopback destinations only and records each one it was asked for."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import struct
import threading


class Socks5Server:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host, self.port = host, 0
        self.destinations: list[tuple[str, int]] = []
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="socks5", daemon=True)
        self._server: asyncio.Server | None = None

    def __enter__(self) -> Socks5Server:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            if self._server is not None:
                self._server.close()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        return f"socks5://{self.host}:{self.port}"

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._client, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            _version, methods = await reader.readexactly(2)
            await reader.readexactly(methods)
            writer.write(b"\x05\x00")  # no authentication
            _version, command, _reserved, kind = await reader.readexactly(4)
            host = await _read_address(reader, kind)
            port = struct.unpack("!H", await reader.readexactly(2))[0]
            self.destinations.append((host, port))
            if command != 1 or not ipaddress.ip_address(host).is_loopback:
                writer.write(b"\x05\x02\x00\x01" + bytes(6))  # not allowed by ruleset
                return
            upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
            writer.write(b"\x05\x00\x00\x01" + socket.inet_aton("127.0.0.1") + struct.pack("!H", 0))
            await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        except (OSError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()


async def _read_address(reader: asyncio.StreamReader, kind: int) -> str:
    if kind == 1:
        return socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
    if kind == 4:
        return socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
    length = (await reader.readexactly(1))[0]
    return (await reader.readexactly(length)).decode("ascii")  # a name: refused (not an address)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()
