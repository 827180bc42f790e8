from django.apps import AppConfig

from lib.schedules import keep_schedules


class BillingConfig(AppConfig):
    name = "billing"

    def ready(self) -> None:
        from billing import queue  # imports django_q: only once the apps are ready

        keep_schedules(self, *queue.SCHEDULES)
