"""The API's answers, as typed dictionaries (the shapes of the service's OpenAPI schema)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

Status = Literal["valid", "invalid", "risky", "unknown"]


class Checks(TypedDict):
    syntax_valid: bool
    domain_valid: bool
    mx_found: bool
    smtp_valid: bool | None
    is_disposable: bool
    is_role_based: bool
    is_catch_all: bool | None
    is_free_provider: bool


class Feedback(TypedDict):
    outcome: Literal["hard_bounce", "delivered"]
    occurred_at: str


class Deliverability(TypedDict):
    estimate: float
    basis: int


class Verdict(TypedDict):
    """What every answer about one address holds: the verdict of POST /v1/verify and of a verification
    asked again later alike."""

    email: str
    is_valid: bool
    status: Status
    sub_status: str | None
    validation_mode: Literal["fast", "deep"]
    confidence: Literal["high", "medium", "low"]
    score: int
    checks: Checks
    did_you_mean: str | None
    mail_provider: str | None
    feedback: Feedback | None
    deliverability: Deliverability | None


class VerificationResult(Verdict):
    cached: bool
    response_time_ms: int
    verification_id: NotRequired[str]  # a deep unknown asked again later (GET /v1/verifications/{id})


class Resolution(TypedDict):
    state: Literal["pending", "resolved", "gave_up"]
    attempts: int
    next_attempt_at: str | None


class RetriedVerification(Verdict):
    """GET /v1/verifications/{id}: a verification asked again later, its latest result and resolution."""

    verification_id: str
    resolution: Resolution


class Plan(TypedDict):
    code: str
    bulk: bool
    rate_per_second: int


class Usage(TypedDict):
    today: int
    last_30_days: int


class Key(TypedDict):
    prefix: str
    scope: str
    mode: Literal["live", "test"]
    expires_at: str | None


class Account(TypedDict):
    id: str
    plan: Plan
    credits_remaining: int
    usage: Usage
    key: Key
    charges_unknown: bool
    feedback_webhooks: dict[str, str]


class BulkReceipt(TypedDict):
    id: str
    status: str
    total_emails: int
    estimated_seconds: int


class Progress(TypedDict):
    total: int
    processed: int
    valid: int
    invalid: int
    risky: int
    unknown: int


class Job(TypedDict):
    id: str
    filename: str | None
    status: Literal["pending", "processing", "completed", "failed"]
    waiting_for: Literal["dns_resolver"] | None
    validation_mode: Literal["fast", "deep"]
    progress: Progress
    partial: bool
    breakdown: dict[str, object]
    credits_refunded: int
    result_download_url: str | None
    callback_url: str | None
    created_at: str
    started_at: str | None
    completed_at: str | None


class JobList(TypedDict):
    data: list[Job]
    has_more: bool


class Shares(TypedDict):
    valid: float
    invalid: float
    risky: float
    unknown: float


class Estimate(TypedDict):
    """A list's likely quality from a fast check of a random sample: shares only."""

    sample_size: int
    population: int
    shares: Shares
    margin_of_error: float
    confidence_level: float


class Preview(TypedDict):
    rows: int
    unique: int
    duplicates: int
    invalid_syntax: int
    email_column: str | int
    has_header: bool
    columns: list[str]
    sample: list[str]
    credits_needed: int
    credits_available: int
    estimated_seconds: int
    bulk_in_plan: bool
    estimate: Estimate | None
    estimate_withheld: str | None
    evaluations_left_today: int


class ApiKey(TypedDict):
    """A key as /v1/keys shows it (never the key itself)."""

    id: int
    kind: Literal["secret", "publishable"]
    mode: Literal["live", "test"]
    scope: Literal["full", "verify", "read"]
    prefix: str
    name: str
    allowed_origins: list[str]
    daily_cap: int | None
    monthly_cap: int | None
    spent_today: int
    spent_this_month: int
    created_at: str
    last_used_at: str | None
    expires_at: str | None


class NewApiKey(ApiKey):
    key: str  # shown in the answer that made it, never again
