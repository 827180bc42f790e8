"""The loopback DNS server in a process of its own (so it never shares a GIL with a benchmark).

    python -m bench.dnsd --delay-ms 2 [--loss 0.02] [--max-qps 1000] [--warm ROWS DOMAINS]

It is the test suite's ``tests.support.dns_server.DnsServer``, answering every name as
``bench.data.behaviour`` says. Prints ``host:port`` on its first stdout line, then serves
until SIGTERM (or stdin closing, when stdin is a pipe).

With ``--warm``, the MX answers for every domain of the bench's generated list of that size are
built before the first line, as a real resolver answers a list's domains from its cache (and as
``bench/mxfarm.py`` does for the deep scenarios): built at a domain's first query instead (about
30 us of this process's CPU each, with dnspython), they made a run's first round wait on this
server, not on the code it measures.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass

from bench.data import Dataset, behaviour, generate
from bench.procs import PY, Processes
from tests.support.dns_server import DnsServer
from verification.engine import dnswire


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.dnsd")
    parser.add_argument("--delay-ms", type=float, default=2.0)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--loss", type=float, default=0.0, help="share of queries dropped at random")
    parser.add_argument("--max-qps", type=float, default=None, help="answers a second at most; the rest dropped")
    parser.add_argument(
        "--warm", type=int, nargs=2, metavar=("ROWS", "DOMAINS"), help="answers built first for this list's domains"
    )
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    weather = {"loss": args.loss, "max_qps": args.max_qps}
    with DnsServer(default=behaviour, delay=args.delay_ms / 1000, port=args.port, **weather) as server:
        if args.warm:
            server.warm(list_domains(generate(*args.warm)), dnswire.MX)
        print(server.address, flush=True)
        stop.wait()


@dataclass(frozen=True)
class DnsProcess:
    address: str  # host:port
    process: subprocess.Popen[bytes]

    @property
    def host(self) -> str:
        return self.address.rsplit(":", 1)[0]

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])


def list_domains(data: Dataset) -> set[str]:
    """The domains a list's rows name, as a verifier asks for them (a broken row's text after its last @)."""
    return {row.rpartition("@")[2].strip().lower() for row in data.rows}


def start_dns(processes: Processes, delay_ms: float, *weather: str, warm: Dataset | None = None) -> DnsProcess:
    """The server in a process; `weather` adds its options (`--loss 0.02`, `--max-qps 1000`);
    `warm`, a list whose domains it answers from the start as from a cache."""
    options = [*weather, *(("--warm", str(len(warm.rows)), str(warm.domains)) if warm else ())]
    process = processes.start(PY, "-m", "bench.dnsd", "--delay-ms", str(delay_ms), *options, stdout=subprocess.PIPE)
    assert process.stdout is not None
    line = process.stdout.readline().decode().strip()
    if not line:
        raise RuntimeError("the DNS server process did not start")
    return DnsProcess(line, process)


if __name__ == "__main__":
    sys.exit(main())
