"""Portal pages for bulk jobs: upload with a preview, live progress, downloads, the list. The API's services."""

from __future__ import annotations

import csv
from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Sum
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from accounts.auditing import audit
from accounts.decorators import account_required
from accounts.models import Account, AuditEvent
from accounts.permissions import Action
from jobs import breakdown_charts, fair_share
from jobs.csvfile import MAX_ROWS, MAX_UPLOAD_BYTES, AddressList
from jobs.downloads import STATUSES, Columns, download_url, results_file
from jobs.evaluation import Estimate
from jobs.forms import DOWNLOADS, UploadForm
from jobs.lifecycle import job_delete
from jobs.models import CallbackAttempt, CallbackDelivery, Chunk, Job
from jobs.previews import Preview, job_preview
from jobs.services import job_submit
from jobs.worker import jobs_wait_for_resolver
from lib.errors import DomainError
from verification.engine.modes import ValidationMode

JOBS_PER_PAGE = 20
STATUS_FILTERS = ["all", *Job.Status.values]
PREVIEW_ROWS = 5
# A running job's page asks for its progress four times a second for its first seconds (most lists
# of a few hundred rows are done within them), then once a second.
QUICK_POLL = timedelta(seconds=5)


@account_required(Action.BULK)
@require_http_methods(["GET", "POST"])
def job_new(request: HttpRequest, account: Account) -> HttpResponse:
    deep = settings.VERIFIER_DEEP_MODE
    form = UploadForm(request.POST, request.FILES, deep=deep) if request.method == "POST" else UploadForm(deep=deep)
    if form.is_bound and form.is_valid():
        try:
            job = _submit(account, form, getattr(request.user, "email", ""))
        except DomainError as refused:
            # The API's own refusal (plan, credits, size, rows, file, callback URL), shown on its field.
            form.add_error(refused.param if refused.param in form.fields else None, refused.message)
        else:
            messages.success(request, f"Uploaded: {job.total} unique address{'es' if job.total != 1 else ''}.")
            return redirect("job", job.pk)
    context = {
        "account": account,
        "form": form,
        "max_mib": MAX_UPLOAD_BYTES // 2**20,
        "max_rows": f"{MAX_ROWS:,}",
        "evaluations_per_day": settings.LIST_EVALUATIONS_PER_DAY,
    }
    return render(request, "jobs/new.html", context)


def _submit(account: Account, form: UploadForm, notify_email: str = "") -> Job:
    """The upload's job; a list the balance covers only in part needs `confirm_partial` ticked, a column
    holding no address `confirm_no_addresses`."""
    data = form.cleaned_data
    return job_submit(
        account=account,
        upload=data["file"],
        callback_url=data["callback_url"],
        email_column=data["email_column"] or None,
        partial_ok=data["confirm_partial"],
        no_addresses_ok=data["confirm_no_addresses"],
        validation_mode=data.get("validation_mode") or ValidationMode.FAST,
        notify_email=notify_email if data["notify_me"] else "",
    ).job


@account_required(Action.BULK)
@require_POST
def job_preview_card(request: HttpRequest, account: Account) -> HttpResponse:
    """The upload page's preview card (htmx): what the file holds and what it would cost; nothing is kept."""
    form = UploadForm(request.POST, request.FILES, deep=settings.VERIFIER_DEEP_MODE)
    form.is_valid()  # every field is optional: the checks are the service's
    data = form.cleaned_data
    context: dict[str, object] = {"account": account}
    try:
        preview, found = job_preview(
            account=account,
            upload=data.get("file"),
            callback_url=data.get("callback_url", ""),
            email_column=data.get("email_column") or None,
            validation_mode=data.get("validation_mode") or ValidationMode.FAST,
        )
    except DomainError as refused:
        context["error"] = refused
    else:
        context |= _preview_context(preview, found)
    return render(request, "jobs/_preview.html", context)


def _preview_context(preview: Preview, found: AddressList) -> dict[str, object]:
    width = len(found.columns)
    rows = [(next(csv.reader([line]), []) + [""] * width)[:width] for line in found.originals[:PREVIEW_ROWS]]
    short = max(preview["credits_needed"] - preview["credits_available"], 0)
    return {
        "preview": preview,
        "mostly_not_addresses": preview["invalid_syntax"] * 2 > preview["unique"],
        "rows": rows,
        "columns": found.columns,
        "email_index": found.email_column,
        "short": short,
        "estimate_segments": estimate_segments(preview["estimate"]),
        "evaluations_per_day": settings.LIST_EVALUATIONS_PER_DAY,
    }


ESTIMATE_ORDER = ("valid", "risky", "invalid", "unknown")


def estimate_segments(estimate: Estimate | None) -> list[dict[str, object]]:
    """The estimate's bar: each status's share as a whole percent, left to right from where the last ended."""
    if estimate is None:
        return []
    widths = [round(estimate["shares"][status] * 100) for status in ESTIMATE_ORDER]
    starts = [sum(widths[:index]) for index in range(len(widths))]
    return [{"status": s, "x": x, "width": w} for s, x, w in zip(ESTIMATE_ORDER, starts, widths, strict=True)]


@account_required(Action.JOBS_READ)
def job_detail(request: HttpRequest, account: Account, job_id: str) -> HttpResponse:
    job = account.jobs.live().filter(pk=job_id).first()
    if job is None:
        return _job_gone(request, account, job_id)
    return render(request, "jobs/job.html", {"account": account, **_progress_context(job)})


def _job_gone(request: HttpRequest, account: Account, job_id: str) -> HttpResponse:
    """A 404 page that says the job was deleted, and when, if it was this account's; else that there is none."""
    deleted = account.deleted_jobs.filter(pk=job_id).first()
    return render(request, "jobs/gone.html", {"account": account, "deleted": deleted, "job_id": job_id}, status=404)


@account_required(Action.JOBS_READ)
def job_progress(request: HttpRequest, account: Account, job_id: str) -> HttpResponse:
    """The part of the job page htmx polls; it polls slower once the job ends, while a callback may be retried."""
    job = get_object_or_404(account.jobs.live(), pk=job_id)
    return render(request, "jobs/_progress.html", _progress_context(job))


def _progress_context(job: Job) -> dict[str, object]:
    attempts = CallbackAttempt.objects.filter(delivery__job=job).select_related("delivery")
    retrying = job.callbacks.filter(state=CallbackDelivery.State.PENDING).exists()
    return {
        "job": job,
        # Only the downloads that hold a row: no "Safe to send" button when nothing is safe.
        "downloads": [(label, status) for label, status in DOWNLOADS if job.rows_with(status)],
        "attempts": attempts.order_by("started_at", "number"),
        "poll": _poll(job, retrying=retrying),
        "waiting_for_resolver": job.may_wait_for_resolver and jobs_wait_for_resolver(),
        "deep_work": _deep_work(job),
        "statuses": breakdown_charts.status_segments(job),
        "sub_statuses": breakdown_charts.sub_status_segments(job),
        "mail_providers": breakdown_charts.mail_provider_segments(job),
    }


def _poll(job: Job, *, retrying: bool) -> str:
    """How often the page asks for the job's progress (htmx `hx-trigger`); "" stops it."""
    if job.is_finished:
        return "every 5s" if retrying else ""
    return "every 250ms" if timezone.now() - job.created_at < QUICK_POLL else "every 1s"


def _deep_work(job: Job) -> dict[str, int] | None:
    """What a running deep job is doing that its counts do not show yet: a deep batch's rows count
    as processed only when the whole batch ends, and a large job is ordered by MX address before
    its first batch (docs/deep.md, "Bulk jobs"). None when there is nothing more to say."""
    if job.is_finished or not fair_share.is_slow(job):
        return None
    if job.grouping == Job.Grouping.DUE:
        return {"ordering": job.total}
    checking = job.chunks.filter(state=Chunk.State.RUNNING).aggregate(rows=Sum("size"))["rows"]
    return {"checking": checking} if checking else None


@account_required(Action.JOBS_READ)
def job_download(request: HttpRequest, account: Account, job_id: str) -> HttpResponse:
    """A fresh signed URL (the API's), issued at the click so an old page never holds a stale one."""
    job = account.jobs.live().filter(pk=job_id).first()
    if job is None:
        return _job_gone(request, account, job_id)
    statuses = [s for s in request.GET.get("status", "").split(",") if s in STATUSES] or STATUSES
    columns: Columns = "original" if request.GET.get("columns") == "original" else "verdict"
    try:
        name = results_file(job=job, statuses=statuses, columns=columns)
    except DomainError:
        raise Http404("This job has no result file.") from None
    return redirect(download_url(job, name))


@account_required(Action.JOBS_DELETE)
@require_POST
def job_delete_view(request: HttpRequest, account: Account, job_id: str) -> HttpResponse:
    job = get_object_or_404(account.jobs.live(), pk=job_id)
    job_delete(account=account, job_id=job.pk)
    audit(request, account, AuditEvent.Action.JOB_DELETED, f"{job.pk} ({job.filename or 'no file name'})")
    messages.success(request, f"Deleted {job.filename or job.pk} and its files.")
    return redirect("jobs")


@account_required(Action.JOBS_READ)
def job_list(request: HttpRequest, account: Account) -> HttpResponse:
    status = request.GET.get("status", "all")
    if status not in STATUS_FILTERS:
        status = "all"
    jobs = account.jobs.live() if status == "all" else account.jobs.live().filter(status=status)
    page = Paginator(jobs, JOBS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"account": account, "page": page, "status": status, "filters": STATUS_FILTERS}
    return render(request, "jobs/list.html", context)
