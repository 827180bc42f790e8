"""The mail a job's uploader chose on upload ("Email me when the list is done"): sent once, when the
job completes or fails, with its link. Off by default; the API's own signal is the callback."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import send_mail
from django.urls import reverse

from jobs.models import Job


def job_finished_mail(*, job_id: str) -> None:
    job = Job.objects.filter(pk=job_id).exclude(notify_email="").first()
    if job is None or not job.is_finished:
        return
    name = job.filename or job.pk
    link = settings.SITE_URL + reverse("job", args=[job.pk])
    if job.status == Job.Status.COMPLETED:
        subject = f"Your list {name} is verified"
        body = f"{job.valid:,} valid, {job.risky:,} risky, {job.invalid:,} invalid, {job.unknown:,} unknown."
    else:
        subject, body = f"Your list {name} could not be verified", job.failure_reason or "The job failed."
    send_mail(subject[:200], f"{body}\n\nSee it and download the results: {link}\n", None, [job.notify_email])
