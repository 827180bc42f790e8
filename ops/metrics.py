"""/metrics' registries: the counters of every process (lib/metrics.py) plus gauges read from the database."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ops import machine
from verification.egresses import egress_health_all
from verification.resolver import resolver_health

logger = logging.getLogger(__name__)


class DatabaseGauges(Collector):
    """Read at each scrape, so every web process reports the same value."""

    def collect(self) -> Iterator[Metric]:
        queue = machine.queue()
        yield GaugeMetricFamily("verifier_queue_depth", "Chunks of bulk jobs waiting for a worker.", value=queue.depth)
        yield GaugeMetricFamily(
            "verifier_queue_oldest_seconds", "How long the oldest waiting chunk has waited.", queue.oldest_age_seconds
        )


class ResolverGauge(Collector):
    """1 while the DNS resolver is broken (verification/canaries.py); absent when the check is off."""

    def collect(self) -> Iterator[Metric]:
        health = resolver_health()
        if health is not None:
            yield GaugeMetricFamily(
                "verifier_dns_resolver_broken",
                "1 while the DNS resolver fails every canary name: verdicts it would decide are withheld.",
                value=int(health.broken),
            )


class EgressGauge(Collector):
    """Per SMTP egress, 1 while it takes sessions and its identity is not misconfigured, else 0; and
    per egress and blocklist zone, 1 while the zone lists it (verification/egresses.py)."""

    def collect(self) -> Iterator[Metric]:
        healthy = GaugeMetricFamily(
            "verifier_smtp_egress_healthy",
            "1 while the SMTP egress takes sessions and its identity checks out; 0 while it rests "
            "(reputation refusals, a blocklist listing) or is misconfigured.",
            labels=["egress"],
        )
        listed = GaugeMetricFamily(
            "verifier_smtp_egress_listed",
            "1 while the blocklist zone lists the SMTP egress's address, else 0.",
            labels=["egress", "zone"],
        )
        for health in egress_health_all():
            healthy.add_metric([health.name], int(health.healthy))
            for zone in health.zones:
                listed.add_metric([health.name, zone.shown], int(zone in health.listed))
        yield healthy
        yield listed


def _process_registry() -> CollectorRegistry:
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # every worker's files in the shared folder
    return registry


def exposition() -> bytes:
    """The process counters always; each set of gauges only when what it reads answers (the
    database, the cache): a scrape with the database down still has every counter."""
    text = generate_latest(_process_registry())
    for collector in (DatabaseGauges(), ResolverGauge(), EgressGauge()):
        gauges = CollectorRegistry()
        gauges.register(collector)
        try:
            text += generate_latest(gauges)
        except Exception:  # the gauges are left out, and the scrape goes on
            logger.warning("metrics: %s left out", type(collector).__name__, exc_info=True)
    return text
