# Plan's table leaves the name it had in billing (billing_plan) for its own app's: rows and keys stay.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_plan_from_billing'),
    ]

    operations = [
        migrations.AlterModelTable(
            name='plan',
            table=None,
        ),
    ]
