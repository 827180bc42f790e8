"""Settings for the email verification service.

Everything that differs between a laptop and production comes from the
environment (see README "Settings"). Defaults give the embedded setup:
SQLite, the django-q2 ORM broker, the database cache and local file storage.

A flat list of settings, each with the comment that says why, read top to bottom: Django's and the
framework's here, the service's own (VERIFIER_*, BULK_*, ...) in config/service_settings.py.
"""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.apps import DJANGO_APPS
from config.env import envbool, envfloat, envint, envlist, envstr
from lib.client_address import trusted_networks

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = envstr("SECRET_KEY", "dev-only-insecure-secret-key-change-me")
DEBUG = envbool("DEBUG", False)
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS")
# The port `make run` (runserver) listens on; the links we hand out follow it unless SITE_URL is set.
PORT = envint("PORT", 8000, minimum=1)
SITE_URL = envstr("SITE_URL", "").rstrip("/") or f"http://localhost:{PORT}"

INSTALLED_APPS = [
    "django.contrib.admin",
    # Before django.contrib.auth: its `createsuperuser` (the email as the login) is the one run.
    "accounts",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_q",
    "django_htmx",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    # Ours, from the ground floor up (config/apps.py, the one list the import rules are made from too).
    *(app for app in DJANGO_APPS if app != "accounts"),
    # After ours: `ops`'s `runserver` (its replies not held back by Nagle's algorithm) is the one run.
    "django.contrib.staticfiles",
]

MIDDLEWARE = [
    "lib.middleware.RequestIdMiddleware",
    "lib.middleware.ObserveMiddleware",
    "apikit.middleware.NulPathMiddleware",
    "apikit.middleware.BodyLimitMiddleware",
    "apikit.cors.CorsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "accounts.middleware.SecondFactorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------
DATABASES = {
    "default": dj_database_url.parse(
        envstr("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=envint("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web process read while a worker writes; IMMEDIATE takes the
    # write lock at BEGIN so two writers queue instead of failing mid-transaction. Bulk
    # workers checkpoint the log between chunks (lib/sql.wal_checkpoint); the automatic
    # checkpoint, run by whichever connection commits as the log passes 4,000 pages (16 MB),
    # is the fallback when none runs.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=4000;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / "var" / "test.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache and queue ---------------------------------------------------------
REDIS_URL = envstr("REDIS_URL", "")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "cache_table"}}

# Three: two may run deep batches at once (they mostly wait on mail servers), one stays free for
# fast jobs (BULK_DEEP_WORKERS below; docs/deep.md, Bulk jobs).
Q_WORKERS = envint("Q_WORKERS", 3, minimum=1)
Q_CLUSTER: dict[str, object] = {
    "name": "verifier",
    "workers": Q_WORKERS,
    # A chunk takes seconds; five minutes is a hung worker, not a slow one.
    "timeout": envint("Q_TIMEOUT", 300, minimum=10),
    # Must exceed timeout, or the ORM broker hands a running task to a second worker.
    "retry": envint("Q_RETRY", 360, minimum=11),
    # Our own tables count chunk attempts (a SIGKILLed task never bumps django-q's
    # counter); this only stops django-q re-running a task that always crashes.
    "max_attempts": 3,
    "ack_failures": True,
    "save_limit": 1000,
    "catch_up": False,
    # The embedded default's ORM broker asks for new tasks this often when idle (Redis waits on the
    # list instead): a job's first chunk waits half of it on average. An idle qcluster measured 1.8%
    # of a core at 0.1 s, 1.1% at 0.2 s, 3.2% at 0.05 s (docs/bulk.md).
    "poll": envfloat("Q_POLL", 0.1, minimum=0.01),
    "label": "Task queue",
}
if Q_CLUSTER["retry"] <= Q_CLUSTER["timeout"]:  # type: ignore[operator]
    raise ImproperlyConfigured("Q_RETRY must exceed Q_TIMEOUT (the ORM broker would run a task twice at once).")
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"

# --- Auth, sessions, security ----------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_SECURE = envbool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
# Load balancers and Prometheus probe over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if envbool("BEHIND_TLS_PROXY", False) else None
# Peers whose X-Forwarded-For is believed (addresses or CIDRs): lib/client_address.py.
try:
    TRUSTED_PROXIES = trusted_networks(envlist("TRUSTED_PROXIES"))
except ValueError as error:
    raise ImproperlyConfigured(f"TRUSTED_PROXIES must list addresses or CIDRs: {error}") from None
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp): our own origin only, no inline script or style. The one
# page that needs more, the API reference (ReDoc), adds what it needs in config/urls.py (REDOC_CSP).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# lib/mail.py: Django's console backend, but printing each mail as written (no quoted-printable).
_EMAIL_BACKEND = envstr("EMAIL_BACKEND", "lib.mail.ConsoleBackend")
_SMTP_OPTIONS = {
    "host": envstr("EMAIL_HOST", "localhost"),
    "port": envint("EMAIL_PORT", 25, minimum=1),
    "username": envstr("EMAIL_HOST_USER", ""),
    "password": envstr("EMAIL_HOST_PASSWORD", ""),
    "use_tls": envbool("EMAIL_USE_TLS", False),
}
MAILERS = {
    "default": {
        "BACKEND": _EMAIL_BACKEND,
        "OPTIONS": _SMTP_OPTIONS if _EMAIL_BACKEND.endswith("smtp.EmailBackend") else {},
    }
}
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "no-reply@localhost")
# Shown on the portal's billing page: where customers ask for credits or another plan.
# Two-factor sign-in (django-otp): the name authenticator apps show, and whether staff need a code
# for the admin (they sign in at /login, which asks for it).
OTP_TOTP_ISSUER = "Verifier"
ADMIN_REQUIRE_2FA = envbool("ADMIN_REQUIRE_2FA", False)

BILLING_CONTACT_EMAIL = envstr("BILLING_CONTACT_EMAIL", "billing@localhost")
# Who receipts say the money went to: the business's name and address, as printed on each receipt.
BILLING_SELLER = envstr("BILLING_SELLER", "Email Verifier")

# --- Self-serve billing (README "Billing") ------------------------------------------------
# Without STRIPE_SECRET_KEY nothing of Stripe is used: the billing page says how to reach staff.
# STRIPE_API_BASE / STRIPE_JS_URL point development and the tests at localstripe on loopback.
STRIPE_SECRET_KEY = envstr("STRIPE_SECRET_KEY", "")
STRIPE_PUBLISHABLE_KEY = envstr("STRIPE_PUBLISHABLE_KEY", "")
STRIPE_WEBHOOK_SECRET = envstr("STRIPE_WEBHOOK_SECRET", "")
STRIPE_API_BASE = envstr("STRIPE_API_BASE", "").rstrip("/")
STRIPE_JS_URL = envstr("STRIPE_JS_URL", "https://js.stripe.com/v3/")
# Every price, in one place (cents of BILLING_PRICES["currency"]). Packs are one-off; plans are
# monthly subscriptions granting their credits each paid period. billing/prices.py reads it.
BILLING_PRICES: dict[str, object] = {
    "currency": "usd",
    "packs": {
        "pack_1k": {"credits": 1_000, "cents": 1_000},
        "pack_10k": {"credits": 10_000, "cents": 7_000},
        "pack_100k": {"credits": 100_000, "cents": 50_000},
        "pack_1m": {"credits": 1_000_000, "cents": 300_000},
    },
    "plans": {
        "starter": {"credits": 5_000, "cents": 2_900},
        "pro": {"credits": 25_000, "cents": 9_900},
    },
}

# --- i18n, static, media ------------------------------------------------------------
LANGUAGE_CODE = "en-us"
# config/formats/en/formats.py: the admin shows 24-hour times, as the portal does.
FORMAT_MODULE_PATH = ["config.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = Path(envstr("MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "media/"
# Where Django spools uploads over 2.5 MB while a request reads them (default: the system's temp
# folder). A web process killed mid-upload leaves its file there; jobs.tasks.sweep_orphan_uploads
# deletes such files after an hour.
FILE_UPLOAD_TEMP_DIR = envstr("FILE_UPLOAD_TEMP_DIR", "") or None

AWS_STORAGE_BUCKET_NAME = envstr("AWS_STORAGE_BUCKET_NAME", "")
if AWS_STORAGE_BUCKET_NAME:
    _default_storage: dict[str, object] = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": AWS_STORAGE_BUCKET_NAME,
            "endpoint_url": envstr("AWS_S3_ENDPOINT_URL", "") or None,
            "region_name": envstr("AWS_S3_REGION_NAME", "") or None,
            "default_acl": None,
            "querystring_auth": True,
            "querystring_expire": 3600,
            "file_overwrite": True,
        },
    }
else:
    _default_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
STORAGES = {
    "default": _default_storage,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# --- API ------------------------------------------------------------------------------
# The JSON endpoints never need more than a few KB; a bigger body is refused unread.
API_MAX_JSON_BODY_BYTES = 16 * 1024
# At the door, before any view or middleware reads a byte (apikit/middleware.py, docs/api.md "Body
# limits"): any body but an upload over 1 MB, an upload (multipart) over 25 MB and room for its
# part headers, is answered 413.
REQUEST_MAX_BODY_BYTES = 1024 * 1024
REQUEST_MAX_UPLOAD_BYTES = 25 * 1024 * 1024 + 64 * 1024
# Form fields other than files (Django's own check, turned into the same 413 by apikit/exceptions.py).
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_MAX_BODY_BYTES

# Verifications a publishable key answers per end-user address an hour (docs/widget.md).
PUBLISHABLE_PER_IP_PER_HOUR = envint("PUBLISHABLE_PER_IP_PER_HOUR", 30, minimum=1)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["apikit.authentication.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated", "apikit.permissions.KeyPermitted"],
    "DEFAULT_THROTTLE_CLASSES": [
        "apikit.key_throttle.PlanRateThrottle",
        "apikit.key_throttle.PublishableAddressThrottle",
    ],
    "DEFAULT_PARSER_CLASSES": ["apikit.parsers.BoundedJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["lib.jsonbody.UTF8JSONRenderer"],
    "EXCEPTION_HANDLER": "apikit.exceptions.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "UNICODE_JSON": True,
    "COMPACT_JSON": True,
    "DATETIME_FORMAT": "%Y-%m-%dT%H:%M:%SZ",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Email Verification API",
    "DESCRIPTION": "Verify single addresses, run bulk CSV jobs and receive signed completion callbacks.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "REDOC_DIST": "SIDECAR",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "SCHEMA_PATH_PREFIX": "/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # OpenAPI 3.1 for its top-level `webhooks`: the job callbacks and verification.resolved are described there.
    "OAS_VERSION": "3.1.0",
    "WEBHOOKS": ["jobs.schema.COMPLETION_WEBHOOK", "verification.apis.RESOLVED_WEBHOOK"],
    # A verdict's status appears in a verify answer and in a verification asked again: one enum, one name.
    "ENUM_NAME_OVERRIDES": {"VerificationResultStatusEnum": ["valid", "invalid", "risky", "unknown"]},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "jobs.schema.document_result_download",
        "privacy.schema.document_export_link",
        "apikit.schema.document_authenticated_headers",
    ],
}

# --- The service's own settings (config/service_settings.py) -------------------------------
from config.service_settings import *  # noqa: E402, F403
from config.service_settings import VERIFIER_ADDRESS_PEPPER  # noqa: E402

if not VERIFIER_ADDRESS_PEPPER:
    if not DEBUG:
        raise ImproperlyConfigured("VERIFIER_ADDRESS_PEPPER must be set (a long random secret) when DEBUG is off.")
    VERIFIER_ADDRESS_PEPPER = "dev-only-address-pepper"
# How many of a machine's bulk workers may run deep chunks at once: all but one by default, so a
# fast job always finds a worker while deep jobs wait on mail servers (docs/deep.md, Bulk jobs).
BULK_DEEP_WORKERS = envint("BULK_DEEP_WORKERS", max(1, Q_WORKERS - 1), minimum=1)

# --- Operations -----------------------------------------------------------------------------
# /metrics answers only when set, and only to `Authorization: Bearer <METRICS_TOKEN>`. With several
# processes, also set PROMETHEUS_MULTIPROC_DIR (read by prometheus-client itself; see README).
METRICS_TOKEN = envstr("METRICS_TOKEN", "")

# plain: one human line per record; json: one JSON object per line, with request id, account id and
# timing, and a line per request (lib/logs.py).
LOG_FORMAT = envstr("LOG_FORMAT", "plain")
LOG_LEVEL = envstr("LOG_LEVEL", "INFO")
if LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'plain' or 'json', not {LOG_FORMAT!r}.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "lib.logs.JsonFormatter"},
    },
    "filters": {"no_static": {"()": "lib.logs.NoStaticRequests"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["no_static"]}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # The workers log every task at INFO; `make run` sets WARNING, so the mail printed beside stands out.
        "django-q": {"level": envstr("Q_LOG_LEVEL", LOG_LEVEL)},
    },
}
