"""The deterministic data generator, and the DNS behaviour of every name it uses.

A domain's name says how DNS answers for it, so the DNS server needs no table:

- ``co<i>.com`` (company domains), the free providers, the disposable providers and
  any other name: MX records;
- ``nomx<i>.com``: an A record but no MX;
- ``nx<i>.com``: NXDOMAIN.
"""

from __future__ import annotations

import csv
import io
import random
from dataclasses import dataclass

from tests.support.dns_server import A_ONLY, MX, NXDOMAIN, Behaviour

SEED = 20_251_122

# About 60% of rows, weighted roughly by market share.
FREE_PROVIDERS: dict[str, int] = {
    "gmail.com": 30,
    "yahoo.com": 12,
    "hotmail.com": 10,
    "outlook.com": 9,
    "aol.com": 5,
    "icloud.com": 8,
    "gmx.de": 5,
    "web.de": 4,
    "mail.ru": 5,
    "yandex.ru": 4,
    "protonmail.com": 4,
    "live.com": 4,
}
# All in the disposable_email_domains blocklist.
DISPOSABLE = ("mailinator.com", "guerrillamail.com", "yopmail.com", "10minutemail.com", "sharklasers.com")
ROLES = ("info", "admin", "support", "sales", "contact", "billing", "noreply", "office")
FIRST = ("anna", "ben", "carla", "dave", "eva", "felix", "greta", "hugo", "ines", "jan", "kim", "lena", "max", "nora")
LAST = ("smith", "jones", "muller", "garcia", "rossi", "novak", "kim", "ito", "silva", "berg", "ivanova", "dubois")

# Share of rows per kind; the rest are company mailboxes.
MIX = {
    "free": 0.60,
    "invalid": 0.03,
    "no_mx": 0.02,
    "nxdomain": 0.02,
    "disposable": 0.02,
    "role": 0.03,
    "duplicate": 0.03,
}


def behaviour(name: str) -> Behaviour:
    """The DNS server's answer for ``name``, read from the name itself."""
    label = name.lower().rstrip(".").split(".")[0]
    if label.startswith("nomx"):
        return A_ONLY
    if label.startswith("nx"):
        return NXDOMAIN
    return MX(f"mx1.{name}", f"mx2.{name}")


@dataclass(frozen=True)
class Dataset:
    rows: list[str]
    domains: int

    @property
    def unique(self) -> int:
        """Distinct addresses once trimmed and lowercased, as the service counts them."""
        return len(dict.fromkeys(row.strip().lower() for row in self.rows))

    def csv_bytes(self) -> bytes:
        return ("email\n" + "\n".join(self.rows) + "\n").encode()

    def wide_csv_bytes(self, target_bytes: int, seed: int = SEED) -> bytes:
        """The same addresses as `csv_bytes`, third of six columns under a header without `email`
        (found by content, as a CRM export would be), the last column padded to just under `target_bytes`."""
        rng = random.Random(seed + 2)
        header = "Name,Company,Contact,City,Lead Score,Notes\n"
        cells = [
            f"{rng.choice(FIRST)} {rng.choice(LAST)},Company {i % 997},{row},Berlin,{i % 100}"
            for i, row in enumerate(self.rows)
        ]
        base = len(header) + sum(len(line.encode()) + 2 for line in cells)  # the comma and newline of each
        pad = max(0, (target_bytes - 1024 - base) // max(1, len(cells)))
        return (header + "".join(f"{line},{'x' * pad}\n" for line in cells)).encode()


def default_domains(rows: int) -> int:
    return max(1, rows // 5)


def generate(rows: int, domains: int | None = None, seed: int = SEED) -> Dataset:
    """``rows`` addresses in a fixed mix; company mailboxes spread over ``domains`` domains."""
    domains = domains or default_domains(rows)
    rng = random.Random(seed)
    company_order = list(range(domains))
    rng.shuffle(company_order)
    kinds = list(MIX) + ["company"]
    weights = [*MIX.values(), 1 - sum(MIX.values())]
    providers, shares = list(FREE_PROVIDERS), list(FREE_PROVIDERS.values())
    small = max(1, domains // 50)  # the no-MX and NXDOMAIN families
    out: list[str] = []
    companies = 0
    for i in range(rows):
        kind = rng.choices(kinds, weights)[0]
        if kind == "duplicate" and out:
            previous = rng.choice(out)
            out.append(previous.upper() if rng.random() < 0.3 else previous)
            continue
        person = f"{rng.choice(FIRST)}.{rng.choice(LAST)}{i}"
        if kind == "free":
            out.append(f"{person}@{rng.choices(providers, shares)[0]}")
        elif kind == "invalid":
            out.append(_invalid(rng, i, domains))
        elif kind == "no_mx":
            out.append(f"{person}@nomx{rng.randrange(small)}.com")
        elif kind == "nxdomain":
            out.append(f"{person}@nx{rng.randrange(small)}.com")
        elif kind == "disposable":
            out.append(f"{person}@{rng.choice(DISPOSABLE)}")
        elif kind == "role":
            out.append(f"{rng.choice(ROLES)}@co{rng.randrange(domains)}.com")
        else:
            out.append(f"{person}@co{company_order[companies % domains]}.com")
            companies += 1
    return Dataset(out, domains)


def _invalid(rng: random.Random, i: int, domains: int) -> str:
    domain = f"co{rng.randrange(domains)}.com"
    return rng.choice(
        (
            f"user{i}.{domain}",  # no @
            f"user..{i}@{domain}",  # consecutive dots
            f"user{i}@",  # no domain
            f"user{i}@localhost",  # not a public domain
            f"user {i}@{domain}",  # a space
            f"user{i}@@{domain}",
        )
    )


def wide_csv(target_bytes: int, max_rows: int = 100_000, seed: int = SEED) -> bytes:
    """A CRM-export-like CSV (email plus other columns) just under ``target_bytes``, at most ``max_rows`` rows."""
    rng = random.Random(seed + 1)
    header = ["email", "first_name", "last_name", "company", "city", "notes"]
    per_row = target_bytes // max_rows
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    size = len(buffer.getvalue().encode())
    lines: list[str] = [buffer.getvalue()]
    for i in range(max_rows):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        cells = [f"{first}.{last}{i}@co{i % 20_000}.com", first, last, f"Company {i % 20_000}", "Berlin", ""]
        line = ",".join(cells)
        cells[-1] = "x" * max(0, per_row - len(line) - 2)
        line = ",".join(cells) + "\n"
        if size + len(line) > target_bytes:
            break
        lines.append(line)
        size += len(line)
    return "".join(lines).encode()
