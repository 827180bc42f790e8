from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from jobs.models import CallbackAttempt, CallbackDelivery, Chunk, Job


class ReadOnlyAdmin(admin.ModelAdmin):
    """Jobs and deliveries are written by the service only; staff look, they do not edit."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ChunkInline(ReadOnlyInline):
    model = Chunk
    fields = ["index", "start", "size", "state", "attempts", "lease_expires_at", "reserved", "processed"]


class CallbackAttemptInline(ReadOnlyInline):
    model = CallbackAttempt
    fields = ["number", "started_at", "status_code", "error", "duration_ms"]


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ["id", "account", "status", "total", "processed", "partial", "created_at", "completed_at"]
    list_filter = ["status", "partial"]
    search_fields = ["id", "account__owner__email"]
    inlines = [ChunkInline]


@admin.register(CallbackDelivery)
class CallbackDeliveryAdmin(ReadOnlyAdmin):
    list_display = ["event_id", "job", "event", "state", "attempts", "created_at", "delivered_at"]
    list_filter = ["state", "event"]
    search_fields = ["event_id", "job__id"]
    inlines = [CallbackAttemptInline]
