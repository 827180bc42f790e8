"""Run the engine's prober alone in a process of its own (tests of politeness across processes,
each process standing for a machine).

python -m tests.support.prober_run NAMESERVER PORT LOCK_DIR [--redis URL] [--egress SPEC] [--once] DOMAIN...
-> prints one JSON object: each recipient's meaning. Each DOMAIN's MX hosts are mx1.DOMAIN and
mx2.DOMAIN. `--redis`: count sessions in Redis (leases) rather than in LOCK_DIR's lock files;
`--egress`: VERIFIER_SMTP_EGRESS's syntax; `--once`: a group refused for our rate is not asked
again (as a single request).
"""

from __future__ import annotations

import asyncio
import json
import sys

from verification.engine.dns import ResolverConfig
from verification.engine.egress import parse_egresses
from verification.engine.leases import RedisLeases
from verification.engine.mxhosts import host_resolver
from verification.engine.smtp import SmtpConfig
from verification.engine.smtp_scheduling import Prober
from verification.engine.smtp_slots import HostSlots, Slots


def main(nameserver: str, port: str, lock_dir: str, *rest: str) -> None:
    args = list(rest)
    options = {name: args.pop(args.index(name) + 1) for name in ("--redis", "--egress") if name in args}
    domains = [arg for arg in args if arg not in options and arg != "--once"]
    slots: Slots = RedisLeases(options["--redis"], 3, ttl=2.0) if "--redis" in options else HostSlots(lock_dir, 3)
    prober = Prober(
        config=SmtpConfig(
            helo="verifier.deep-sender.net", mail_from="verify@deep-sender.net", port=int(port), timeout=5
        ),
        resolve=host_resolver(ResolverConfig(nameservers=(nameserver,), timeout=1.0, lifetime=3.0)),
        allowed=lambda address: True,
        slots=slots,
        egresses=parse_egresses(options.get("--egress", "")),
        backoff_tries=0 if "--once" in args else Prober.backoff_tries,
    )
    work = {(f"mx1.{domain}", f"mx2.{domain}"): [f"alice@{domain}"] for domain in domains}
    findings = asyncio.run(prober.ask(work, timeout=60))
    print(json.dumps({email: answer.meaning.value for email, answer in findings.answers.items()}))


if __name__ == "__main__":
    main(*sys.argv[1:])
