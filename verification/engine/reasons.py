"""A verdict's reason in a marketer's words: the portal's verify card, a job's breakdown and the result
file's `reason` column all say it from here (README, "Verdicts"; docs/bulk.md, "Results").

A suggested correction comes first: `jane@gmial.com` is a mistyped Gmail address before it is
anything else, even where `gmial.com` is on a throwaway list (typo domains often are), so its
reason is "Likely typo of jane@gmail.com", never "Disposable".
"""

from __future__ import annotations

from verification.engine.verdict import SubStatus

SUB_STATUS_REASONS: dict[str, str] = {
    SubStatus.INVALID_SYNTAX: "Not an email address",
    SubStatus.NO_MX_RECORD: "Domain takes no mail",
    SubStatus.DISPOSABLE: "Throwaway address",
    SubStatus.ROLE_BASED: "Shared inbox (info@, sales@ …)",
    SubStatus.DNS_TEMPORARY_FAILURE: "Domain did not answer: try later",
    SubStatus.CATCH_ALL: "Catch-all domain (accepts any address)",
    SubStatus.MAILBOX_NOT_FOUND: "No such mailbox",
    SubStatus.MAILBOX_DISABLED: "Mailbox disabled",
    SubStatus.MAILBOX_FULL: "Mailbox full",
    SubStatus.GREYLISTED: "Greylisted: the mail server said ask later",
    SubStatus.SMTP_BLOCKED: "Blocked by the mail server",
    SubStatus.SMTP_UNREACHABLE: "Mail server unreachable",
    SubStatus.SMTP_UTF8_UNSUPPORTED: "Mail server cannot take this mailbox name",
    SubStatus.VERIFICATION_FAILED: "Not checked: a fault on our side",
    SubStatus.ADDRESS_OBJECTED: "Not checked: the person objected to verification",
}
TYPO = "Likely typo"


def typo_reason(did_you_mean: str) -> str:
    return f"{TYPO} of {did_you_mean}"


def verdict_reason(sub_status: str | None, did_you_mean: str | None) -> str:
    """The typo first, else the sub-status's words; "" for a verdict with neither (a plain valid one)."""
    if did_you_mean:
        return typo_reason(did_you_mean)
    return SUB_STATUS_REASONS.get(sub_status or "", "")


def counted_under(sub_status: str | None, did_you_mean: str | None) -> str | None:
    """The sub-status a breakdown counts the row under: none for a likely typo on a throwaway list,
    which is counted once, under typos (with the other rows that have a suggestion)."""
    if sub_status == SubStatus.DISPOSABLE and did_you_mean:
        return None
    return sub_status
