"""The machine's figures, shared by /metrics and the staff dashboard: each a single indexed query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Min, Q, Sum
from django.utils import timezone
from django_q.status import Stat

from jobs.models import CallbackDelivery, Chunk, Job
from verification.models import CachedVerdict, SmtpSessionCount


@dataclass(frozen=True)
class Queue:
    depth: int
    oldest_queued_at: datetime | None

    @property
    def oldest_age_seconds(self) -> float:
        return (timezone.now() - self.oldest_queued_at).total_seconds() if self.oldest_queued_at else 0.0


def queue() -> Queue:
    """Chunks waiting for a worker (a chunk is the unit the queue hands out) and the oldest one's wait."""
    row = Chunk.objects.filter(state=Chunk.State.PENDING).aggregate(depth=Count("id"), oldest=Min("queued_at"))
    return Queue(row["depth"], row["oldest"])


def day_ago() -> datetime:
    return timezone.now() - timedelta(hours=24)


def jobs() -> dict[str, int]:
    failed = Q(status=Job.Status.FAILED, completed_at__gte=day_ago())
    return Job.objects.filter(Q(status__in=[Job.Status.PENDING, Job.Status.PROCESSING]) | failed).aggregate(
        pending=Count("id", filter=Q(status=Job.Status.PENDING)),
        processing=Count("id", filter=Q(status=Job.Status.PROCESSING)),
        failed_24h=Count("id", filter=failed),
    )


def chunks_requeued() -> int:
    """Chunks taken over after a worker's lease ran out (a second claim or more), queued in the last 24 h."""
    return Chunk.objects.filter(attempts__gt=1, queued_at__gte=day_ago()).count()


def callbacks() -> dict[str, int]:
    failed = Q(state=CallbackDelivery.State.FAILED, created_at__gte=day_ago())
    retrying = Q(state=CallbackDelivery.State.PENDING, attempts__gte=1)
    return CallbackDelivery.objects.filter(failed | retrying).aggregate(
        failed_24h=Count("id", filter=failed), retrying=Count("id", filter=retrying)
    )


SMTP_OUTCOMES = ("completed", "blocked", "unreachable", "backed_off")


def smtp_sessions() -> dict[str, object]:
    """Deep verification's SMTP sessions of the last hour by outcome, and the share blocked."""
    counts = SmtpSessionCount.objects.since(timezone.now() - timedelta(hours=1))
    total = sum(counts.values())
    blocked = counts.get("blocked", 0)
    return {
        "by_outcome": [(outcome, counts.get(outcome, 0)) for outcome in SMTP_OUTCOMES],
        "total": total,
        "blocked_percent": round(100 * blocked / total, 1) if total else 0,
    }


def unknown_share() -> tuple[int, int]:
    """(unknown, all) verdicts of the last hour: single verifications' fresh verdicts and finished jobs' rows."""
    since = timezone.now() - timedelta(hours=1)
    single = CachedVerdict.objects.filter(created_at__gte=since).aggregate(
        unknown=Count("pk", filter=Q(status="unknown")), total=Count("pk")
    )
    bulk = Job.objects.filter(status=Job.Status.COMPLETED, completed_at__gte=since).aggregate(
        unknown=Sum("unknown", default=0), total=Sum("processed", default=0)
    )
    return single["unknown"] + bulk["unknown"], single["total"] + bulk["total"]


@dataclass(frozen=True)
class Heartbeat:
    cluster: str
    host: str
    status: str
    at: datetime


def heartbeats() -> list[Heartbeat]:
    """Each qcluster's latest report (django-q2 cluster stats, kept a few seconds in the cache)."""
    stats = Stat.get_all()
    return sorted((Heartbeat(str(s.cluster_id), s.host, str(s.status), s.timestamp) for s in stats), key=str)
