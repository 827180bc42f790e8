"""Settings for the address-keys scenario's "before" side (bench/address_key_cost.py): bench.settings,
with `lib.address_keys` replaced, in each process of the stack, by bench/unkeyed_addresses.py (the
normalised address for its key). Settings are imported before any app module, so every
`from lib.address_keys import …` of the service gets the stand-in; if one came first, this refuses.
"""

import sys

from django.core.exceptions import ImproperlyConfigured

from bench import unkeyed_addresses
from bench.settings import *  # noqa: F403

if sys.modules.get("lib.address_keys", unkeyed_addresses) is not unkeyed_addresses:
    raise ImproperlyConfigured("lib.address_keys was imported before bench.unkeyed_settings could replace it")
sys.modules["lib.address_keys"] = unkeyed_addresses
