"""Schemathesis over every operation of the live service: no 5xx, nothing off the schema.

    python -m bench.fuzz [--examples 200] [--backend sqlite|postgres]   (or: make fuzz)

Starts the loopback DNS server, a fresh stack (gunicorn and a qcluster) and an Enterprise
account with plenty of credits, then runs the schemathesis CLI with every check it has
against /v1/openapi.json. Prints schemathesis' own report; exits with its status. Traffic
stays on loopback: the DNS server, the web server and the callbacks (refused: they name
public hosts, which nothing here delivers to) are all on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from bench.dnsd import start_dns
from bench.procs import PY, Processes
from bench.stack import Stack


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fuzz")
    parser.add_argument("--examples", type=int, default=200, help="examples per operation and phase")
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with Processes(dict(os.environ)) as processes:
        dns = start_dns(processes, 0.0)
        with Stack(args.backend, dns.address, extra_env={"CALLBACK_ALLOW_PRIVATE_NETWORKS": "0"}) as stack:
            account = stack.create_account("fuzz@example.com", credits=10_000_000, plan="enterprise")
            stack.start_web(workers=2)
            stack.start_qcluster()
            command = [
                PY, "-m", "schemathesis.cli", "run", f"{stack.base_url}/v1/openapi.json",
                "--header", f"Authorization: Bearer {account.api_key}",
                "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
                "response_headers_conformance,response_schema_conformance",
                "--max-examples", str(args.examples), "--seed", str(args.seed), "--workers", "2",
            ]  # fmt: skip
            return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
