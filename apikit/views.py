"""What every authenticated /v1 view shares."""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from accounts.models import Account, ApiKey
from accounts.permissions import Action
from apikit.authentication import ApiClient
from apikit.exceptions import ApiError
from apikit.key_throttle import rate_limit_of

IDEMPOTENCY_HEADER = "Idempotency-Key"
IDEMPOTENCY_PARAMETER = OpenApiParameter(
    IDEMPOTENCY_HEADER,
    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x20-\\x7e]+$"},
    OpenApiParameter.HEADER,
    description="Optional. The same key and body within 24 h replays the first response and costs nothing.",
)


class AccountAPIView(APIView):
    """An API view acting for the account that owns the request's key.

    `permission` names the action of each method, checked by apikit.permissions.KeyPermitted.
    `live_only`, when set, is why a test key is refused here (403 key_not_permitted): the sandbox
    never reaches the account's live data, nor changes it.
    """

    permission: ClassVar[dict[str, Action]] = {}
    live_only: ClassVar[str] = ""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if self.live_only and not self.key.is_live:
            raise ApiError(403, "key_not_permitted", self.live_only)

    @property
    def account(self) -> Account:
        return self.client.account

    @property
    def key(self) -> ApiKey:
        """The calling key: its `mode` says live or sandbox (test keys), and what the caller may see."""
        return self.client.key

    @property
    def client(self) -> ApiClient:
        client = self.request.user
        assert isinstance(client, ApiClient)
        return client

    def finalize_response(self, request: Request, response: Any, *args: Any, **kwargs: Any) -> Any:
        response = super().finalize_response(request, response, *args, **kwargs)
        client = getattr(request, "_user", None)  # not request.user: that would authenticate again
        if isinstance(client, ApiClient) and not client.key.is_publishable:  # a web page sees no balance
            response["X-Credits-Remaining"] = str(client.account.credit_balance)
        limit = rate_limit_of(request)
        if limit is not None:
            for name, value in limit.headers().items():
                response[name] = value
        return response


def validated(serializer_class: type[Serializer], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable and machine-readable, e.g. insufficient_credits.")
    message = serializers.CharField(help_text="A sentence for people; may change.")
    param = serializers.CharField(allow_null=True, help_text="The request field at fault, if there is one.")


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


# Every authenticated operation can answer these, whatever it does (414 and 431 come from
# gunicorn with config/gunicorn.conf.py, before the application sees the request).
_EVERY_OPERATION = (401, 403, 406, 414, 429, 431, 500, 503)
# And every operation that reads a request body these.
BODY_ERRORS = (400, 413, 415)


def error_responses(*statuses: int, described: dict[int, str] | None = None) -> dict[int, OpenApiResponse]:
    """OpenAPI entries for the errors an operation can answer, all in the one error shape.

    `described` says what a status means for this operation where the generic text would mislead.
    """
    texts = _DESCRIPTIONS | (described or {})
    every = sorted({*statuses, *_EVERY_OPERATION})
    return {status: OpenApiResponse(ErrorSerializer, description=texts[status]) for status in every}


_DESCRIPTIONS = {
    400: "invalid_request, deep_mode_disabled, invalid_file or invalid_callback_url",
    401: "authentication_required or invalid_api_key (with WWW-Authenticate: Bearer)",
    402: "insufficient_credits, or key_spend_cap_reached: the key's daily or monthly spend cap",
    403: "key_not_permitted: the key's scope, expiry or IP allow-list (or its creator's role) rules this out; "
    "a publishable key may only POST /v1/verify, from one of its allowed origins",
    404: "not_found",
    406: "not_acceptable: the Accept header rules out application/json",
    409: "idempotency_key_in_use",
    410: "results_expired: the job's files were deleted after the retention period",
    413: "request_too_large (a JSON body over 16 KB; 1 MB for the batch and feedback calls) or file_too_large",
    414: "uri_too_long: the request line is over 8,190 bytes (answered by gunicorn, in this shape)",
    415: "unsupported_media_type",
    422: "idempotency_key_reused or too_many_rows",
    429: "rate_limited (see Retry-After), or for a deep request too_many_deep_requests",
    451: "address_objected: the person at this address objected to its verification (docs/privacy.md)",
    431: "request_headers_too_large: a header over 8,190 bytes or more than 100 (answered by gunicorn)",
    500: "internal_error",
    503: "service_unavailable: the database, cache or storage cannot be reached; nothing was charged (see Retry-After)",
}
