from django.db import migrations

PLANS = [
    # code, name, bulk, requests per second per key
    ("free", "Free", False, 5),
    ("starter", "Starter", True, 20),
    ("pro", "Pro", True, 50),
    ("enterprise", "Enterprise", True, 200),
]


def create_plans(apps, schema_editor):
    Plan = apps.get_model("billing", "Plan")
    for order, (code, name, bulk, rate) in enumerate(PLANS):
        Plan.objects.update_or_create(
            code=code, defaults={"name": name, "allows_bulk": bulk, "requests_per_second": rate, "sort_order": order}
        )


class Migration(migrations.Migration):
    dependencies = [("billing", "0001_initial")]
    operations = [migrations.RunPython(create_plans, migrations.RunPython.noop)]
