"""What the schema fuzzer (bench/fuzz.py) sends where the schema says nothing: the sending services'
webhooks (not in the OpenAPI schema: each service posts its own format), and hostile bodies thrown
at every door (docs/api.md, "Body limits").

Each webhook gets events shaped like its service's (the fields its parser reads, with values drawn
from the service's vocabulary and from anything at all), so that the parser's paths are walked, not
only its first type check. No SNS message names a certificate a parser would fetch: every
`SigningCertURL` is a loopback URL nothing listens on.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

# Anything JSON can say, a few levels deep: the values a careless or hostile sender puts anywhere.
ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
ADDRESS = st.sampled_from(["jane@good.com", "JANE@Good.com ", "not-an-address", "", "a\x00b@good.com"]) | st.text()
MOMENT = (
    st.integers(min_value=-(2**40), max_value=2**40)
    | st.sampled_from(["2026-11-20T09:30:00Z", "2026-W47-5T09:30:00Z", "2026-11-20T09:30:00.1234567+02:00", "1e999"])
    | st.text()
)


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return value | ANY_JSON


SENDGRID = st.lists(
    st.fixed_dictionaries(
        {
            "email": _maybe(ADDRESS),
            "event": _maybe(st.sampled_from(["delivered", "bounce", "dropped", "spamreport", "open", "deferred"])),
            "timestamp": _maybe(MOMENT),
        },
        optional={"type": _maybe(st.sampled_from(["bounce", "blocked"])), "reason": _maybe(st.text())},
    )
    | ANY_JSON,
    max_size=5,
)
MAILGUN = st.fixed_dictionaries(
    {
        "event-data": _maybe(
            st.fixed_dictionaries(
                {
                    "event": _maybe(st.sampled_from(["delivered", "failed", "complained", "opened"])),
                    "recipient": _maybe(ADDRESS),
                    "timestamp": _maybe(MOMENT),
                },
                optional={"severity": _maybe(st.sampled_from(["permanent", "temporary"]))},
            )
        )
    },
    optional={
        "signature": _maybe(st.fixed_dictionaries({"timestamp": MOMENT, "token": st.text(), "signature": st.text()}))
    },
)
POSTMARK = st.fixed_dictionaries(
    {},
    optional={
        "RecordType": _maybe(st.sampled_from(["Delivery", "Bounce", "SpamComplaint", "Open"])),
        "Type": _maybe(st.sampled_from(["HardBounce", "SoftBounce", "SpamComplaint"])),
        "Email": _maybe(ADDRESS),
        "Recipient": _maybe(ADDRESS),
        "BouncedAt": _maybe(MOMENT),
        "DeliveredAt": _maybe(MOMENT),
    },
)
SES = st.fixed_dictionaries(
    {
        "Type": _maybe(st.sampled_from(["Notification", "SubscriptionConfirmation", "UnsubscribeConfirmation"])),
        "Message": _maybe(ANY_JSON.map(json.dumps) | st.text()),
    },
    optional={
        "SigningCertURL": st.just("http://127.0.0.1:9/cert.pem"),  # loopback, and nothing listens there
        "SignatureVersion": st.sampled_from(["1", "2"]) | st.text(),
        "Signature": st.text(),
        "SubscribeURL": st.just("http://127.0.0.1:9/confirm"),
        "MessageId": st.text(),
        "TopicArn": st.text(),
        "Timestamp": MOMENT,
    },
)
WEBHOOK_EVENTS: dict[str, st.SearchStrategy[Any]] = {
    "sendgrid": SENDGRID | ANY_JSON,
    "mailgun": MAILGUN | ANY_JSON,
    "postmark": POSTMARK | ANY_JSON,
    "ses": SES | ANY_JSON,
}

JSON = "application/json"
MEGABYTE = 1024 * 1024
# (name, content type, body): every door gets each of them.
HOSTILE_BODIES: list[tuple[str, str, bytes]] = [
    ("nested 100,000 deep", JSON, b"[" * 100_000),
    ("objects nested 10,000 deep", JSON, b'{"a":' * 10_000 + b"1" + b"}" * 10_000),
    ("nested 65 deep", JSON, b"[" * 65 + b"]" * 65),
    ("3 MB", JSON, b'{"email": "jane@good.com", "name": "' + b"a" * 3 * MEGABYTE + b'"}'),
    ("NUL in values and keys", JSON, b'{"email": "a\\u0000@good.com", "name": "x\\u0000", "e\\u0000": [1]}'),
    ("a raw NUL", JSON, b"\x00"),
    ("invalid UTF-8", JSON, b'{"email": "\xff\xfe@good.com", "name": "\xc0\xaf"}'),
    ("UTF-16 with a BOM", JSON, '{"email": "jane@good.com"}'.encode("utf-16")),
    ("a lone surrogate", JSON, b'{"email": "\\ud800@good.com", "name": "\\udfff"}'),
    ("a huge number", JSON, b'{"email": ' + b"9" * 5000 + b', "daily_cap": 1e999}'),
    ("not JSON", JSON, b"{'email': "),
    ("JSON as text/plain", "text/plain", b'{"email": "jane@good.com"}'),
    ("a broken multipart", "multipart/form-data; boundary=x", b"--x\r\nContent-Disposition: form-data\r\n\r\n\x00"),
    ("a form with NUL", "application/x-www-form-urlencoded", b"email=a%00b&name=%ff%fe"),
]


def error_shaped(status: int, content_type: str, body: bytes) -> str | None:
    """Why a JSON door's answer is not acceptable, or None: never a 5xx; an error in the one shape."""
    if status >= 500:
        return f"{status}: {body[:200]!r}"
    if status < 400:
        return None
    if not content_type.startswith(JSON):
        return f"{status} answered as {content_type}, not the JSON error shape"
    try:
        error = json.loads(body)["error"]
        assert set(error) == {"code", "message", "param"}
    except (ValueError, KeyError, TypeError, AssertionError):
        return f"{status}: not the error shape: {body[:200]!r}"
    return None
