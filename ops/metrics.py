"""/metrics' registries: the counters of every process (lib/metrics.py) plus gauges read from the database."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ops import machine
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
    for collector in (DatabaseGauges(), ResolverGauge()):
        gauges = CollectorRegistry()
        gauges.register(collector)
        try:
            text += generate_latest(gauges)
        except Exception:  # the gauges are left out, and the scrape goes on
            logger.warning("metrics: %s left out", type(collector).__name__, exc_info=True)
    return text
