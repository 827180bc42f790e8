"""Run the engine's prober alone in a process of its own (tests of politeness across processes).

python -m tests.support.prober_run NAMESERVER PORT LOCK_DIR DOMAIN...  -> prints one JSON object:
each recipient's meaning.
"""

from __future__ import annotations

import asyncio
import json
import sys

from verification.engine.dns import ResolverConfig
from verification.engine.mailboxes import HostSlots, Prober
from verification.engine.mxhosts import host_resolver
from verification.engine.smtp import SmtpConfig


def main(nameserver: str, port: str, lock_dir: str, *domains: str) -> None:
    prober = Prober(
        config=SmtpConfig(
            helo="verifier.deep-sender.net", mail_from="verify@deep-sender.net", port=int(port), timeout=5
        ),
        resolve=host_resolver(ResolverConfig(nameservers=(nameserver,), timeout=1.0, lifetime=3.0)),
        allowed=lambda address: True,
        slots=HostSlots(lock_dir, 3),
    )
    work = {(f"mx1.{domain}",): [f"alice@{domain}"] for domain in domains}
    findings = asyncio.run(prober.ask(work, timeout=60))
    print(json.dumps({email: answer.meaning.value for email, answer in findings.answers.items()}))


if __name__ == "__main__":
    main(*sys.argv[1:])
