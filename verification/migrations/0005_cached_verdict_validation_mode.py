# A cached verdict's "mode" is fast or deep: named validation_mode, as on a job and in the API.
# A column rename: every cached verdict keeps its value.
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("verification", "0004_smtp_session_counts"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="cachedverdict", name="cached_verdict_unique"),
        migrations.RenameField(model_name="cachedverdict", old_name="mode", new_name="validation_mode"),
        migrations.AlterField(
            model_name="cachedverdict",
            name="validation_mode",
            field=models.CharField(choices=[("fast", "fast"), ("deep", "deep")], default="fast", max_length=10),
        ),
        migrations.AddConstraint(
            model_name="cachedverdict",
            constraint=models.UniqueConstraint(fields=("account", "email", "validation_mode"), name="cached_verdict_unique"),
        ),
    ]
