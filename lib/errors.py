"""Refusals by domain code, free of HTTP (api/exceptions.py maps them to the contract's errors)."""

from __future__ import annotations


class DomainError(Exception):
    """A refusal by domain code (a service, a model, a task), free of HTTP.

    `code` is the contract's stable error code; the API layer (`as_api_error`) gives it its
    HTTP status, and the portal shows `message` on the form field named by `param`.
    """

    code = "invalid_request"
    param: str | None = None

    def __init__(self, message: str, param: str | None = None, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if param is not None:
            self.param = param
        if code is not None:
            self.code = code
