"""The portal's Guarantee page: this month's valid answers, bounces and refunds, by provider, and twelve months."""

from __future__ import annotations

import re

from tests.conftest import Persona
from tests.support.portal import logged_in


def figure(html: str, name: str) -> str:
    found = re.search(rf'data-figure="{name}">([^<]*)<', html)
    assert found is not None, name
    return found.group(1)


def test_the_page_shows_this_months_valid_answers_and_self_reported_bounces(owner: Persona) -> None:
    assert owner.verify("someone@gmail.com").json()["status"] == "valid"
    event = {"email": "someone@gmail.com", "outcome": "hard_bounce"}
    owner.post_json("/v1/feedback", {"events": [event]})
    html = logged_in(owner).get("/guarantee").content.decode()
    assert (figure(html, "valid"), figure(html, "bounced"), figure(html, "refunded")) == ("1", "1", "0")
    assert '<tr data-family="google"><th scope="row">Google</th><td>1</td><td>1</td><td>1</td>' in html
    assert html.count('class="chart-bar') == 12


def test_another_accounts_answers_are_not_on_the_page(owner: Persona, outsider: Persona) -> None:
    assert outsider.verify("someone@gmail.com").json()["status"] == "valid"
    assert figure(logged_in(owner).get("/guarantee").content.decode(), "valid") == "0"
