"""Reference lists: disposable domains, free providers, role local parts, typo targets."""

from __future__ import annotations

import string
from collections.abc import Iterator
from functools import cache, lru_cache
from pathlib import Path

from disposable_email_domains import blocklist as _disposable_blocklist

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
_EDIT_ALPHABET = string.ascii_lowercase + string.digits + "-."
# A mistyped label this short is as likely another real domain (mi.com, ao.com) as a typo.
_MIN_LABEL_FOR_LABEL_TYPOS = 5
_ROLE_SEPARATORS = str.maketrans("", "", ".-_")


def read_list(name: str) -> frozenset[str]:
    lines = (DATA_DIR / name).read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip().lower() for line in lines if line.strip() and not line.startswith("#"))


@cache
def free_providers() -> frozenset[str]:
    return read_list("free_providers.txt")


@cache
def role_local_parts() -> frozenset[str]:
    return frozenset(role_key(entry) for entry in read_list("role_local_parts.txt"))


def role_key(local: str) -> str:
    """The local part as roles are compared: before any +tag, without '.', '-' and '_'."""
    return local.split("+", 1)[0].translate(_ROLE_SEPARATORS)


def parent_domains(domain: str) -> Iterator[str]:
    """The domain itself and each parent that still has a dot: a.b.c.d -> a.b.c.d, b.c.d, c.d."""
    labels = domain.split(".")
    for i in range(len(labels) - 1):
        yield ".".join(labels[i:])


@lru_cache(maxsize=1 << 16)  # a bulk chunk asks about the same few providers thousands of times
def is_disposable(domain: str) -> bool:
    return any(candidate in _disposable_blocklist for candidate in parent_domains(domain))


def is_free_provider(domain: str) -> bool:
    return domain in free_providers()


def is_role(local: str) -> bool:
    return role_key(local) in role_local_parts()


def suggest_domain(domain: str) -> str | None:
    """The provider a typed domain most likely meant, or None."""
    if not domain or domain in free_providers():
        return None
    return _typo_index().get(domain)


@cache
def _typo_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for target in sorted(read_list("typo_targets.txt")):
        label = target.split(".", 1)[0]
        for variant in _single_edits(target):
            if variant.split(".", 1)[0] != label and len(label) < _MIN_LABEL_FOR_LABEL_TYPOS:
                continue
            index.setdefault(variant, target)
    return index


def _single_edits(word: str) -> set[str]:
    """Every string one deletion, insertion, substitution or adjacent transposition away."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits = {a + b[1:] for a, b in splits if b}
    edits |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    edits |= {a + c + b[1:] for a, b in splits if b for c in _EDIT_ALPHABET}
    edits |= {a + c + b for a, b in splits for c in _EDIT_ALPHABET}
    edits.discard(word)
    return {e for e in edits if "." in e and not e.startswith(".") and not e.endswith(".") and ".." not in e}
