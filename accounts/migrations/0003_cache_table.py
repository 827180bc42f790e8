from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    # The database cache (rate-limit counters when REDIS_URL is unset) needs its table;
    # creating it here means `migrate` alone sets up a working service and test database.
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_initial")]
    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
