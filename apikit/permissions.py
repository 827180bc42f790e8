"""The API's door: each key-authenticated request is checked against the permission table.

Every API view names the action each of its methods performs (`permission = {"POST": Action.X}`);
the key's scope, expiry, IP allow-list and its creator's role decide (accounts/permissions.py).
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from accounts.permissions import key_refusal
from apikit.authentication import ApiClient
from apikit.exceptions import ApiError
from lib.client_address import client_address

# OPTIONS describes an endpoint and changes nothing: any valid key may ask.
_DESCRIBES = {"OPTIONS"}


class KeyPermitted(BasePermission):
    def has_permission(self, request: Request, view: Any) -> bool:
        client = request.user
        method = str(request.method)
        if not isinstance(client, ApiClient) or method in _DESCRIBES:
            return isinstance(client, ApiClient)
        if not hasattr(view, method.lower()):
            return True  # the view answers 405 method_not_allowed
        action = view.permission.get("GET" if method == "HEAD" else method)
        if action is None:
            raise AssertionError(f"{type(view).__name__}.permission has no rule for {method}")
        refusal = key_refusal(client.key, action, address=client_address(request), now=timezone.now())
        if refusal is not None:
            raise ApiError(403, "key_not_permitted", refusal)
        return True
