"""README and docs/lists.md: role local parts, separator-insensitive, in seven languages."""

from __future__ import annotations

import pytest

from tests.conftest import Persona
from verification.engine import lists

ROLES = [
    # the misses
    "donotreply",
    "do-not-reply",
    "no.reply",
    "no_reply",
    "bounces",
    "payroll",
    "reception",
    "shipping",
    "returns",
    "kontakt",
    "contacto",
    "ventas",
    # English
    "info",
    "admin",
    "billing",
    "careers",
    "hello",
    "help",
    "hr",
    "jobs",
    "marketing",
    "newsletter",
    "noreply",
    "office",
    "orders",
    "postmaster",
    "press",
    "privacy",
    "sales",
    "security",
    "support",
    "team",
    "webmaster",
    "mailer-daemon",
    "customer.service",
    "contact-us",
    "accounts_payable",
    "list-request",
    "abuse",
    "hostmaster",
    # from mixmaxhq/role-based-email-addresses, reviewed
    "customer-success",
    "all.staff",
    "it_support",
    "front-desk",
    "human.resources",
    # German, French, Spanish, Italian, Portuguese, Dutch
    "vertrieb",
    "bestellung",
    "buchhaltung",
    "karriere",
    "datenschutz",
    "keine-antwort",
    "ne-pas-repondre",
    "service.client",
    "recrutement",
    "facturation",
    "comptabilite",
    "rrhh",
    "soporte",
    "pedidos",
    "no-responder",
    "atencion.al.cliente",
    "vendite",
    "assistenza",
    "contatti",
    "ufficio.stampa",
    "non-rispondere",
    "vendas",
    "contato",
    "atendimento",
    "nao-responda",
    "faturamento",
    "verkoop",
    "klantenservice",
    "vacatures",
    "niet-antwoorden",
    "boekhouding",
    # a +tag never hides a role
    "support+tickets",
    "no-reply+abc",
]

PEOPLE = [
    "jane", "john.smith", "j.doe", "maria.garcia", "hans-peter", "jean_luc", "anna.rossi",
    "joao.silva", "pieter.de.vries", "sales.jane", "info.kim", "helen", "bill", "mark",
    "teamo", "jobsworth", "pressley", "shipley", "adminsson", "contactless", "rootsman",
    "salesforce", "hrvoje", "itzel", "prakash", "office.max", "vendela", "karin", "ines",
    "r.o.o.t.s", "kontaktlinse", "carla", "benoit", "mueller", "jan.jansen", "li.wei",
]  # fmt: skip


@pytest.mark.parametrize("local", ROLES)
def test_role_local_parts_match_whatever_the_separators(local: str) -> None:
    assert lists.is_role(local)


@pytest.mark.parametrize("local", PEOPLE)
def test_personal_local_parts_are_not_roles(local: str) -> None:
    assert not lists.is_role(local)


def test_role_list_is_clean_and_grouped() -> None:
    lines = (lists.DATA_DIR / "role_local_parts.txt").read_text(encoding="utf-8").split("\n\n")
    groups = [[line for line in block.splitlines() if not line.startswith("#")] for block in lines[1:]]
    entries = [entry for group in groups for entry in group]
    assert all(block.startswith("# ") for block in lines[1:])  # each group says what it holds
    assert all(group == sorted(group) for group in groups)
    assert len(entries) == len(set(map(lists.role_key, entries))) >= 200
    assert all(entry == lists.role_key(entry) for entry in entries)


@pytest.mark.parametrize("local", [*ROLES[:12], "Info+news", "SUPPORT", "buchhaltung", "ufficio.stampa"])
def test_api_judges_separated_and_foreign_roles_role_based(owner: Persona, local: str) -> None:
    body = owner.verify(f"{local}@good.com").json()
    assert (body["status"], body["sub_status"], body["checks"]["is_role_based"]) == ("risky", "role_based", True)


@pytest.mark.parametrize("local", ["sales.jane", "info.kim", "jobsworth", "kontaktlinse", "r.o.o.t.s", "hans-peter"])
def test_api_judges_a_person_with_a_role_like_local_part_valid(owner: Persona, local: str) -> None:
    body = owner.verify(f"{local}@good.com").json()
    assert (body["status"], body["checks"]["is_role_based"]) == ("valid", False)
