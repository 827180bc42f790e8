"""``python -m bench.mta_rate_limit``: the 100-row deep job of tests/mta's `rate-limit-job` case
(real Postfix, `smtpd_client_connection_rate_limit = 2` per 60 s), run on a live stack with one
qcluster and with two sharing the one egress, `--repeat` times each. Every run gets a Postfix of
its own, so it starts in a fresh anvil window (60 s), and prints its wall time (upload to
completion), the rows left unknown and the connections Postfix's log shows; then the medians with
min–max, and the load average. Needs root and Postfix (`.ci/ensure-mtas`); on PostgreSQL
(DATABASE_URL=postgres://…) the stack takes Redis for the queue, the cache and the allowance."""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

from tests.support.dns_server import DnsServer
from tests.support.mta import POSTFIX_ADDRESSES, Postfix, free_port
from tests.support.mta_stack import JobRun, rate_limited_stack, run_job
from tests.support.stack_db import StackDatabases


def one_run(workdir: Path, dns: DnsServer, databases: StackDatabases, qclusters: int, chunk_rows: int) -> JobRun:
    with Postfix(free_port(POSTFIX_ADDRESSES)) as postfix:
        tmp = Path(tempfile.mkdtemp(dir=workdir))
        with rate_limited_stack(tmp, dns, databases, postfix.port, qclusters=qclusters, chunk_rows=chunk_rows) as stack:
            return run_job(stack, postfix)


def summary(label: str, runs: list[JobRun]) -> str:
    def spread(values: list[float], unit: str = "") -> str:
        return f"{statistics.median(values):.1f}{unit} ({min(values):.1f}–{max(values):.1f}{unit})"

    unknown = [float(sum(n for verdict, n in run.verdicts.items() if verdict.startswith("unknown"))) for run in runs]
    sessions = [float(run.sessions) for run in runs]
    return (
        f"{label}: wall {spread([run.seconds for run in runs], ' s')}, unknown rows {spread(unknown)}, "
        f"Postfix connections {spread(sessions)}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mta_rate_limit", description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--setups",
        default="1x100,1x50,2x50",
        help="qclusters x rows a chunk: 1x100 is one chunk in one worker (one process's sessions), "
        "1x50 two chunks in one qcluster's two workers, 2x50 two chunks in two qclusters",
    )
    args = parser.parse_args(argv)
    print(f"load average before: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-mta-") as workdir, DnsServer() as dns:
        databases = StackDatabases(Path(workdir), os.environ.get("DATABASE_URL", "sqlite://"))
        try:
            lines = []
            for setup in args.setups.split(","):
                qclusters, chunk_rows = (int(part) for part in setup.split("x"))
                runs = []
                for round_ in range(1, args.repeat + 1):
                    run = one_run(Path(workdir), dns, databases, qclusters, chunk_rows)
                    print(
                        f"{setup}, run {round_}: {run.seconds:.1f} s, {dict(run.verdicts)}, {run.sessions} connections",
                        flush=True,
                    )
                    runs.append(run)
                lines.append(summary(f"{setup} (qclusters x chunk rows), median of {args.repeat}", runs))
        finally:
            databases.close()
    print("\n".join(lines))
    print(f"load average after: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
