"""Refusals by domain code, free of HTTP (apikit/exceptions.py maps them to the contract's errors)."""

from __future__ import annotations


class DomainError(Exception):
    """A refusal by domain code (a service, a model, a task), free of HTTP.

    `code` is the contract's stable error code; the API layer (`as_api_error`) gives it its
    HTTP status, and the portal shows `message` on the form field named by `param`. A refusal
    that always says the same declares its `message` on the class and is raised bare.
    """

    code = "invalid_request"
    message = "The request was refused."
    param: str | None = None
    retry_after: int | None = None  # seconds: the API sends it as Retry-After

    def __init__(self, message: str | None = None, param: str | None = None, *, code: str | None = None) -> None:
        if message is not None:
            self.message = message
        super().__init__(self.message)
        if param is not None:
            self.param = param
        if code is not None:
            self.code = code
