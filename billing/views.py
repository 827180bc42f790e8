"""The portal's billing pages: prices, the card, packs, the plan, auto-recharge, the ledger and its CSV."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.decorators import account_required
from accounts.models import Account
from accounts.permissions import Action
from billing import gateway, ledger, payments, prices, quotes, receipts, subscriptions
from billing.forms import BillingDetailsForm
from billing.models import Customer, Payment
from lib.errors import DomainError
from lib.tokens import random_base62

LEDGER_PAGE_SIZE = 25
RECENT_PAYMENTS = 20


@account_required(Action.BILLING)
@require_GET
def billing(request: HttpRequest, account: Account) -> HttpResponse:
    page = Paginator(ledger.lines(account), LEDGER_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "account": account,
        "ledger": page,
        "lines": ledger.page_lines(account, list(page.object_list)),
        "contact_email": settings.BILLING_CONTACT_EMAIL,
        "charges_unknown": settings.VERIFIER_CHARGE_UNKNOWN,
        "details_form": BillingDetailsForm(instance=receipts.billing_details(account)),
        **prices.price_list(),
    }
    if gateway.enabled():
        context |= {
            "stripe_on": True,
            "customer": Customer.objects.filter(account=account).first(),
            "payments": Payment.objects.filter(account=account)[:RECENT_PAYMENTS],
            "purchase_key": random_base62(16),
        }
    return render(request, "billing/billing.html", context)


@account_required(Action.BILLING)
@require_http_methods(["GET", "POST"])
def card(request: HttpRequest, account: Account) -> HttpResponse:
    """Save a card (a SetupIntent confirmed by Stripe Elements in the browser), optionally to buy a pack at once."""
    if not gateway.enabled():
        return redirect("billing")
    pack = prices.pack(request.GET.get("pack", "") or request.POST.get("pack", ""))
    if request.method == "POST":
        return _card_saved(request, account, pack)
    try:
        client_secret = payments.card_setup(account=account)
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("billing")
    context = {"client_secret": client_secret, "pack": pack, "purchase_key": random_base62(16), **_stripe_js()}
    response = render(request, "billing/card.html", context)
    response._csp_update = _stripe_csp()  # type: ignore[attr-defined]
    return response


def _card_saved(request: HttpRequest, account: Account, pack: prices.Price | None) -> HttpResponse:
    try:
        customer = payments.card_save(account=account, setup_intent_id=request.POST.get("setup_intent", ""))
    except DomainError as error:
        messages.error(request, error.message)
        return redirect("billing")
    if pack is None:
        messages.success(request, f"Card saved: {customer.card_label}.")
        return redirect("billing")
    return _buy(request, account, pack.code)


@account_required(Action.BILLING)
@require_POST
def pack_buy(request: HttpRequest, account: Account, code: str) -> HttpResponse:
    """Buy a pack with the saved card; without one, enter a card first."""
    if not gateway.enabled():
        return redirect("billing")
    if not Customer.objects.filter(account=account).exclude(card_payment_method="").exists():
        return redirect(f"{reverse('billing-card')}?pack={code}")
    return _buy(request, account, code)


def _buy(request: HttpRequest, account: Account, code: str) -> HttpResponse:
    try:
        # One key per rendered form: a double click is one charge at Stripe, a later purchase a new one.
        key = request.POST.get("purchase_key", "")[:64] or random_base62(16)
        by = getattr(request.user, "email", "")
        payment = payments.pack_buy(account=account, pack_code=code, key=key, by=by)
    except DomainError as error:
        messages.error(request, f"The payment failed: {error.message}")
        return redirect("billing")
    messages.success(
        request, f"Thank you: {payment.credits:,} credits added ({payment.amount}). Your receipt is on Billing."
    )
    return redirect("dashboard")


@account_required(Action.BILLING)
@require_http_methods(["GET", "POST"])
def plan_switch(request: HttpRequest, account: Account) -> HttpResponse:
    """GET (or a POST not yet confirmed) shows what the switch charges now and when next; the
    confirmed POST switches, once."""
    if not gateway.enabled():
        return redirect("billing")
    code = request.POST.get("plan", "") or request.GET.get("plan", "")
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        try:
            by = getattr(request.user, "email", "")
            messages.success(request, subscriptions.plan_switch(account=account, plan_code=code, by=by))
        except DomainError as error:
            messages.error(request, error.message)
        return redirect("billing")
    quote = quotes.plan_quote(account=account, plan_code=code)
    if quote is None:
        messages.error(request, "There is no such plan.")
        return redirect("billing")
    return render(request, "billing/plan_confirm.html", {"account": account, "quote": quote, "code": code})


@account_required(Action.BILLING)
@require_GET
def receipt(request: HttpRequest, account: Account, payment_id: int) -> HttpResponse:
    """A paid payment's receipt, printable (another account's, or a failed payment: 404)."""
    return render(request, "billing/receipt.html", receipts.receipt_context(paid(account, payment_id)))


@account_required(Action.BILLING)
@require_GET
def receipt_pdf(request: HttpRequest, account: Account, payment_id: int) -> HttpResponse:
    """The same receipt as a PDF file to download (another account's, or a failed payment: 404)."""
    # Imported here, not at the top: fpdf2 and what it loads add about 45 MB to a process, and every
    # web worker would carry them for a download few requests make.
    from billing.receipt_pdf import receipt_pdf as receipt_pdf_bytes

    payment = paid(account, payment_id)
    response = HttpResponse(receipt_pdf_bytes(payment), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="receipt-{payment.number}.pdf"'
    return response


def paid(account: Account, payment_id: int) -> Payment:
    return get_object_or_404(account.payments.filter(status=Payment.Status.SUCCEEDED), pk=payment_id)


@account_required(Action.BILLING)
@require_POST
def details(request: HttpRequest, account: Account) -> HttpResponse:
    form = BillingDetailsForm(request.POST)
    if form.is_valid():
        receipts.billing_details_set(account=account, **form.cleaned_data)
        messages.success(request, "Billing details saved: your receipts show them.")
    else:
        messages.error(request, " ".join(str(error) for errors in form.errors.values() for error in errors))
    return redirect(f"{reverse('billing')}#details")


@account_required(Action.BILLING)
@require_POST
def recharge(request: HttpRequest, account: Account) -> HttpResponse:
    if gateway.enabled():
        try:
            below = int(request.POST.get("below", "0") or 0)
            payments.recharge_set(account=account, pack_code=request.POST.get("pack", ""), below=below)
            messages.success(request, "Auto-recharge saved.")
        except ValueError:
            messages.error(request, "The threshold must be a whole number of credits.")
        except DomainError as error:
            messages.error(request, error.message)
    return redirect("billing")


@account_required(Action.BILLING)
@require_GET
def ledger_csv(request: HttpRequest, account: Account) -> StreamingHttpResponse:
    response = StreamingHttpResponse(ledger.csv_rows(account), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="ledger.csv"'
    return response


def _stripe_js() -> dict[str, str]:
    return {"stripe_js_url": settings.STRIPE_JS_URL, "stripe_key": settings.STRIPE_PUBLISHABLE_KEY}


def _stripe_csp() -> dict[str, list[str]]:
    """Stripe.js (or localstripe's look-alike) loads from its origin, calls its API and frames its card fields."""
    js = _origin(settings.STRIPE_JS_URL)
    api = _origin(settings.STRIPE_API_BASE) if settings.STRIPE_API_BASE else "https://api.stripe.com"
    return {"script-src": [js], "connect-src": [api, js], "frame-src": [js, "https://hooks.stripe.com"]}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
