"""Sign-up, log-in (with throttling), password change and reset."""

from __future__ import annotations

import io
import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_login_failed
from django.core import mail
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Account, LoginWindow
from billing.models import LedgerEntry
from lib.mail import ConsoleBackend
from tests.conftest import Persona, make_persona
from tests.support.db import committed_db
from tests.support.threads import run_at_once

PASSWORD = "correct horse battery staple"


def sign_up(client: Client, email: str = "new@company.example.com", password: str = "a-long-unusual-passphrase") -> Any:
    return client.post(reverse("signup"), {"email": email, "password": password})


def log_in(client: Client, email: str, password: str, address: str = "203.0.113.7") -> Any:
    return client.post(reverse("login"), {"username": email, "password": password}, REMOTE_ADDR=address)


def test_sign_up_opens_a_free_account_whose_100_credits_wait_for_the_mailed_link(db: None) -> None:
    response = sign_up(Client(), email="New@Company.example.com")
    account = Account.objects.get(owner__email="new@company.example.com")
    assert response.status_code == 302
    assert (account.plan.code, account.credit_balance, account.email_confirmed_at) == ("free", 0, None)
    assert mail.outbox[-1].to == ["new@company.example.com"]
    Client().get(confirmation_link())
    account.refresh_from_db()
    assert account.credit_balance == 100 and account.email_confirmed_at is not None
    grants = LedgerEntry.objects.filter(account=account)
    assert [(e.kind, e.amount, e.balance_after) for e in grants] == [("grant", 100, 100)]


def confirmation_link() -> str:
    found = re.search(r"http://\S+(/signup/confirm/\S+)", mail.outbox[-1].body)
    assert found is not None, "no confirmation link in the mail"
    return found.group(1)


def test_the_confirmation_link_grants_the_credits_once(db: None) -> None:
    sign_up(Client())
    link = confirmation_link()
    assert "data-confirmed" in Client().get(link).content.decode()
    again = Client().get(link).content.decode()
    assert "already confirmed" in again
    assert Account.objects.get().credit_balance == 100


def test_a_confirmation_link_expires_after_seven_days_and_a_forged_one_is_refused(db: None) -> None:
    sign_up(Client())
    link = confirmation_link()
    with time_machine.travel(timezone.now() + timedelta(days=7, seconds=1)):
        assert Client().get(link).status_code == 404
    assert Client().get(link[:-3] + ("abc" if not link.endswith("abc") else "abd")).status_code == 404
    assert Account.objects.get().credit_balance == 0


def test_the_link_can_be_sent_again_three_times_an_hour(db: None) -> None:
    client = Client()
    sign_up(client)
    for _ in range(4):
        client.post(reverse("signup-confirm-resend"))
    assert len(mail.outbox) == 1 + 3


def test_sign_ups_from_one_address_are_limited_to_five_an_hour(db: None) -> None:
    for n in range(6):
        response = sign_up(Client(), email=f"farm{n}@company.example.com")
    assert "Too many sign-ups from your address" in response.content.decode()
    assert Account.objects.count() == 5


def test_log_ins_from_one_address_are_limited_whatever_the_email(owner: Persona) -> None:
    for n in range(30):
        log_in(Client(), f"guess{n}@company.example.com", "wrong", address="198.51.100.77")
    refused = log_in(Client(), owner.account.owner.email, PASSWORD, address="198.51.100.77")
    assert "Too many log-in attempts from your address" in refused.content.decode()
    assert log_in(Client(), owner.account.owner.email, PASSWORD, address="198.51.100.78").status_code == 302


def test_password_reset_mails_to_one_address_are_limited_to_three_an_hour(owner: Persona) -> None:
    email = owner.account.owner.email
    for _ in range(4):
        response = Client().post(reverse("password_reset"), {"email": email})
    assert "Too many reset requests" in response.content.decode()
    assert len(mail.outbox) == 3


def test_sign_up_logs_the_new_owner_in(db: None) -> None:
    client = Client()
    response = sign_up(client)
    assert response["Location"] == reverse("dashboard")
    assert "100" in client.get(reverse("dashboard")).content.decode()


def test_sign_up_issues_no_key_until_asked(db: None) -> None:
    sign_up(Client())
    assert not Account.objects.get().api_keys.exists()


def test_sign_up_refuses_an_email_already_in_use(owner: Persona) -> None:
    response = sign_up(Client(), email=owner.account.owner.email.upper())
    assert response.status_code == 200
    assert "already exists" in response.content.decode()
    assert Account.objects.count() == 1


def test_sign_up_refuses_a_weak_password(db: None) -> None:
    response = sign_up(Client(), password="password")
    assert response.status_code == 200
    assert "too common" in response.content.decode()
    assert not get_user_model().objects.exists()


def test_log_in_by_email_leads_to_the_dashboard(owner: Persona) -> None:
    response = log_in(Client(), owner.account.owner.email.upper(), PASSWORD)
    assert response.status_code == 302
    assert response["Location"] == reverse("dashboard")


def test_five_failures_lock_out_even_the_right_password(owner: Persona) -> None:
    client, email = Client(), owner.account.owner.email
    for _ in range(5):
        assert log_in(client, email, "wrong").status_code == 200
    response = log_in(client, email, PASSWORD)
    assert response.status_code == 200
    assert "Too many failed log-in attempts" in response.content.decode()


def test_lock_out_is_per_address(owner: Persona) -> None:
    client, email = Client(), owner.account.owner.email
    for _ in range(5):
        log_in(client, email, "wrong", address="203.0.113.7")
    assert log_in(client, email, PASSWORD, address="198.51.100.9").status_code == 302


def test_lock_out_ends_after_15_minutes(owner: Persona) -> None:
    client, email = Client(), owner.account.owner.email
    with time_machine.travel(timezone.now(), tick=False) as clock:
        for _ in range(5):
            log_in(client, email, "wrong")
        clock.shift(timedelta(minutes=15, seconds=1))
        assert log_in(client, email, PASSWORD).status_code == 302


def test_a_post_without_password_does_not_clear_earlier_failures(owner: Persona) -> None:
    client, email = Client(), owner.account.owner.email
    for _ in range(4):
        log_in(client, email, "wrong")
    log_in(client, email, "")
    log_in(client, email, "wrong")
    assert "Too many failed log-in attempts" in log_in(client, email, PASSWORD).content.decode()


def test_closed_log_in_windows_are_deleted_by_later_attempts(owner: Persona) -> None:
    email = owner.account.owner.email
    with time_machine.travel(timezone.now(), tick=False) as clock:
        log_in(Client(), email, "wrong", address="203.0.113.7")
        clock.shift(timedelta(minutes=15, seconds=1))
        log_in(Client(), email, "wrong", address="198.51.100.9")
    assert LoginWindow.objects.count() == 2  # the second attempt's: email with address, and address alone


def test_admin_log_in_is_throttled_too(staff: Any) -> None:
    client = Client()
    for _ in range(5):
        client.post(
            reverse("admin:login"), {"username": staff.username, "password": "wrong"}, REMOTE_ADDR="203.0.113.7"
        )
    data = {"username": staff.username, "password": PASSWORD}
    response = client.post(reverse("admin:login"), data, REMOTE_ADDR="203.0.113.7")
    assert "Too many failed log-in attempts" in response.content.decode()


def test_a_successful_log_in_clears_earlier_failures(owner: Persona) -> None:
    client, email = Client(), owner.account.owner.email
    for _ in range(4):
        log_in(client, email, "wrong")
    assert log_in(client, email, PASSWORD).status_code == 302
    for _ in range(4):
        log_in(Client(), email, "wrong")
    assert log_in(Client(), email, PASSWORD).status_code == 302


def test_password_change_needs_the_old_password(owner: Persona) -> None:
    client = Client()
    client.force_login(owner.account.owner)
    new = "another-long-passphrase"
    data = {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
    assert client.post(reverse("password_change"), data).status_code == 302
    assert log_in(Client(), owner.account.owner.email, new).status_code == 302


@pytest.mark.parametrize("known", [True, False])
def test_password_reset_mails_a_link_only_to_a_known_address(owner: Persona, known: bool) -> None:
    email = owner.account.owner.email if known else "stranger@company.example.com"
    response = Client().post(reverse("password_reset"), {"email": email})
    assert response["Location"] == reverse("password_reset_done")
    assert len(mail.outbox) == (1 if known else 0)


def test_password_reset_link_sets_a_new_password(owner: Persona) -> None:
    Client().post(reverse("password_reset"), {"email": owner.account.owner.email})
    link = next(line for line in mail.outbox[0].body.splitlines() if "/password/reset/" in line).strip()
    client = Client()
    form_page = client.get(link, follow=True)
    new = "a-brand-new-passphrase"
    client.post(form_page.request["PATH_INFO"], {"new_password1": new, "new_password2": new})
    assert log_in(Client(), owner.account.owner.email, new).status_code == 302


def test_password_reset_link_is_built_from_site_url_not_the_host_header(owner: Persona, settings: Any) -> None:
    settings.SITE_URL = "https://verify.example.com"
    Client().post(reverse("password_reset"), {"email": owner.account.owner.email}, headers={"Host": "127.0.0.1:1"})
    link = next(line for line in mail.outbox[0].body.splitlines() if "/password/reset/" in line).strip()
    assert link.startswith("https://verify.example.com/password/reset/")


def test_the_printed_reset_mail_is_readable_and_its_link_works(owner: Persona) -> None:
    Client().post(reverse("password_reset"), {"email": owner.account.owner.email})
    printed = io.StringIO()
    ConsoleBackend(stream=printed).send_messages(mail.outbox)
    assert "quoted-printable" not in printed.getvalue() and "=3D" not in printed.getvalue()
    link = next(line for line in printed.getvalue().splitlines() if "/password/reset/" in line).strip()
    client = Client()
    form_page = client.get(urlsplit(link).path, follow=True)
    assert form_page.status_code == 200
    new = "a-printed-passphrase"
    client.post(form_page.request["PATH_INFO"], {"new_password1": new, "new_password2": new})
    assert log_in(Client(), owner.account.owner.email, new).status_code == 302


def test_printed_mail_is_framed_with_its_recipient_and_subject_on_top(db: None) -> None:
    sign_up(Client(), email="maria@shop.example.com")
    printed = io.StringIO()
    ConsoleBackend(stream=printed).send_messages(mail.outbox)
    lines = printed.getvalue().strip().splitlines()
    frame = "=" * 79
    assert lines[0] == frame and lines[2] == frame and lines[-1] == frame
    assert lines[1] == f"MAIL to maria@shop.example.com: {mail.outbox[0].subject}"
    assert any("/signup/confirm/" in line for line in lines)


@committed_db
def test_parallel_wrong_passwords_get_only_five_password_checks() -> None:
    email = make_persona(plan_code="free", credits=1).account.owner.email
    checks = []
    user_login_failed.connect(receiver := lambda **kwargs: checks.append(1), weak=False)
    try:
        statuses = run_at_once(40, lambda: log_in(Client(), email, "wrong").status_code)
    finally:
        user_login_failed.disconnect(receiver)
    assert statuses == [200] * 40
    assert len(checks) == 5


def test_the_confirmation_mail_as_printed_holds_the_link_whole(db: None) -> None:
    sign_up(Client())
    printed = mail.outbox[-1].message().as_string()
    assert "quoted-printable" not in printed and f"{confirmation_link()}\n" in printed
