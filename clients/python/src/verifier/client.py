"""The client: one typed method per endpoint, over httpx.

Every call retries what is safe to retry: a 429 after the `Retry-After` it names, a 5xx or a
lost connection after a growing, jittered backoff. POSTs carry an `Idempotency-Key` (one is made
for you when you give none) that stays the same on each retry, so a retried verification is
never charged twice.
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast
from urllib.parse import quote

import httpx

from verifier.types import (
    Account,
    ApiKey,
    BulkReceipt,
    Job,
    JobList,
    NewApiKey,
    Preview,
    RetriedVerification,
    VerificationResult,
)

DEFAULT_BASE_URL = "http://localhost:8000"
BATCH_LIMIT = 100
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
FINISHED = ("completed", "failed")
# wait_for_job's first pause; each next one is twice as long, up to its `poll_seconds`.
FIRST_POLL_SECONDS = 0.1


class VerifierError(Exception):
    """An error answer in the API's one shape: `{"error": {"code", "message", "param"}}`."""

    def __init__(self, status: int, code: str, message: str, param: str | None = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.param = status, code, message, param

    @classmethod
    def from_response(cls, response: httpx.Response) -> VerifierError:
        try:
            error = response.json()["error"]
            return cls(response.status_code, error["code"], error["message"], error.get("param"))
        except (ValueError, KeyError, TypeError):
            return cls(response.status_code, "http_error", response.text[:200] or response.reason_phrase)


@dataclass(frozen=True)
class RateLimit:
    """What the last answer announced (RateLimit-Policy / RateLimit header fields)."""

    limit: int
    remaining: int
    reset_seconds: int


class Client:
    """`Client(api_key)` or, with VERIFIER_API_KEY (and VERIFIER_BASE_URL) set, `Client()`."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff_seconds: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        api_key = api_key or os.environ.get("VERIFIER_API_KEY")
        if not api_key:
            raise ValueError("an API key is needed: pass api_key or set VERIFIER_API_KEY")
        self.base_url = (base_url or os.environ.get("VERIFIER_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.max_retries, self.backoff_seconds = max_retries, backoff_seconds
        self.timeout = timeout  # seconds a request may wait for the service's answer
        self.credits_remaining: int | None = None
        self.rate_limit: RateLimit | None = None
        self._http = httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": "email-verifier-python/1.0"},
            timeout=timeout,
            transport=transport,
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- verification ---------------------------------------------------------------------

    def verify(
        self, email: str, *, validation_mode: str = "fast", idempotency_key: str | None = None
    ) -> VerificationResult:
        """POST /v1/verify: one address, one credit (none with a test key)."""
        body = {"email": email, "validation_mode": validation_mode}
        return cast(VerificationResult, self._post_json("/v1/verify", body, idempotency_key))

    def verify_batch(
        self, emails: Sequence[str], *, validation_mode: str = "fast", idempotency_key: str | None = None
    ) -> list[VerificationResult]:
        """POST /v1/verify/batch: up to 100 addresses, answered in order, one credit per distinct address."""
        body = {"emails": list(emails), "validation_mode": validation_mode}
        return cast(list[VerificationResult], self._post_json("/v1/verify/batch", body, idempotency_key)["data"])

    def verify_many(self, emails: Iterable[str], *, validation_mode: str = "fast") -> Iterator[VerificationResult]:
        """Any number of addresses, in batches of 100, answered in order."""
        batch: list[str] = []
        for email in emails:
            batch.append(email)
            if len(batch) == BATCH_LIMIT:
                yield from self.verify_batch(batch, validation_mode=validation_mode)
                batch = []
        if batch:
            yield from self.verify_batch(batch, validation_mode=validation_mode)

    def verification(self, verification_id: str) -> RetriedVerification:
        """GET /v1/verifications/{id}: a deep `unknown` asked again later (its answer's `verification_id`):
        the latest result and `resolution` (pending, resolved or gave_up)."""
        return cast(RetriedVerification, self._request("GET", f"/v1/verifications/{verification_id}").json())

    def account(self) -> Account:
        """GET /v1/account: plan, balance, usage and the calling key."""
        return cast(Account, self._request("GET", "/v1/account").json())

    # --- keys (an owner's or admin's full-scope live key) ------------------------------------

    def keys(self) -> list[ApiKey]:
        """GET /v1/keys: the account's active keys, never a key itself."""
        return cast(list[ApiKey], self._request("GET", "/v1/keys").json()["data"])

    def create_key(
        self,
        *,
        name: str = "Default",
        kind: str = "secret",
        mode: str = "live",
        scope: str | None = None,
        allowed_origins: Sequence[str] | None = None,
        **caps: int | None,
    ) -> NewApiKey:
        """POST /v1/keys: a secret or publishable key; `caps`: daily_cap, monthly_cap. The answer's `key`
        is the key itself, shown this once."""
        body: dict[str, Any] = {"name": name, "kind": kind, "mode": mode, **caps}
        if scope is not None:
            body["scope"] = scope
        if allowed_origins is not None:
            body["allowed_origins"] = list(allowed_origins)
        return cast(NewApiKey, self._request("POST", "/v1/keys", json=body).json())

    def update_key(self, key_id: int, **changes: Any) -> ApiKey:
        """PATCH /v1/keys/{id}: name, daily_cap, monthly_cap, allowed_origins (None removes a cap)."""
        return cast(ApiKey, self._request("PATCH", f"/v1/keys/{key_id}", json=changes).json())

    def revoke_key(self, key_id: int) -> None:
        """DELETE /v1/keys/{id}: the key is refused from now on."""
        self._request("DELETE", f"/v1/keys/{key_id}")

    # --- bulk -----------------------------------------------------------------------------

    def bulk_submit(
        self,
        file: str | Path | BinaryIO,
        *,
        callback_url: str | None = None,
        email_column: str | None = None,
        validation_mode: str = "fast",
        idempotency_key: str | None = None,
    ) -> BulkReceipt:
        """POST /v1/verify/bulk: a CSV (path or open binary file); the job runs in the service's workers."""
        files, data = _upload(file, callback_url, email_column, validation_mode)
        headers = {"Idempotency-Key": idempotency_key or _new_key()}
        response = self._request("POST", "/v1/verify/bulk", files=files, data=data, headers=headers)
        return cast(BulkReceipt, response.json())

    def bulk_preview(
        self, file: str | Path | BinaryIO, *, email_column: str | None = None, validation_mode: str = "fast"
    ) -> Preview:
        """POST /v1/verify/bulk/preview: what an upload would be, free."""
        files, data = _upload(file, None, email_column, validation_mode)
        return cast(Preview, self._request("POST", "/v1/verify/bulk/preview", files=files, data=data).json())

    def job(self, job_id: str) -> Job:
        # Quoted: an id is one path segment, never `../keys` walking to another endpoint.
        return cast(Job, self._request("GET", f"/v1/jobs/{quote(job_id, safe='')}").json())

    def jobs(self, *, limit: int = 20, starting_after: str | None = None) -> JobList:
        params: dict[str, Any] = {"limit": limit}
        if starting_after:
            params["starting_after"] = starting_after
        return cast(JobList, self._request("GET", "/v1/jobs", params=params).json())

    def iter_jobs(self) -> Iterator[Job]:
        """Every job of the calling key's mode, newest first, page after page."""
        after = None
        while True:
            page = self.jobs(limit=100, starting_after=after)
            yield from page["data"]
            if not page["has_more"] or not page["data"]:
                return
            after = page["data"][-1]["id"]

    def wait_for_job(
        self,
        job_id: str,
        *,
        poll_seconds: float = 1.0,
        timeout: float | None = None,
        on_progress: Callable[[Job], None] | None = None,
    ) -> Job:
        """Poll until the job is completed or failed; `on_progress` sees each poll's job.

        The first polls come quickly, 0.1 s apart and then twice as far apart each time, up to one
        every `poll_seconds`: a job of a few rows, done in a fraction of a second, is seen done
        then rather than a whole `poll_seconds` later, and a long one is asked about no more often."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = min(FIRST_POLL_SECONDS, poll_seconds)
        while True:
            job = self.job(job_id)
            if on_progress is not None:
                on_progress(job)
            if job["status"] in FINISHED:
                return job
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} is still {job['status']} after {timeout} s")
            time.sleep(pause)
            pause = min(pause * 2, poll_seconds)

    def job_results(self, job_id: str, *, status: Sequence[str] = (), columns: str = "verdict") -> bytes:
        """GET /v1/jobs/{id}/results, then the CSV it points to."""
        params: dict[str, str] = {"columns": columns}
        if status:
            params["status"] = ",".join(status)
        redirect = self._request("GET", f"/v1/jobs/{job_id}/results", params=params)
        return self.download(redirect.headers["Location"])

    def download(self, url: str) -> bytes:
        """A result link (result_download_url or a results redirect): signed, no key needed."""
        return self._request("GET", url, authenticated=False).content

    def delete_job(self, job_id: str) -> None:
        self._request("DELETE", f"/v1/jobs/{job_id}")

    # --- transport ------------------------------------------------------------------------

    def _post_json(self, path: str, body: dict[str, Any], idempotency_key: str | None) -> Any:
        headers = {"Idempotency-Key": idempotency_key or _new_key()}
        return self._request("POST", path, json=body, headers=headers).json()

    def _request(self, method: str, url: str, *, authenticated: bool = True, **kwargs: Any) -> httpx.Response:
        for attempt in range(self.max_retries + 1):
            try:
                response = self._send(method, url, authenticated, kwargs)
            except httpx.TransportError:
                if attempt == self.max_retries:
                    raise
                time.sleep(self._backoff(attempt))
                continue
            self._note(response)
            if response.status_code in RETRY_STATUSES and attempt < self.max_retries:
                time.sleep(_retry_after(response) or self._backoff(attempt))
                continue
            if response.status_code >= 400:
                raise VerifierError.from_response(response)
            return response
        raise AssertionError("unreachable")

    def _send(self, method: str, url: str, authenticated: bool, kwargs: dict[str, Any]) -> httpx.Response:
        if authenticated:
            return self._http.request(method, url, **kwargs)
        absolute = url if url.startswith(("http://", "https://")) else self.base_url + url
        return httpx.request(method, absolute, timeout=self._http.timeout, follow_redirects=True)

    def _backoff(self, attempt: int) -> float:
        return self.backoff_seconds * (2**attempt) * random.uniform(0.5, 1.0)

    def _note(self, response: httpx.Response) -> None:
        if "X-Credits-Remaining" in response.headers:
            self.credits_remaining = int(response.headers["X-Credits-Remaining"])
        limit = _rate_limit(response.headers)
        if limit is not None:
            self.rate_limit = limit


def _new_key() -> str:
    return f"py-{uuid.uuid4()}"


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None


def _rate_limit(headers: httpx.Headers) -> RateLimit | None:
    """`RateLimit-Policy: "plan";q=20;w=1` and `RateLimit: "plan";r=17;t=1`, read leniently."""
    policy, state = _sf_params(headers.get("RateLimit-Policy")), _sf_params(headers.get("RateLimit"))
    if "q" not in policy or "r" not in state:
        return None
    return RateLimit(limit=policy["q"], remaining=state["r"], reset_seconds=state.get("t", 0))


def _sf_params(value: str | None) -> dict[str, int]:
    params: dict[str, int] = {}
    for part in (value or "").split(",")[0].split(";")[1:]:
        name, _, number = part.strip().partition("=")
        if number.lstrip("-").isdigit():
            params[name] = int(number)
    return params


def _upload(
    file: str | Path | BinaryIO, callback_url: str | None, email_column: str | None, validation_mode: str
) -> tuple[dict[str, tuple[str, bytes, str]], dict[str, str]]:
    # Read whole, so a retry can send the same bytes again.
    if isinstance(file, (str, Path)):
        name, content = Path(file).name, Path(file).read_bytes()
    else:
        name, content = Path(getattr(file, "name", "upload.csv")).name, file.read()
    fields = (("callback_url", callback_url), ("email_column", email_column), ("validation_mode", validation_mode))
    data = {key: value for key, value in fields if value}
    return {"file": (name, content, "text/csv")}, data
