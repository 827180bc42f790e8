"""What every authenticated /v1 view shares."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponseBase
from rest_framework.request import Request
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from accounts.authentication import ApiClient
from accounts.models import Account


class AccountAPIView(APIView):
    """An API view acting for the account that owns the request's key."""

    @property
    def account(self) -> Account:
        client = self.request.user
        assert isinstance(client, ApiClient)
        return client.account

    def finalize_response(self, request: Request, response: HttpResponseBase, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        client = getattr(request, "_user", None)  # not request.user: that would authenticate again
        if isinstance(client, ApiClient):
            response["X-Credits-Remaining"] = str(client.account.credit_balance)
        return response


def validated(serializer_class: type[Serializer], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
