"""Reference lists: free providers, role local parts, typo targets (throwaway domains: disposable.py)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
# A mistyped label this short is as likely another real domain (mi.com, ao.com) as a typo.
_MIN_LABEL_FOR_LABEL_TYPOS = 5


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
    # Three replaces: str.translate takes ~3 us an address, a bulk job's biggest cost here.
    return local.split("+", 1)[0].replace(".", "").replace("-", "").replace("_", "")


def parent_domains(domain: str) -> list[str]:
    """The domain itself and each parent that still has a dot: a.b.c.d -> a.b.c.d, b.c.d, c.d."""
    names = []
    start = 0
    while (dot := domain.find(".", start)) != -1:  # slices: cheaper than joining labels, once per domain a chunk
        names.append(domain[start:])
        start = dot + 1
    return names


def lists_load() -> None:
    """Read this module's lists now rather than at their first use (they are kept for the process's life)."""
    free_providers()
    role_local_parts()
    _typo_index()


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
    """Each likely typo of a target -> the target. The file lists targets most popular first,
    and the first target to claim a typo keeps it: gmx.ne is gmx.net's, not gmx.de's."""
    index: dict[str, str] = {}
    for target in _ordered_list("typo_targets.txt"):
        label = target.split(".", 1)[0]
        for variant in _typing_slips(target):
            if variant.split(".", 1)[0] != label and len(label) < _MIN_LABEL_FOR_LABEL_TYPOS:
                continue
            index.setdefault(variant, target)
    return index


def _ordered_list(name: str) -> list[str]:
    lines = (DATA_DIR / name).read_text(encoding="utf-8").splitlines()
    return [line.strip().lower() for line in lines if line.strip() and not line.startswith("#")]


def _typing_slips(word: str) -> set[str]:
    """Strings one slip of the fingers away: a key left out, two keys swapped, a neighbouring key
    hit instead, or a neighbouring (or the same) key hit as well. Any one-edit string would also
    "correct" real domains that merely look alike (email.com is not a slip of gmail.com, nor
    cloud.com of icloud.com)."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    edits = {a + b[1:] for a, b in splits if a and b}  # the first key is seldom the one left out
    edits |= {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    edits |= {a + c + b[1:] for a, b in splits if b for c in _NEIGHBOURS.get(b[0], "")}
    edits |= {a + c + b for a, b in splits for c in _inserted_keys(a[-1:], b[:1])}
    edits.discard(word)
    return {e for e in edits if "." in e and not e.startswith(".") and not e.endswith(".") and ".." not in e}


def _inserted_keys(before: str, after: str) -> str:
    """Keys a finger hits by accident between two others: either of them, or a neighbour."""
    return "".join({before, after, *_NEIGHBOURS.get(before, ""), *_NEIGHBOURS.get(after, "")})


def _keyboard_neighbours() -> dict[str, str]:
    rows = ["1234567890-", "qwertyuiop", "asdfghjkl", "zxcvbnm"]
    where = {key: (r, c) for r, row in enumerate(rows) for c, key in enumerate(row)}
    offsets = [(0, -1), (0, 1), (-1, 0), (-1, 1), (1, 0), (1, -1)]  # rows are staggered
    return {
        key: "".join(rows[r + dr][c + dc] for dr, dc in offsets if 0 <= r + dr < 4 and 0 <= c + dc < len(rows[r + dr]))
        for key, (r, c) in where.items()
    }


_NEIGHBOURS = _keyboard_neighbours()
