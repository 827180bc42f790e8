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
from verification.engine.syntax import normalise, split


def test_the_warmed_domains_include_every_domain_the_engine_looks_up() -> None:
    data = generate(2_000)
    looked_up = {parts[1] for row in data.rows if (parts := split(normalise(row))) is not None}
    assert looked_up <= list_domains(data)
    assert {"gmail.com", "nx0.com", "nomx0.com"} <= looked_up


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
