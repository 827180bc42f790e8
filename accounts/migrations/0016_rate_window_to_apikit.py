# RateWindow now lives in api (apikit/models.py, api 0004): only Django's state forgets it here;
# the table and its rows stay where they are.
from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0015_apikey_key_mode"),
        ("api", "0004_rate_window_from_accounts"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[migrations.DeleteModel(name="RateWindow")]),
    ]
