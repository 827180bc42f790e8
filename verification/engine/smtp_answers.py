"""What deep verification's sessions learn: each recipient's answer (a reply and what it means), the
answers given without asking, and what a run of sessions found (smtp_scheduling.Prober)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from verification.engine.smtp_replies import Meaning, Reply


@dataclass(frozen=True, slots=True)
class Answer:
    reply: Reply
    meaning: Meaning


UNREACHABLE = Answer(Reply(0, "no MX host answered"), Meaning.UNREACHABLE)


# A batch's own time ran out before the recipient's session did: ask again later (bulk).
OUT_OF_TIME = Answer(Reply(0, "not asked before the batch's time ran out"), Meaning.TRY_AGAIN)


NOT_PUBLIC = Answer(Reply(0, "every MX address is on a non-public network"), Meaning.UNREACHABLE)


# Every egress rests (refused for its reputation): nothing is asked, the rows are smtp_blocked at once.
RESTING = Answer(Reply(0, "every SMTP egress is resting after blocklist refusals"), Meaning.BLOCKED)


# The address limits our rate, and its spacing falls past the run's time: asked again later.
THROTTLED = Answer(Reply(0, "not asked: the MX address limits our connections; asked again later"), Meaning.TRY_AGAIN)


@dataclass(slots=True)
class Findings:
    """What the sessions learnt: each recipient's answer, and each session's outcome."""

    answers: dict[str, Answer] = field(default_factory=dict)
    sessions: list[str] = field(default_factory=list)  # Session.outcome, one per session opened
    # (outcome, MX address, the reply) of each session turned away: what an operator reads when
    # `smtp_blocked` rises ("spamhaus", "reverse hostname", ...)
    refusals: list[tuple[str, str, Reply]] = field(default_factory=list)
    # Per egress name: sessions that went out through it, and those refused for its reputation.
    egress_sessions: Counter[str] = field(default_factory=Counter)
    egress_refused: Counter[str] = field(default_factory=Counter)
    # What the bounds left out: "mx_hosts" named beyond MAX_MX_HOSTS, "mx_addresses" beyond
    # MAX_MX_ADDRESSES or already tried this round.
    cut: Counter[str] = field(default_factory=Counter)
