from __future__ import annotations

from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from accounts.models import Account, ApiKey
from lib import logs


@dataclass(frozen=True, slots=True)
class ApiClient:
    """Who is calling the API: `request.user` for key-authenticated requests."""

    account: Account
    key: ApiKey
    is_authenticated: bool = True


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[ApiClient, ApiKey] | None:
        scheme, _, token = request.META.get("HTTP_AUTHORIZATION", "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        key = ApiKey.objects.find(token)
        if key is None:
            raise AuthenticationFailed
        key.touch()
        logs.bind(account_id=key.account.pk)
        return ApiClient(account=key.account, key=key), key

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'
