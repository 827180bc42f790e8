"""README, `did_you_mean`: did_you_mean only for a clear typo of a popular provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Persona
from verification.engine import lists

CASES = Path(__file__).parents[1] / "data" / "typo_cases.txt"


def load_cases() -> dict[str, list[tuple[str, str | None]]]:
    sections: dict[str, list[tuple[str, str | None]]] = {}
    for line in CASES.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:], [])
        elif line and not line.startswith("#"):
            typed, expected = line.split()
            current.append((typed, None if expected == "-" else expected))
    return sections


def test_typo_precision_and_recall_on_the_case_set() -> None:
    cases = load_cases()
    typos, legitimate = cases["typos"], cases["legitimate"]
    assert len(typos) >= 100 and len(legitimate) >= 100
    suggested = [(lists.suggest_domain(typed), expected) for typed, expected in typos + legitimate]
    made = [(got, expected) for got, expected in suggested if got is not None]
    precision = sum(got == expected for got, expected in made) / len(made)
    recall = sum(lists.suggest_domain(typed) == expected for typed, expected in typos) / len(typos)
    print(f"typo precision {precision:.3f} recall {recall:.3f} ({len(typos)} typos, {len(legitimate)} legitimate)")
    assert precision >= 0.99
    assert recall >= 0.90


@pytest.mark.parametrize(
    "domain", ["ymail.com", "gmx.net", "gmx.de", "mail.com", "y7mail.com", "email.com", "cloud.com"]
)
def test_real_providers_and_look_alike_domains_are_never_corrected(domain: str) -> None:
    assert lists.suggest_domain(domain) is None


def test_a_tie_goes_to_the_more_popular_provider() -> None:
    assert lists.suggest_domain("gmx.ne") == "gmx.net"


@pytest.mark.parametrize(
    ("typed", "suggested"),
    [
        ("jane@gmx.ne", "jane@gmx.net"),  # the tie goes to the more popular provider, not gmx.de
        ("jane@gmial.com", "jane@gmail.com"),
        ("jane@hotmial.com", "jane@hotmail.com"),
        ("jane@yaho.com", "jane@yahoo.com"),
        ("jane@outlok.com", "jane@outlook.com"),
        ("jane@y7mail.com", None),  # Yahoo Australia, not a slip of ymail.com
        ("jane@ymail.com", None),
        ("jane@gmx.net", None),
        ("jane@gmx.de", None),
        ("jane@mail.com", None),
        ("jane@email.com", None),
    ],
)
def test_api_suggests_only_clear_typos(owner: Persona, typed: str, suggested: str | None) -> None:
    assert owner.verify(typed).json()["did_you_mean"] == suggested
