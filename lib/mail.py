"""The console mail backend (the default without an SMTP server), printing mail as a person reads it.

Django's console backend prints the message as sent, and email's default policy wraps any line
over 78 characters in quoted-printable: a printed password-reset link came out broken by `=` line
ends and `=3D` escapes. This one renders with lines of up to 998 characters (RFC 5322's limit), so
the body is printed as written (7bit, or 8bit beyond ASCII).
"""

from __future__ import annotations

import email.policy
from typing import Any

from django.core.mail.backends import console

READABLE = email.policy.default.clone(max_line_length=998, cte_type="8bit")


FRAME = "=" * 79


class ConsoleBackend(console.EmailBackend):
    """Each message framed, its recipient and subject on top: on `make run`'s terminal the sign-up
    link stands out from the request lines around it."""

    def write_message(self, message: Any) -> None:
        text = message.message(policy=READABLE).as_bytes().decode("utf-8", "replace")
        heading = f"MAIL to {', '.join(message.to)}: {message.subject}"
        self.stream.write(f"\n{FRAME}\n{heading}\n{FRAME}\n{text}\n{FRAME}\n\n")
