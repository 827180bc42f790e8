"""`python -m bench.mxfarm --port P --dns-port Q`: the farm on fixed ports, for a trial on a shared machine."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from bench.procs import free_port, stop_group

ROOT = Path(__file__).resolve().parents[2]


def test_the_farm_listens_on_the_ports_it_is_given() -> None:
    smtp_port, dns_port = free_port(), free_port()
    command = [sys.executable, "-m", "bench.mxfarm", "--verdict-table", "--serve", "--port", str(smtp_port)]
    farm = subprocess.Popen(
        [*command, "--dns-port", str(dns_port)], cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert farm.stdout is not None
        printed = json.loads(farm.stdout.readline())
        assert (printed["smtp_port"], printed["dns"].rsplit(":", 1)[1]) == (smtp_port, str(dns_port))
        with socket.create_connection(("127.0.0.2", smtp_port), timeout=10) as smtp:
            assert smtp.recv(512).startswith(b"220")
        os.killpg(farm.pid, signal.SIGINT)
        assert farm.wait(timeout=15) is not None
    finally:
        stop_group(farm)
