"""The HTTP API's shared parts: the base view, error responses in the schema, throttling.

Apps' `apis.py` modules build their endpoints on these; `lib/` stays below every app.
"""
