from __future__ import annotations

from django import template

from jobs import charts
from jobs.models import Job

register = template.Library()


@register.filter
def status_segments(job: Job) -> list[charts.Segment]:
    return charts.status_segments(job)
