"""What an SMTP reply says about a mailbox: the patterns of data/smtp_replies.txt, in order.

The enhanced status code (RFC 3463) is read before the text, except for the rules the data file
puts first: our own connection and recipient limits, and named blocklists, which say something
about us rather than the mailbox. A reply no rule matches falls back on its basic code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import cache, lru_cache

from verification.engine.lists import DATA_DIR


class Meaning(StrEnum):
    ACCEPTED = "accepted"
    NO_MAILBOX = "no_mailbox"
    DISABLED = "disabled"
    FULL = "full"
    TRY_AGAIN = "try_again"  # 4xx: greylisting and other temporary refusals
    BLOCKED = "blocked"  # policy, reputation, a blocklist: nothing about the mailbox
    TOO_MANY_RECIPIENTS = "too_many_recipients"  # ask this recipient again in a session of its own
    TOO_MANY_CONNECTIONS = "too_many_connections"  # back off, ask later
    UNREACHABLE = "unreachable"  # no answer at all: refused, timed out, cut off
    # Not a reply: a mailbox name outside ASCII, and the server does not offer SMTPUTF8 (RFC 6531),
    # so it cannot be asked at all.
    UTF8_UNSUPPORTED = "utf8_unsupported"


@dataclass(frozen=True, slots=True)
class Reply:
    code: int  # 0 when the server never answered (see `text`)
    text: str

    @property
    def enhanced(self) -> str:
        """The enhanced status code at the start of the text ("5.1.1"), or ""."""
        found = _ENHANCED.match(self.text)
        return found.group(1) if found else ""


@dataclass(frozen=True, slots=True)
class Rule:
    meaning: Meaning
    reply_class: str  # "4", "5" or "*"
    kind: str  # "code" or "text"
    pattern: str

    def matches(self, reply_class: str, enhanced: str, text: str) -> bool:
        """Whether a reply of `reply_class` ("4" or "5"), its enhanced code and its text (lowercase,
        spaces folded) match the rule."""
        if self.reply_class != "*" and reply_class != self.reply_class:
            return False
        if self.kind == "code":
            return enhanced.startswith(self.pattern) if self.pattern.endswith(".") else enhanced == self.pattern
        return self.pattern in text


_ENHANCED = re.compile(r"\s*#?([245]\.\d{1,3}\.\d{1,3})\b")
NO_ANSWER = Reply(0, "no answer")
# Not a reply: what a recipient needing SMTPUTF8 gets from a server that does not offer it.
UTF8_NOT_OFFERED = Reply(0, "the server does not offer SMTPUTF8: a mailbox name outside ASCII cannot be asked")
# Not a reply: a catch-all probe left unasked, the server having refused every address of its
# domain in the session by policy (the probe's answer would say nothing more).
PROBE_NOT_ASKED = Reply(0, "not asked: the server refused this domain's addresses by policy")
# Not a reply: a catch-all probe left unasked, the server having refused another address of its
# domain in the session as unknown: a server that refuses one address it does not know is no
# catch-all, and the probe's random address would be refused the same way.
PROBE_SPARED = Reply(0, "not asked: the server refused another address of this domain as unknown")

_NOT_REPLIES = {
    UTF8_NOT_OFFERED.text: Meaning.UTF8_UNSUPPORTED,
    PROBE_NOT_ASKED.text: Meaning.BLOCKED,
    PROBE_SPARED.text: Meaning.NO_MAILBOX,
}


def meaning(reply: Reply, *, recipient: bool = True) -> Meaning:
    """The reply's meaning. `recipient`: whether it answers a RCPT TO (only there does a bare
    550 speak about a mailbox; at the banner, EHLO or MAIL FROM a refusal is about us)."""
    if reply.code == 0:  # no reply: silence, or one of ours standing in for it
        return _NOT_REPLIES.get(reply.text, Meaning.UNREACHABLE)
    if 200 <= reply.code < 400:
        return Meaning.ACCEPTED
    return _at_step(_refusal_meaning(reply), recipient)


@lru_cache(maxsize=4096)
def _refusal_meaning(reply: Reply) -> Meaning:
    """A 4xx or 5xx reply's meaning by the rules, kept: a session's refusals mostly repeat one text,
    and each is read several times (its recipient's answer, the session's outcome and refusal)."""
    text = " ".join(reply.text.lower().split())
    reply_class, enhanced = str(reply.code)[:1], reply.enhanced
    for rule in rules():
        if rule.matches(reply_class, enhanced, text):
            return rule.meaning
    return _by_basic_code(reply.code)


def _at_step(found: Meaning, recipient: bool) -> Meaning:
    mailbox = (Meaning.NO_MAILBOX, Meaning.DISABLED, Meaning.FULL, Meaning.TOO_MANY_RECIPIENTS)
    return Meaning.BLOCKED if not recipient and found in mailbox else found


def _by_basic_code(code: int) -> Meaning:
    if code == 421:  # RFC 5321: service not available, closing the channel
        return Meaning.TOO_MANY_CONNECTIONS
    if code in (452, 552):  # insufficient storage / exceeded storage allocation
        return Meaning.FULL
    if 400 <= code < 500:
        return Meaning.TRY_AGAIN
    if code in (550, 551, 553):  # mailbox unavailable / user not local / mailbox name not allowed
        return Meaning.NO_MAILBOX
    return Meaning.BLOCKED  # any other refusal: nothing to say about the mailbox, so never invalid


@cache
def rules() -> tuple[Rule, ...]:
    found = []
    for number, line in enumerate((DATA_DIR / "smtp_replies.txt").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, reply_class, kind, pattern = line.split(maxsplit=3)
        if reply_class not in ("4", "5", "*") or kind not in ("code", "text") or pattern != pattern.lower():
            raise ValueError(f"smtp_replies.txt line {number}: {line!r}")
        found.append(Rule(Meaning(name), reply_class, kind, pattern.strip()))
    return tuple(found)
