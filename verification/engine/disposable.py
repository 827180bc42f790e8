"""Throwaway (disposable) mail: by the domain's name, and by who receives its mail.

The list (data/disposable_domains.txt) merges maintained public sources; it is rebuilt with
`manage.py refresh_disposable_domains`. A domain is throwaway when it or a parent is on the
list, or when one of its MX hosts (or a parent of one) is on it or is a known throwaway
service's mail server (data/disposable_mx_hosts.txt): a new domain pointed at
mail.mailinator.com is caught without a list update. Free providers and the reviewed
exceptions (data/not_disposable.txt) are never throwaway, whatever a source says.
"""

from __future__ import annotations

from functools import cache, lru_cache

from verification.engine.lists import free_providers, parent_domains, read_list


@cache
def disposable_domains() -> frozenset[str]:
    return read_list("disposable_domains.txt") - never_disposable()


@cache
def disposable_mx_hosts() -> frozenset[str]:
    return read_list("disposable_mx_hosts.txt")


@cache
def never_disposable() -> frozenset[str]:
    return free_providers() | read_list("not_disposable.txt")


@lru_cache(maxsize=1 << 16)  # a bulk chunk asks about the same few providers thousands of times
def is_disposable(domain: str, mx_hosts: tuple[str, ...] = ()) -> bool:
    if (decided := decided_by_name(domain)) is not None:
        return decided
    for host in mx_hosts:  # noqa: SIM110 - a loop, not any() over a generator: once for each new domain of a job
        if _throwaway_host(host, domain):
            return True
    return False


@lru_cache(maxsize=1 << 16)  # one entry a domain, worked out while its MX hosts are being looked up
def decided_by_name(domain: str) -> bool | None:
    """What the domain's name alone decides: never throwaway (False), listed (True), or nothing
    (None: its MX hosts decide)."""
    if domain in never_disposable():
        return False
    return True if _listed(domain) else None


def _listed(name: str, below: str = "") -> bool:
    """`listed_in(name, disposable_domains())`, one dict lookup a candidate instead of two set lookups.
    With `below` (a parent of `name` known to be undecided, as are its own parents), only the names
    under it are looked up."""
    decisions = _decisions()
    stop = len(name) - len(below) if below else len(name)  # candidates start before this offset
    start = 0
    # The walk of parent_domains, inline: it runs once or more for each new domain of a job.
    while start < stop and (dot := name.find(".", start)) != -1:
        decided = decisions.get(name[start:])
        if decided is not None:
            return decided
        start = dot + 1
    return False


def decisions_load() -> None:
    _decisions()


@cache
def _decisions() -> dict[str, bool]:
    """Each name on the list (True) and each never throwaway (False: it wins, as in `listed_in`)."""
    return dict.fromkeys(disposable_domains(), True) | dict.fromkeys(never_disposable(), False)


def listed_in(name: str, listed: frozenset[str]) -> bool:
    """The name or its nearest parent on `listed` or never_disposable() decides: never wins a tie."""
    never = never_disposable()
    for candidate in parent_domains(name):
        if candidate in never:
            return False
        if candidate in listed:
            return True
    return False


def _throwaway_host(host: str, domain: str) -> bool:
    """`host` (one of `domain`'s MX hosts, `domain` already found undecided by the lists) is
    throwaway. Most companies' MX hosts are under their own domain (mx1.example.com): of those
    only the names under the domain are left to look up."""
    host = host.rstrip(".").lower()
    if host in disposable_mx_hosts():
        return True
    return _listed(host, domain if host.endswith("." + domain) else "")
