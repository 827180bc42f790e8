from django.apps import AppConfig


class OpsConfig(AppConfig):
    """What operators look at: probes, metrics and the staff dashboard. Reads every app; none reads it."""

    name = "ops"
