"""Portal pages for bulk jobs: upload, the job's live progress, the list. Same services as the API."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from accounts.decorators import account_required
from accounts.models import Account
from jobs.csvfile import MAX_ROWS, MAX_UPLOAD_BYTES
from jobs.downloads import result_url
from jobs.forms import UploadForm
from jobs.models import CallbackAttempt, Job
from jobs.services import job_submit
from lib.errors import DomainError

JOBS_PER_PAGE = 20
STATUS_FILTERS = ["all", *Job.Status.values]


@account_required
@require_http_methods(["GET", "POST"])
def job_new(request: HttpRequest, account: Account) -> HttpResponse:
    form = UploadForm(request.POST, request.FILES) if request.method == "POST" else UploadForm()
    if form.is_bound and form.is_valid():
        try:
            job = job_submit(
                account=account, upload=form.cleaned_data["file"], callback_url=form.cleaned_data["callback_url"]
            ).job
        except DomainError as refused:
            # The API's own refusal (plan, credits, size, rows, file, callback URL), shown on its field.
            form.add_error(refused.param, refused.message)
        else:
            messages.success(request, f"Uploaded: {job.total} unique address{'es' if job.total != 1 else ''}.")
            return redirect("job", job.pk)
    context = {"account": account, "form": form, "max_mib": MAX_UPLOAD_BYTES // 2**20, "max_rows": f"{MAX_ROWS:,}"}
    return render(request, "jobs/new.html", context)


@account_required
def job_detail(request: HttpRequest, account: Account, job_id: str) -> HttpResponse:
    job = get_object_or_404(account.jobs, pk=job_id)
    attempts = CallbackAttempt.objects.filter(delivery__job=job).select_related("delivery")
    context = {"account": account, "job": job, "attempts": attempts.order_by("started_at", "number")}
    return render(request, "jobs/job.html", context)


@account_required
def job_progress(request: HttpRequest, account: Account, job_id: str) -> HttpResponse:
    """The part of the job page htmx polls; once the job is finished it renders without a trigger."""
    job = get_object_or_404(account.jobs, pk=job_id)
    return render(request, "jobs/_progress.html", {"job": job})


@account_required
def job_download(request: HttpRequest, account: Account, job_id: str) -> HttpResponse:
    """A fresh signed result URL (the API's), issued at the click so an old page never holds a stale one."""
    url = result_url(get_object_or_404(account.jobs, pk=job_id))
    if url is None:
        raise Http404("This job has no result file.")
    return redirect(url)


@account_required
def job_list(request: HttpRequest, account: Account) -> HttpResponse:
    status = request.GET.get("status", "all")
    if status not in STATUS_FILTERS:
        status = "all"
    jobs = account.jobs.all() if status == "all" else account.jobs.filter(status=status)
    page = Paginator(jobs, JOBS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"account": account, "page": page, "status": status, "filters": STATUS_FILTERS}
    return render(request, "jobs/list.html", context)
