"""How much of what two public throwaway lists agree on we flag, and what we flag wrongly.

    python -m bench.disposable_coverage LIST_A LIST_B [--list FILE]

LIST_A and LIST_B: public throwaway lists, one domain a line, '#' comments. The measure is honest
only if at least one of them is held out, i.e. not among the sources of the list judged (their
names are printed first, from its header): see docs/lists.md for the lists we hold out.

Prints, judging by name only (the domain or a parent listed, free providers and
not_disposable.txt never; no DNS is asked):
- each list's size and the share of it the judged list already flags (near 100%: a source);
- their consensus (the domains both name) and the share of it flagged: the coverage;
- the false throwaway count: legitimate domains (tests/data/legitimate_domains.txt and every free
  provider) flagged by name, or through an MX host under them (mx1.<domain>).

--list FILE judges by another generated list instead of verification/data/disposable_domains.txt,
e.g. one rebuilt without a source (`manage.py refresh_disposable_domains ... --output FILE`) to
measure that source's consensus with a list it was not built from.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from verification.engine import disposable
from verification.engine.lists import DATA_DIR, free_providers

LEGITIMATE = Path(__file__).resolve().parent.parent / "tests" / "data" / "legitimate_domains.txt"


@dataclass(frozen=True)
class Judge:
    """The engine's verdict, or (with `listed`) the same rules over another list of names."""

    listed: frozenset[str] | None = None

    def __call__(self, domain: str, mx_host: str | None = None) -> bool:
        if self.listed is None:
            return disposable.is_disposable(domain, (mx_host,) if mx_host else ())
        if domain in disposable.never_disposable():
            return False
        return any(disposable.listed_in(name, self.listed) for name in (domain, mx_host) if name)


def read_domains(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {d for line in lines if (d := line.split("#", 1)[0].strip().lower().rstrip(".")) and "." in d}


def legitimate_domains() -> list[str]:
    """Real organisations, ISPs and mail hosts that must never be judged throwaway, free providers too."""
    return sorted(read_domains(LEGITIMATE) | free_providers())


def judge_by(path: Path | None) -> Judge:
    return Judge(None if path is None else frozenset(read_domains(path)))


def coverage(first: set[str], second: set[str], judge: Judge = Judge()) -> tuple[int, float]:
    consensus = first & second
    return len(consensus), share(consensus, judge)


def share(domains: Iterable[str], judge: Judge) -> float:
    judged = [judge(domain) for domain in domains]
    return sum(judged) / len(judged) if judged else 0.0


def false_throwaway(judge: Judge) -> list[str]:
    """Legitimate domains flagged by name, or as the parent of a company's MX host (mx1.<domain>)."""
    return [d for d in legitimate_domains() if judge(d) or judge("acme-widgets.example", f"mx1.{d}")]


def sources(path: Path) -> list[str]:
    """The header lines of a generated list that name its sources."""
    return [line[1:].strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#   ")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.disposable_coverage", description=__doc__.split("\n")[0])
    parser.add_argument("lists", nargs=2, type=Path, metavar="LIST")
    parser.add_argument("--list", type=Path, dest="judged", help="judge by this generated list instead of ours")
    args = parser.parse_args(argv)
    judged_path = args.judged or DATA_DIR / "disposable_domains.txt"
    judge = judge_by(args.judged)
    print(f"judged: {judged_path}, built from:", *(f"  {name}" for name in sources(judged_path)), sep="\n")
    first, second = (read_domains(path) for path in args.lists)
    for path, domains in zip(args.lists, (first, second), strict=True):
        print(f"{path}: {len(domains):,} domains, {share(domains, judge):.1%} flagged")
    size, covered = coverage(first, second, judge)
    print(f"consensus of the two: {size:,} domains, {covered:.1%} flagged (coverage)")
    wrong = false_throwaway(judge)
    print(f"false throwaway: {len(wrong)} of {len(legitimate_domains())} legitimate domains {wrong or ''}")


if __name__ == "__main__":
    main()
