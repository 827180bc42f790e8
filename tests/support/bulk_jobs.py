"""Bulk jobs as a customer drives them in tests: the lists uploaded, the job's body, its rows, its net charge."""

from __future__ import annotations

import csv
import io
import uuid
from datetime import timedelta
from typing import Any

import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from billing.models import LedgerEntry
from tests.support.personas import Persona


def csv_of(addresses: list[str]) -> bytes:
    return ("email\n" + "".join(f'"{a}"\n' for a in addresses)).encode()


def job_body(persona: Persona, job_id: str) -> dict[str, Any]:
    response = persona.get(f"/v1/jobs/{job_id}")
    assert response.status_code == 200
    return response.json()


def download(persona: Persona, url: str) -> list[list[str]]:
    response = persona.client.get(url.removeprefix("http://testserver"))
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8"))))


def bulk_net(persona: Persona, job_id: str) -> int:
    entries = LedgerEntry.objects.filter(account=persona.account, reference__startswith=job_id)
    return sum(entries.values_list("amount", flat=True))


def deep_upload(persona: Persona, rows: list[str], path: str = "/v1/verify/bulk", mode: str = "deep") -> Any:
    data = {"file": SimpleUploadedFile("list.csv", csv_of(rows), "text/csv"), "validation_mode": mode}
    return persona.client.post(path, data=data, headers=persona.auth({}))


def a_minute_later() -> Any:
    return time_machine.travel(timezone.now() + timedelta(seconds=61), tick=True)


def upload_with_names(persona: Persona, rows: list[str]) -> str:
    """A deep upload with a column of the customer's own beside the address."""
    content = "email,name\n" + "".join(f"{email},Name {n}\n" for n, email in enumerate(rows))
    data = {"file": SimpleUploadedFile("list.csv", content.encode(), "text/csv"), "validation_mode": "deep"}
    response = persona.client.post("/v1/verify/bulk", data=data, headers=persona.auth({}))
    assert response.status_code == 202, response.content
    return str(response.json()["id"])


def addresses(count: int) -> list[str]:
    """Each on a domain of its own, so every chunk waits on (slow) DNS."""
    tag = uuid.uuid4().hex[:6]
    return [f"user{i}@d{i}-{tag}.com" for i in range(count)]


# Half good (valid), a fifth with a null MX (invalid), a fifth disposable (risky), a tenth SERVFAIL (unknown).
MIX = {"good.com": 0.5, "nullmx.com": 0.2, "mailinator.com": 0.2, "servfail.com": 0.1}


def mixed_list(rows: int, *, tag: str = "u") -> bytes:
    lines, start = ["email,name"], 0
    for domain, share in MIX.items():
        count = round(rows * share)
        lines += [f"{tag}{i}@{domain},Person {i}" for i in range(start, start + count)]
        start += count
    return ("\n".join(lines) + "\n").encode()
