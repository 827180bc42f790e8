"""What filing a 100,000-row job's valid answers costs, on a fresh SQLite stack (docs/guarantee.md,
"When an answer is kept").

    python -m bench.answer_filing [ROUNDS] [ANSWERS_A_TRANSACTION]

Each round packs 50 batches of 1,500 answers (random keys), as 50 chunks of a bulk job would,
then files them with `billing.guarantee.answers_filed` (no pause: the cost, not the task's pace),
and prints one JSON line: each round's wall and CPU seconds, and the answers kept so far. The
table grows round by round, as it does on a service that keeps 400 days of answers.
"""

from __future__ import annotations

import sys

from bench.stack import Stack

ROUND = """
import json, os, time
from django.utils import timezone
from accounts.models import Account
from billing import guarantee
from billing.models import AnswerBatch, ValidAnswer
guarantee.FILING_ANSWERS = {per}
account = Account.objects.get(public_id="{account}").pk
for _ in range(50):
    answers = [(os.urandom(32).hex(), "other", True) for _ in range(1500)]
    AnswerBatch.objects.create(account_id=account, answered_at=timezone.now(), answers=AnswerBatch.packed(answers))
wall, cpu = time.perf_counter(), time.process_time()
filed = guarantee.answers_filed(account)
print(json.dumps({{"filed": filed, "wall_s": round(time.perf_counter() - wall, 3),
    "cpu_s": round(time.process_time() - cpu, 3), "kept": ValidAnswer.objects.count()}}))
"""


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv else 3
    per = int(argv[1]) if len(argv) > 1 else 3000
    with Stack("sqlite", dns_address="127.0.0.1") as stack:
        account = stack.create_account("filing@bench.example", credits=10)
        for _ in range(rounds):
            out = stack.shell(ROUND.format(per=per, account=account.account_id))
            print(next(line for line in out.splitlines() if line.startswith("{")), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
