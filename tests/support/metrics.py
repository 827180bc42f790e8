"""Reading /metrics' text as Prometheus would: one value per (sample name, labels)."""

from __future__ import annotations

from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
# METRICS_TOKEN in the tests (the `metrics_on` fixture sets it).
TOKEN = "metrics-token-for-tests"


def scrape() -> Samples:
    """/metrics through the test client, as Prometheus would read it."""
    response = Client().get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    return parse(response.content.decode())


def parse(text: str) -> Samples:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)
