"""bench/dnsd.py: the bench's DNS server process, warmed with a list's domains, answers them as its
`behaviour` says, and what it warms is every domain the list's rows name."""

from __future__ import annotations

import os

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

from bench.data import generate
from bench.dnsd import list_domains, start_dns
from bench.procs import Processes


def test_the_warmed_domains_are_those_of_the_rows_broken_ones_included() -> None:
    data = generate(2_000)
    domains = list_domains(data)
    for row in data.rows:
        assert row.rpartition("@")[2].strip().lower() in domains
    assert {"gmail.com", "nx0.com", "nomx0.com"} <= domains


def test_a_warmed_server_answers_the_list_domains_as_their_names_say() -> None:
    data = generate(500)
    with Processes(dict(os.environ)) as processes:
        server = start_dns(processes, 0.0, warm=data)
        company = next(d for d in sorted(list_domains(data)) if d.startswith("co"))

        def ask(name: str) -> dns.message.Message:
            return dns.query.udp(dns.message.make_query(name, dns.rdatatype.MX), server.host, 2, port=server.port)

        answer = ask(company)
        assert [str(rr.exchange) for rr in answer.answer[0]] == [f"mx1.{company}.", f"mx2.{company}."]
        assert ask("nx0.com").rcode() == dns.rcode.NXDOMAIN
