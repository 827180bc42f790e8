"""Helpers that every app's portal pages share (accounts' key and member pages, feedback's page)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from lib.errors import DomainError


def confirm_then(
    request: HttpRequest,
    *,
    act: Callable[[], str | None],
    done_message: str = "",
    done_url: str,
    page: dict[str, str],
) -> HttpResponse:
    """A destructive action: GET asks for confirmation (templates/confirm.html), POST does it and goes
    back. `act` may return the message to show (when it depends on what was done); a domain error it
    raises is shown as the error, nothing done."""
    if request.method == "POST":
        try:
            message = act() or done_message
        except DomainError as refused:
            messages.error(request, refused.message)
        else:
            messages.success(request, message)
        return redirect(done_url)
    return render(request, "confirm.html", page)
