from django.urls import path

from billing import guarantee_views, views, webhooks

urlpatterns = [
    path("billing", views.billing, name="billing"),
    path("billing/card", views.card, name="billing-card"),
    path("billing/packs/<slug:code>", views.pack_buy, name="billing-pack"),
    path("billing/plan", views.plan_switch, name="billing-plan"),
    path("billing/recharge", views.recharge, name="billing-recharge"),
    path("billing/ledger.csv", views.ledger_csv, name="billing-ledger-csv"),
    path("billing/receipts/<int:payment_id>", views.receipt, name="billing-receipt"),
    path("billing/receipts/<int:payment_id>.pdf", views.receipt_pdf, name="billing-receipt-pdf"),
    path("billing/details", views.details, name="billing-details"),
    path("guarantee", guarantee_views.guarantee, name="guarantee"),
    path("webhooks/stripe", webhooks.stripe_webhook, name="stripe-webhook"),
]
