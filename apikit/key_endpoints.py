"""The keys API: `GET/POST /v1/keys`, `PATCH/DELETE /v1/keys/{id}` (docs/keys.md).

For a live, full-scope secret key whose creator is an owner or admin (Action.KEYS_ADMIN): the
account's keys listed, made (the key shown in the 201 only), renamed, capped, re-bound to other
origins, revoked. Every change is in the account's audit log, done by the calling key.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.auditing import audit
from accounts.keys import KeyChange, change_summary, created_summary, key_change, key_create, key_describe
from accounts.models import ApiKey, AuditEvent, KeyMode
from accounts.permissions import Action
from apikit.exceptions import ApiError
from apikit.views import BODY_ERRORS, AccountAPIView, error_responses

Event = AuditEvent.Action
_CAP_HELP = "Credits the key may spend per UTC day (daily) or calendar month (monthly); null: no cap."


class KeySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=ApiKey.Kind.choices)
    mode = serializers.ChoiceField(choices=KeyMode.choices)
    scope = serializers.ChoiceField(choices=ApiKey.Scope.choices)
    prefix = serializers.CharField(help_text="The key's first characters (12; 16 for a publishable key).")
    name = serializers.CharField()
    allowed_origins = serializers.ListField(child=serializers.CharField(), help_text="Publishable keys only.")
    daily_cap = serializers.IntegerField(allow_null=True, help_text=_CAP_HELP)
    monthly_cap = serializers.IntegerField(allow_null=True, help_text=_CAP_HELP)
    spent_today = serializers.IntegerField(help_text="Credits counted against the daily cap since 00:00 UTC.")
    spent_this_month = serializers.IntegerField(help_text="Credits counted against the monthly cap this month.")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)


class NewKeySerializer(KeySerializer):
    key = serializers.CharField(help_text="The key itself: shown in this answer only, never again.")


class KeyListSerializer(serializers.Serializer):
    def get_fields(self) -> dict[str, serializers.Field]:
        return {"data": KeySerializer(many=True)}  # not a class attribute: it would hide Serializer.data


class KeyCreateSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=ApiKey.Kind.choices, default=ApiKey.Kind.SECRET)
    mode = serializers.ChoiceField(choices=KeyMode.choices, default=KeyMode.LIVE)
    scope = serializers.ChoiceField(
        choices=ApiKey.Scope.choices, required=False, help_text="Default full; a publishable key is verify."
    )
    name = serializers.CharField(max_length=100, default="Default")
    allowed_origins = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Publishable keys (required there): `scheme://host[:port]`, or `https://*.example.com` for one "
        "level of subdomain.",
    )
    daily_cap = serializers.IntegerField(
        allow_null=True, required=False, help_text=f"{_CAP_HELP} A publishable key gets 1000 unless given."
    )
    monthly_cap = serializers.IntegerField(allow_null=True, required=False, help_text=_CAP_HELP)


class KeyChangeSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False)
    allowed_origins = serializers.ListField(child=serializers.CharField(), required=False)
    daily_cap = serializers.IntegerField(allow_null=True, required=False, help_text=_CAP_HELP)
    monthly_cap = serializers.IntegerField(allow_null=True, required=False, help_text=_CAP_HELP)


_KEY_ADMIN = "For a live, full-scope secret key created by an owner or admin; any other key gets 403 key_not_permitted."


class KeysAPIView(AccountAPIView):
    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if not self.key.is_live:
            raise ApiError(403, "key_not_permitted", "A test key may not manage keys: use a live key.")


class KeyListApi(KeysAPIView):
    permission = {"GET": Action.KEYS_ADMIN, "POST": Action.KEYS_ADMIN}

    @extend_schema(
        operation_id="key_list",
        responses={200: KeyListSerializer, **error_responses()},
        summary="The account's active keys (never a key itself)",
        description=_KEY_ADMIN,
    )
    def get(self, request: Request) -> Response:
        keys = self.account.api_keys.active().order_by("created_at", "pk")
        return Response({"data": [KeySerializer(key_describe(key)).data for key in keys]})

    @extend_schema(
        operation_id="key_create",
        request=KeyCreateSerializer,
        responses={201: NewKeySerializer, **error_responses(*BODY_ERRORS)},
        summary="Make a key: secret or publishable, with caps; the key is in this answer only",
        description=_KEY_ADMIN,
    )
    def post(self, request: Request) -> Response:
        body = _body(request)
        key, raw = key_create(
            account=self.account,
            created_by=self.key.created_by,
            kind=body.get("kind", ApiKey.Kind.SECRET),
            key_mode=body.get("mode", KeyMode.LIVE),
            scope=body.get("scope"),
            name=body.get("name", "Default"),
            allowed_origins=_origins(body),
            caps={name: body[name] for name in ("daily_cap", "monthly_cap") if name in body},
        )
        audit(request, self.account, Event.KEY_CREATED, created_summary(key), key=self.key)
        return Response(KeySerializer(key_describe(key)).data | {"key": raw}, status=201)


class KeyApi(KeysAPIView):
    permission = {"PATCH": Action.KEYS_ADMIN, "DELETE": Action.KEYS_ADMIN}

    @extend_schema(
        operation_id="key_update",
        request=KeyChangeSerializer,
        responses={200: KeySerializer, **error_responses(*BODY_ERRORS, 404)},
        summary="Rename a key, set its caps or its allowed origins",
        description=_KEY_ADMIN + " Fields left out stay as they are; a cap set to null is removed.",
    )
    def patch(self, request: Request, key_id: int) -> Response:
        key = self._found(key_id)
        body = _body(request)
        unknown = set(body) - set(KeyChangeSerializer().fields)
        if unknown:
            raise ApiError(400, "invalid_request", f"{sorted(unknown)[0]}: cannot be changed.", sorted(unknown)[0])
        changed = key_change(key=key, change=KeyChange(**body))
        if changed:
            audit(request, self.account, Event.KEY_CHANGED, change_summary(key, changed), key=self.key)
        return Response(KeySerializer(key_describe(key)).data)

    @extend_schema(
        operation_id="key_revoke",
        request=None,
        responses={204: OpenApiResponse(description="Revoked: the key gets 401 from now on."), **error_responses(404)},
        summary="Revoke a key",
        description=_KEY_ADMIN,
    )
    def delete(self, request: Request, key_id: int) -> HttpResponse:
        key = self._found(key_id)
        key.revoke()
        audit(request, self.account, Event.KEY_REVOKED, f"{key.prefix}… “{key.name}”", key=self.key)
        return HttpResponse(status=204)

    def _found(self, key_id: int) -> ApiKey:
        key = self.account.api_keys.active().filter(pk=key_id).first()
        if key is None:
            raise ApiError(404, "not_found", "No such key.")
        return key


def _body(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise ApiError(400, "invalid_request", "The body must be a JSON object.")
    return dict(request.data)


def _origins(body: dict[str, Any]) -> list[str]:
    origins = body.get("allowed_origins", [])
    if not isinstance(origins, list) or not all(isinstance(origin, str) for origin in origins):
        raise ApiError(400, "invalid_request", "allowed_origins: a list of origins.", "allowed_origins")
    return origins
