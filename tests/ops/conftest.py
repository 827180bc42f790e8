"""What the ops tests share: the staff dashboard's query budget."""

from __future__ import annotations

# Session, user, then one query a figure (see ops/dashboard.py); more means a figure grew a loop. The
# resolver's health is a cache read, and once a minute a check that writes it (4 with the database cache);
# deep verification's SMTP sessions one more, and its egresses' health (a cache read) one more; whether the
# user has a second factor (accounts/middleware.py: one query per kind of device) two more.
MAX_QUERIES = 30  # and card payments: revenue, failed payments, mismatched Stripe events; guarantee refunds
