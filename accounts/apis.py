"""The account's own API: `GET /v1/account`, and the keys API (`/v1/keys`, docs/keys.md).

`GET /v1/account` is what an integrator's dashboard or health check wants to know at a glance. The
keys API is for a live, full-scope secret key whose creator is an owner or admin
(Action.KEYS_ADMIN): the account's keys listed, made (the key shown in the 201 only), renamed,
capped, re-bound to other origins, revoked. Every change is in the account's audit log, done by the
calling key.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.auditing import audit
from accounts.key_limits import Actor, expiry_parsed
from accounts.keys import KeyChange, change_summary, created_summary, key_change, key_create, key_describe
from accounts.models import Account, ApiKey, AuditEvent, KeyMode
from accounts.permissions import Action
from apikit.exceptions import ApiError
from apikit.idempotency import idempotency_claim, json_fingerprint
from apikit.views import BODY_ERRORS, IDEMPOTENCY_HEADER, IDEMPOTENCY_PARAMETER, AccountAPIView, error_responses
from billing import guarantee_report
from billing.models import LedgerEntry
from feedback.services import PROVIDERS, webhook_urls
from lib.jsonbody import JSON_CONTENT_TYPE, render_json

USAGE_DAYS = 30
Event = AuditEvent.Action
_CAP_HELP = "Credits the key may spend per UTC day (daily) or calendar month (monthly); null: no cap."


class AccountPlanSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="free, starter, pro or enterprise.")
    bulk = serializers.BooleanField(help_text="Whether the plan may submit bulk jobs.")
    rate_per_second = serializers.IntegerField(help_text="Requests a second each of the account's keys may make.")


class AccountUsageSerializer(serializers.Serializer):
    today = serializers.IntegerField(help_text="Credits used since 00:00 UTC today.")
    last_30_days = serializers.IntegerField(help_text="Credits used in the last 30 UTC days, today included.")


class AccountKeySerializer(serializers.Serializer):
    prefix = serializers.CharField(help_text="The calling key's first 12 characters.")
    scope = serializers.ChoiceField(
        choices=ApiKey.Scope.choices, help_text=f"What the key may call: {ApiKey.scopes_described()}."
    )
    mode = serializers.ChoiceField(
        choices=KeyMode.choices, help_text="`test` for an `ev_test_` key: sandbox answers, no credit spent."
    )
    expires_at = serializers.DateTimeField(allow_null=True, help_text="When the key stops; null: when it is revoked.")


class ProviderBounceSerializer(serializers.Serializer):
    valid = serializers.IntegerField(help_text="Charged `valid` answers this month for domains of this family.")
    bounced = serializers.IntegerField(help_text="Of them, how many the account reported as hard bounces.")
    rate = serializers.FloatField(allow_null=True, help_text="bounced / valid; null with no valid answers.")


class GuaranteeSerializer(serializers.Serializer):
    month = serializers.CharField(help_text="The calendar month (UTC) of these figures, `YYYY-MM`.")
    valid_answers = serializers.IntegerField(help_text="`valid` answers charged this month.")
    bounced = serializers.IntegerField(
        help_text="Of them, how many hard-bounced within 30 days, as the account reported (any way)."
    )
    refunded = serializers.IntegerField(help_text="Of them, how many were credited back (`guarantee_refund`).")
    refunds_over_cap = serializers.IntegerField(help_text="Refunds due but held back by the monthly cap.")
    cap = serializers.IntegerField(
        help_text="Refunds this month's answers may have: `max_share` of them, rounded down."
    )
    max_share = serializers.FloatField(help_text="The operator's cap, a share of the month's valid answers.")
    bounce_rate_by_provider = serializers.DictField(
        child=ProviderBounceSerializer(),
        help_text="By mail provider family from the MX hosts: `google`, `microsoft`, `yahoo`, `other`.",
    )


class AccountSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The account's id (as `create_account` prints it).")
    plan = AccountPlanSerializer()
    credits_remaining = serializers.IntegerField()
    usage = AccountUsageSerializer()
    key = AccountKeySerializer()
    charges_unknown = serializers.BooleanField(
        help_text="Whether an `unknown` answer costs a credit (the operator's choice; true by default). When false, "
        "unknown answers are free and a bulk job's unknown rows are credited back when it completes."
    )
    feedback_webhooks = serializers.DictField(
        child=serializers.URLField(),
        help_text=f"The account's secret URL for each sending service's event webhook ({', '.join(PROVIDERS)}): "
        "paste it into the service to report deliveries and bounces (docs/feedback.md).",
    )
    guarantee = GuaranteeSerializer(
        help_text="The bounce guarantee this month: valid answers, bounced, refunded (docs/guarantee.md)."
    )


class AccountApi(AccountAPIView):
    permission = {"GET": Action.USAGE}

    @extend_schema(
        operation_id="account_read",
        responses={200: AccountSerializer, **error_responses()},
        summary="The calling key's account: plan, balance, usage and the key itself (free)",
    )
    def get(self, request: Request) -> Response:
        return Response(AccountSerializer(account_summary(self.account, self.key)).data)


def account_summary(account: Account, key: ApiKey) -> dict[str, object]:
    today, period = LedgerEntry.objects.usage_totals(account=account, days=USAGE_DAYS)
    plan = account.plan
    whole = Account.objects.only("public_id").get(pk=account.pk)
    return {
        "id": str(whole.public_id),
        "plan": {"code": plan.code, "bulk": plan.allows_bulk, "rate_per_second": plan.requests_per_second},
        "credits_remaining": account.credit_balance,
        "usage": {"today": today, "last_30_days": period},
        "key": {"prefix": key.prefix, "scope": key.scope, "mode": key.key_mode, "expires_at": key.expires_at},
        "charges_unknown": settings.VERIFIER_CHARGE_UNKNOWN,
        "feedback_webhooks": webhook_urls(account),
        "guarantee": guarantee_report.summary(account.pk, timezone.now()),
    }


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
    key = serializers.CharField(
        required=False,
        help_text="The key itself: shown in this answer only, never again (an idempotent replay leaves it out).",
    )


class KeyListSerializer(serializers.Serializer):
    def get_fields(self) -> dict[str, serializers.Field]:
        return {"data": KeySerializer(many=True)}  # not a class attribute: it would hide Serializer.data


class KeyCreateSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=ApiKey.Kind.choices, default=ApiKey.Kind.SECRET)
    mode = serializers.ChoiceField(choices=KeyMode.choices, default=KeyMode.LIVE)
    scope = serializers.ChoiceField(
        choices=ApiKey.Scope.choices,
        required=False,
        help_text=f"Default full; a publishable key is verify. {ApiKey.scopes_described()}.",
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
    expires_at = serializers.DateTimeField(
        allow_null=True,
        required=False,
        help_text="RFC 3339, still to come; the key is refused from then on. Null: never.",
    )
    allowed_ips = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="Addresses or networks (CIDR) the key may be used from; empty: anywhere.",
    )


class KeyChangeSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, required=False)
    allowed_origins = serializers.ListField(child=serializers.CharField(), required=False)
    daily_cap = serializers.IntegerField(allow_null=True, required=False, help_text=_CAP_HELP)
    monthly_cap = serializers.IntegerField(allow_null=True, required=False, help_text=_CAP_HELP)


_KEY_ADMIN = "For a live, full-scope secret key created by an owner or admin; any other key gets 403 key_not_permitted."


class KeysAPIView(AccountAPIView):
    live_only = "A test key may not manage keys: use a live key."

    def actor(self) -> Actor:
        """The calling key, acting with its creator's role (accounts/key_limits.py holds it to its limits)."""
        return Actor(user=self.key.created_by, role=self.key.creator_role or "", key=self.key)


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
        responses={201: NewKeySerializer, **error_responses(*BODY_ERRORS, 409, 422)},
        parameters=[IDEMPOTENCY_PARAMETER],
        summary="Make a key: secret or publishable, with caps; the key is in this answer only",
        description=_KEY_ADMIN
        + " Honours Idempotency-Key: a replay makes no second key and answers the key object without `key` "
        "(the secret is never kept), with Idempotent-Replayed: true. A key with limits makes only keys within "
        "them (docs/keys.md).",
    )
    def post(self, request: Request) -> HttpResponse:
        body = _body(request)
        claim = idempotency_claim(
            account=self.account,
            key=request.headers.get(IDEMPOTENCY_HEADER),
            fingerprint=json_fingerprint(body),
            key_mode=self.key.key_mode,
        )
        if claim.replay is not None:
            return claim.replay  # the key object without the key: the secret is never kept
        with claim, transaction.atomic():
            key, raw = self._created(request, body)
            shown = KeySerializer(key_describe(key)).data
            claim.complete(status=201, body=render_json(shown), headers={"Content-Type": JSON_CONTENT_TYPE})
        return Response(shown | {"key": raw}, status=201)

    def _created(self, request: Request, body: dict[str, Any]) -> tuple[ApiKey, str]:
        key, raw = key_create(
            account=self.account,
            created_by=self.key.created_by,
            kind=body.get("kind", ApiKey.Kind.SECRET),
            key_mode=body.get("mode", KeyMode.LIVE),
            scope=body.get("scope"),
            name=body.get("name", "Default"),
            allowed_origins=_origins(body),
            caps={name: body[name] for name in ("daily_cap", "monthly_cap") if name in body},
            expires_at=expiry_parsed(body.get("expires_at")),
            allowed_ips="\n".join(_strings(body, "allowed_ips")),
            actor=self.actor(),
        )
        audit(request, self.account, Event.KEY_CREATED, created_summary(key), key=self.key)
        return key, raw


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
        changed = key_change(key=key, change=KeyChange(**body), actor=self.actor())
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
    return _strings(body, "allowed_origins")


def _strings(body: dict[str, Any], name: str) -> list[str]:
    values = body.get(name, [])
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        raise ApiError(400, "invalid_request", f"{name}: a list of strings.", name)
    return values
