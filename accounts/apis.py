"""GET /v1/account: what an integrator's dashboard or health check wants to know at a glance."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.models import Account, ApiKey, KeyMode
from accounts.permissions import Action
from apikit.views import AccountAPIView, error_responses
from billing.models import LedgerEntry
from feedback.services import PROVIDERS, webhook_urls

USAGE_DAYS = 30


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
        choices=ApiKey.Scope.choices, help_text="What the key may call: `full`, `verify` or `read`."
    )
    mode = serializers.ChoiceField(
        choices=KeyMode.choices, help_text="`test` for an `ev_test_` key: sandbox answers, no credit spent."
    )
    expires_at = serializers.DateTimeField(allow_null=True, help_text="When the key stops; null: when it is revoked.")


class AccountSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The account's id (as `create_account` prints it).")
    plan = AccountPlanSerializer()
    credits_remaining = serializers.IntegerField()
    usage = AccountUsageSerializer()
    key = AccountKeySerializer()
    feedback_webhooks = serializers.DictField(
        child=serializers.URLField(),
        help_text=f"The account's secret URL for each sending service's event webhook ({', '.join(PROVIDERS)}): "
        "paste it into the service to report deliveries and bounces (docs/feedback.md).",
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
        "feedback_webhooks": webhook_urls(account),
    }
