"""The engine's `DomainCache` protocol over a plain dict, for the tests and the `engine` benchmark, which
run the engine without a database (no expiry: a test or a round is far shorter than any TTL)."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from verification.engine import DomainAnswer


class DictCache:
    def __init__(self) -> None:
        self.answers: dict[str, DomainAnswer] = {}

    def get_many(self, domains: Collection[str]) -> dict[str, DomainAnswer]:
        return {d: self.answers[d] for d in domains if d in self.answers}

    def put_many(self, answers: Iterable[DomainAnswer]) -> None:
        self.answers.update((answer.domain, answer) for answer in answers)
