from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "apikit"
    label = "api"  # the label its tables and migrations were made under

    def ready(self) -> None:
        from apikit import schema  # noqa: F401  (registers the OpenAPI auth extension)
