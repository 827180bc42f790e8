"""Who runs a domain's mail, from the MX hosts of the answer already fetched (README, `mail_provider`)."""

from __future__ import annotations

from functools import cache, lru_cache

from verification.engine.lists import DATA_DIR, parent_domains

# Each `mail_provider` value and the name people know it by.
PROVIDER_NAMES = {
    "google": "Google (Gmail, Workspace)",
    "microsoft": "Microsoft (365, Outlook.com)",
    "yahoo": "Yahoo / AOL",
    "apple": "Apple iCloud",
    "zoho": "Zoho Mail",
    "proton": "Proton Mail",
    "yandex": "Yandex",
    "mailru": "Mail.ru",
    "gmx": "GMX / web.de / mail.com",
    "fastmail": "Fastmail",
    "amazon": "Amazon (SES, WorkMail)",
    "mimecast": "Mimecast",
    "proofpoint": "Proofpoint",
    "barracuda": "Barracuda",
    "cisco": "Cisco Secure Email",
}
PROVIDERS = tuple(PROVIDER_NAMES)


@cache
def host_patterns() -> dict[str, str]:
    """Host suffix -> provider, from data/mail_providers.txt."""
    lines = (DATA_DIR / "mail_providers.txt").read_text(encoding="utf-8").splitlines()
    pairs = (line.split() for line in lines if line.strip() and not line.startswith("#"))
    return {suffix.lower(): provider for suffix, provider in pairs}


@lru_cache(maxsize=1 << 16)  # one entry a domain: a bulk job's domains, in any order
def mail_provider(mx_hosts: tuple[str, ...]) -> str | None:
    """The provider of the first MX host (in preference order) that a pattern names, or None."""
    patterns, tails = host_patterns(), _pattern_tails()
    for host in mx_hosts:
        host = host.rstrip(".").lower()
        # Every pattern has a dot, so a host can match one only if their last two labels agree:
        # most companies' own MX hosts are told apart by one set lookup instead of a walk.
        if host[host.rfind(".", 0, host.rfind(".")) + 1 :] not in tails:
            continue
        for suffix in parent_domains(host):
            if suffix in patterns:
                return patterns[suffix]
    return None


def providers_load() -> None:
    """Read the patterns now rather than at their first use."""
    host_patterns()
    _pattern_tails()


@cache
def _pattern_tails() -> frozenset[str]:
    """The last two labels of each pattern."""
    return frozenset(".".join(suffix.split(".")[-2:]) for suffix in host_patterns() if "." in suffix)


# The provider families the bounce guarantee reports on (docs/guarantee.md); every other provider,
# and a domain whose MX hosts name none, is `other`.
PROVIDER_FAMILIES = ("google", "microsoft", "yahoo", "other")


def provider_family(provider: str | None) -> str:
    return provider if provider in PROVIDER_FAMILIES else "other"
