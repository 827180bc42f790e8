"""What every authenticated /v1 view shares."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
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

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        client = getattr(request, "_user", None)  # not request.user: that would authenticate again
        if isinstance(client, ApiClient):
            response["X-Credits-Remaining"] = str(client.account.credit_balance)
        return response


def validated(serializer_class: type[Serializer], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    param = serializers.CharField(allow_null=True)


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """OpenAPI entries for the errors an endpoint can answer, all in the one error shape."""
    common = (401, 404, 405, 406, 413, 415, 429, 500)
    return {
        status: OpenApiResponse(ErrorSerializer, description=_DESCRIPTIONS[status]) for status in (*statuses, *common)
    }


_DESCRIPTIONS = {
    400: "invalid_request, deep_mode_disabled, invalid_file or invalid_callback_url",
    401: "authentication_required or invalid_api_key",
    402: "insufficient_credits",
    403: "plan_upgrade_required",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "idempotency_key_in_use",
    413: "request_too_large or file_too_large",
    415: "unsupported_media_type",
    422: "idempotency_key_reused or too_many_rows",
    429: "rate_limited (see Retry-After)",
    500: "internal_error",
}
