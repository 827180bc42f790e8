"""lib.outbound: which URLs may be called."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from lib.outbound import UnsafeUrl, check_url, is_public


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "192.0.2.5",
        "198.51.100.5",
        "203.0.113.5",
        "198.18.0.1",
        "::1",
        "::",
        "fd12::1",
        "fe80::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:169.254.169.254",
        "2002:7f00:1::",
        "64:ff9b::a9fe:a9fe",
        "2001:db8::1",
    ],
)
def test_non_public_addresses(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "2606:4700::6810:84e5", "::ffff:8.8.8.8"])
def test_public_addresses(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


def test_check_url_pins_the_checked_address() -> None:
    target = check_url("https://93.184.215.14:8443/hooks?x=1")
    assert (target.scheme, target.ip, target.port, target.path) == ("https", "93.184.215.14", 8443, "/hooks?x=1")


def test_private_networks_can_be_allowed_for_development(settings: Any) -> None:
    settings.CALLBACK_ALLOW_PRIVATE_NETWORKS = True
    assert check_url("http://127.0.0.1:9/").ip == "127.0.0.1"


def test_credentials_are_refused_even_when_private_networks_are_allowed(settings: Any) -> None:
    settings.CALLBACK_ALLOW_PRIVATE_NETWORKS = True
    with pytest.raises(UnsafeUrl):
        check_url("http://user:pw@127.0.0.1/")
