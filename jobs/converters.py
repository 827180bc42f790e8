"""`<job_id:...>` in URLs: only a well-formed job id routes, anything else is the 404 of the path.

So a path holding NUL, a surrogate escape or 10 KB of junk never reaches a database query
(PostgreSQL refuses NUL in text with an error, not an empty result).
"""

from __future__ import annotations

from django.urls import register_converter

from jobs.models import JOB_ID_PATTERN


class JobIdConverter:
    regex = JOB_ID_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(JobIdConverter, "job_id")
