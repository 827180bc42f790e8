"""The service's own settings: the engine, deep verification, privacy, feedback, bulk jobs
(VERIFIER_*, BULK_*, JOB_*, ...), each with the comment that says why. Imported whole by
config/settings.py, which keeps Django's and the framework's, and the two of ours derived from
them (the pepper's check, which reads DEBUG, and BULK_DEEP_WORKERS, from Q_WORKERS).
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envdurations, envfloat, envint, envlist, envstr

# --- Verification engine ----------------------------------------------------------------
VERIFIER_DNS_NAMESERVERS = envlist("VERIFIER_DNS_NAMESERVERS")
VERIFIER_DNS_TIMEOUT = envfloat("VERIFIER_DNS_TIMEOUT", 3.0)
# Three tries' worth: a lost packet is asked again rather than judged `unknown`
# (README, "DNS" under "Verify one address").
VERIFIER_DNS_LIFETIME = envfloat("VERIFIER_DNS_LIFETIME", 3 * VERIFIER_DNS_TIMEOUT)
VERIFIER_DNS_CONCURRENCY = envint("VERIFIER_DNS_CONCURRENCY", 256, minimum=1)
# A ceiling on queries a second (0: none, the client paces itself to the resolver's answers).
VERIFIER_DNS_MAX_QPS = envfloat("VERIFIER_DNS_MAX_QPS", 0.0, minimum=-1.0)
# Names that certainly have MX records: when every one of them fails, the resolver is broken
# and its NXDOMAIN / no-MX answers judge nothing (README, "When the resolver lies"). Empty: off.
VERIFIER_DNS_CANARIES = envlist("VERIFIER_DNS_CANARIES", ["gmail.com", "outlook.com", "yahoo.com"])
# How long one canary check is trusted, by every process (it lives in the shared cache).
VERIFIER_DNS_CANARY_SECONDS = envfloat("VERIFIER_DNS_CANARY_SECONDS", 60.0, minimum=0.0)
VERIFIER_DOMAIN_TTL_MIN = 60
VERIFIER_DOMAIN_TTL_MAX = 6 * 3600

# --- Deep verification (SMTP; docs/deep.md) --------------------------------------------------
# Off: validation_mode "deep" is refused with deep_mode_disabled.
VERIFIER_DEEP_MODE = envbool("VERIFIER_DEEP_MODE", False)
# The name in EHLO (its PTR record should match the sending IP) and the MAIL FROM address.
VERIFIER_SMTP_HELO = envstr("VERIFIER_SMTP_HELO", "localhost")
VERIFIER_SMTP_FROM = envstr("VERIFIER_SMTP_FROM", "")
VERIFIER_SMTP_PORT = envint("VERIFIER_SMTP_PORT", 25, minimum=1)
# Each SMTP step (connect, banner, every command) waits at most this long; a single request
# answers within 2 x this + 5 s whatever the MX does.
VERIFIER_SMTP_TIMEOUT = envfloat("VERIFIER_SMTP_TIMEOUT", 10.0)
VERIFIER_SMTP_MAX_CONNECTIONS_PER_HOST = envint("VERIFIER_SMTP_MAX_CONNECTIONS_PER_HOST", 3, minimum=1)
# Where the per-address connection slots' lock files live: one directory per machine.
VERIFIER_SMTP_LOCK_DIR = envstr("VERIFIER_SMTP_LOCK_DIR", "/tmp/verifier-smtp-slots")
VERIFIER_SMTP_GREYLIST_RETRY_SECONDS = envfloat("VERIFIER_SMTP_GREYLIST_RETRY_SECONDS", 300.0)
# "socks5://host:port": every SMTP connection goes through this proxy.
VERIFIER_SMTP_PROXY = envstr("VERIFIER_SMTP_PROXY", "")
# Where sessions leave from (docs/deep.md, "Egresses"): comma-separated `bind:<address>` or
# `socks5://host:port`, each optionally `|helo=<name>`; empty: this machine's address. Checked at
# start-up (verification/apps.py).
VERIFIER_SMTP_EGRESS = envstr("VERIFIER_SMTP_EGRESS", "")
# Egress health: an egress whose share of sessions refused for its reputation over the last 15
# minutes (at least 20 sessions) exceeds this rests this long, and the others carry its work.
VERIFIER_SMTP_EGRESS_BLOCKED_SHARE = envfloat("VERIFIER_SMTP_EGRESS_BLOCKED_SHARE", 0.3, minimum=0.0)
VERIFIER_SMTP_EGRESS_REST_SECONDS = envfloat("VERIFIER_SMTP_EGRESS_REST_SECONDS", 900.0, minimum=0.0)
# Blocklist self-check (docs/deep.md, "Running deep mode on the internet"): each egress's address is
# looked up in each of these DNSBL zones (comma-separated; none by default) this often; a listed egress
# rests until delisted.
VERIFIER_SMTP_DNSBL_ZONES = envlist("VERIFIER_SMTP_DNSBL_ZONES")
VERIFIER_SMTP_DNSBL_INTERVAL_SECONDS = envfloat("VERIFIER_SMTP_DNSBL_INTERVAL_SECONDS", 900.0, minimum=0.0)
# With REDIS_URL: a politeness lease a process stops renewing (it died) frees itself after this long.
VERIFIER_SMTP_LEASE_SECONDS = envfloat("VERIFIER_SMTP_LEASE_SECONDS", 5.0, minimum=0.5)
# Tests only: let MX hosts on loopback and private networks be contacted.
VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS = envbool("VERIFIER_SMTP_ALLOW_PRIVATE_NETWORKS", False)
# A deep single or batch verification answered `unknown` for a temporary reason (greylisted,
# unreachable) is asked again after each of these delays in turn, each counted from the attempt
# before; after the last it gives up (docs/deep.md, "Unknowns resolve later").
VERIFIER_SMTP_RETRY_SCHEDULE = envdurations("VERIFIER_SMTP_RETRY_SCHEDULE", "5m,15m,1h,4h,12h")
# Whether an `unknown` answer costs a credit (README, "What a customer pays"). On: every verification
# costs one, as the interface says. Off: unknowns are free, a bulk job's unknown rows are credited back.
VERIFIER_CHARGE_UNKNOWN = envbool("VERIFIER_CHARGE_UNKNOWN", True)
# Deep verifications one account may have waiting on mail servers at once (verification/deep_requests.py).
VERIFIER_DEEP_REQUESTS_PER_ACCOUNT = envint("VERIFIER_DEEP_REQUESTS_PER_ACCOUNT", 4, minimum=1)

# --- Privacy (docs/privacy.md) ---------------------------------------------------------------
# The secret of the HMAC that keys what is shared across accounts (mailbox answers, feedback
# outcomes, objections) in place of the address (lib/address_keys.py). Required in production: a
# known pepper would let anyone with a copy of the database test addresses against it. Changing it
# forgets those stores (their keys no longer match), so set it once.
VERIFIER_ADDRESS_PEPPER = envstr("VERIFIER_ADDRESS_PEPPER", "")

# --- Bounce feedback (docs/feedback.md) ----------------------------------------------------
# The delivered share a catch-all address is assumed to have before any outcome is reported.
FEEDBACK_CATCH_ALL_PRIOR = envfloat("FEEDBACK_CATCH_ALL_PRIOR", 0.7)
# Where an SNS message's signing certificate may come from (feedback/sns.py): AWS's SNS hosts, https, a .pem.
# Not read from the environment: only the tests point it at a loopback server.
SNS_SIGNING_CERT_URL_PATTERN = r"https://sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?/[^?#]*\.pem"

# The bounce guarantee (docs/guarantee.md): refunds of a calendar month's answers are credited up to this
# share of the account's charged `valid` answers that month, rounded down; past it they are recorded only.
GUARANTEE_MAX_SHARE = envfloat("GUARANTEE_MAX_SHARE", 0.05)
if GUARANTEE_MAX_SHARE > 1:
    raise ImproperlyConfigured(f"GUARANTEE_MAX_SHARE is a share of answers, at most 1, got {GUARANTEE_MAX_SHARE}")

# --- Bulk jobs and callbacks --------------------------------------------------------------
CALLBACK_ALLOW_PRIVATE_NETWORKS = envbool("CALLBACK_ALLOW_PRIVATE_NETWORKS", False)
CALLBACK_RETRY_BASE_SECONDS = envfloat("CALLBACK_RETRY_BASE_SECONDS", 30.0)
CALLBACK_RETRY_FACTOR = envfloat("CALLBACK_RETRY_FACTOR", 4.0, minimum=1.0)
CALLBACK_TIMEOUT_SECONDS = envfloat("CALLBACK_TIMEOUT_SECONDS", 10.0)
# Rows per chunk: one worker task, one credit reservation, one result part.
BULK_CHUNK_SIZE = envint("BULK_CHUNK_SIZE", 2000, minimum=1)
# A deep job's chunks hold this many rows (at most BULK_CHUNK_SIZE).
BULK_DEEP_CHUNK_SIZE = envint("BULK_DEEP_CHUNK_SIZE", 2000, minimum=1)
# A deep worker takes at most this many of a job's rows at once (whole chunks), grouped by MX address
# across them; a job is dealt into BULK_DEEP_WORKERS batches within it, run side by side
# (docs/deep.md, Bulk jobs).
BULK_DEEP_BATCH_ROWS = envint("BULK_DEEP_BATCH_ROWS", 20000, minimum=1)
# A claimed chunk not finished within its lease is taken over by the next worker
# (the every-minute requeue schedule, or django-q's own `retry` redelivery).
BULK_CHUNK_LEASE_SECONDS = envint("BULK_CHUNK_LEASE_SECONDS", 120, minimum=1)
# Fair share (jobs/fair_share.py): a new job asks this many workers to take chunks at once.
BULK_PARALLEL_CHUNKS = envint("BULK_PARALLEL_CHUNKS", 4, minimum=1)
# A bulk task goes on from chunk to chunk for this long, then hands over to a fresh task.
BULK_TASK_SECONDS = envfloat("BULK_TASK_SECONDS", 5.0)
# Bulk workers run at this niceness (0: as the web), so interactive requests go first.
BULK_WORKER_NICENESS = envint("BULK_WORKER_NICENESS", 10, minimum=0)
# estimated_seconds until a job of 1,000 rows or more has completed to measure throughput on: what
# a resolver capped at 1,000 queries a second gives on a list with one new domain every two rows.
BULK_DEFAULT_ROWS_PER_SECOND = envfloat("BULK_DEFAULT_ROWS_PER_SECOND", 2000.0)
# The same for deep jobs (docs/deep.md): they wait on mail servers, a few connections to each;
# 20 rows a second is a list mostly at one large provider (3 sessions of RCPTs at ~150 ms each).
BULK_DEEP_DEFAULT_ROWS_PER_SECOND = envfloat("BULK_DEEP_DEFAULT_ROWS_PER_SECOND", 20.0)
# A free estimate of a list's quality (docs/bulk.md, "Evaluate a list"): fast verdicts of a random
# sample of at most this many of its addresses (and at most half of them), for lists of at least
# LIST_EVALUATION_MIN_ADDRESSES, at most LIST_EVALUATIONS_PER_DAY new lists per account in 24 hours.
LIST_EVALUATION_SAMPLE = envint("LIST_EVALUATION_SAMPLE", 200, minimum=10)
LIST_EVALUATION_MIN_ADDRESSES = envint("LIST_EVALUATION_MIN_ADDRESSES", 100, minimum=20)
LIST_EVALUATIONS_PER_DAY = envint("LIST_EVALUATIONS_PER_DAY", 10, minimum=0)
# A finished job's files (input and results) are deleted this many days after it finished.
JOB_RETENTION_DAYS = envint("JOB_RETENTION_DAYS", 30, minimum=1)
