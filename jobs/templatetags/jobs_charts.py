from __future__ import annotations

from django import template

from jobs import breakdown_charts
from jobs.models import Job

register = template.Library()


@register.filter
def status_segments(job: Job) -> list[breakdown_charts.Segment]:
    return breakdown_charts.status_segments(job)
