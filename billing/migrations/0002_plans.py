from django.db import migrations

from accounts.plans import PLANS, plan_defaults


def create_plans(apps, schema_editor):
    Plan = apps.get_model("billing", "Plan")
    for code, *_ in PLANS:
        Plan.objects.update_or_create(code=code, defaults=plan_defaults(code))


class Migration(migrations.Migration):
    dependencies = [("billing", "0001_initial")]
    operations = [migrations.RunPython(create_plans, migrations.RunPython.noop)]
