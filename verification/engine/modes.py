"""How deep a verification goes: the one name for fast/deep (docs/deep.md).

`fast` judges from syntax, the lists and DNS; `deep` also asks the domain's mail server whether
the mailbox exists. A StrEnum, so a member is the string the API, the database and the result
files carry ("fast", "deep"), and compares equal to it. Live/test is another word: an API key's
`key_mode` (accounts.models.KeyMode).
"""

from __future__ import annotations

from enum import StrEnum


class ValidationMode(StrEnum):
    FAST = "fast"
    DEEP = "deep"


VALIDATION_MODES: tuple[str, ...] = tuple(mode.value for mode in ValidationMode)
