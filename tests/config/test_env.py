"""Settings from the environment: a value that cannot be read stops start-up, a blank one is the default."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envdurations, envfloat, envint


@pytest.mark.parametrize(("raw", "expected"), [("7", 7), (" 12 ", 12), ("", 5)])
def test_envint_reads_integers_and_blank_is_the_default(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: int
) -> None:
    monkeypatch.setenv("X_SETTING", raw)
    assert envint("X_SETTING", 5, minimum=1) == expected


@pytest.mark.parametrize(("raw", "message"), [("abc", "must be an integer, got 'abc'"), ("0", "must be >= 1, got 0")])
def test_envint_refuses_what_it_cannot_use(monkeypatch: pytest.MonkeyPatch, raw: str, message: str) -> None:
    monkeypatch.setenv("X_SETTING", raw)
    with pytest.raises(ImproperlyConfigured, match=f"X_SETTING {message}"):
        envint("X_SETTING", 5, minimum=1)


@pytest.mark.parametrize(("raw", "expected"), [("0.25", 0.25), ("3", 3.0), ("  ", 1.5)])
def test_envfloat_reads_numbers_and_blank_is_the_default(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: float
) -> None:
    monkeypatch.setenv("X_SETTING", raw)
    assert envfloat("X_SETTING", 1.5) == expected


@pytest.mark.parametrize(
    ("raw", "message"), [("fast", "must be a number, got 'fast'"), ("0", "must be > 0.0, got 0.0")]
)
def test_envfloat_refuses_what_it_cannot_use(monkeypatch: pytest.MonkeyPatch, raw: str, message: str) -> None:
    monkeypatch.setenv("X_SETTING", raw)
    with pytest.raises(ImproperlyConfigured, match=f"X_SETTING {message}"):
        envfloat("X_SETTING", 1.5)


def test_envbool_refuses_a_word_it_does_not_know(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("X_SETTING", "maybe")
    with pytest.raises(ImproperlyConfigured, match="X_SETTING must be a boolean"):
        envbool("X_SETTING", False)


@pytest.mark.parametrize(
    ("raw", "expected"), [("5m,15m,1h", (300, 900, 3600)), (" 30s , 2d ", (30, 172800)), ("", (60,))]
)
def test_envdurations_reads_durations_in_seconds_and_blank_is_the_default(
    monkeypatch: pytest.MonkeyPatch, raw: str, expected: tuple[int, ...]
) -> None:
    monkeypatch.setenv("X_SETTING", raw)
    assert envdurations("X_SETTING", "1m") == expected


@pytest.mark.parametrize("raw", ["5", "5x", "0m", "-1h", "5m,,1h", "1.5h"])
def test_envdurations_refuses_what_it_cannot_use(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("X_SETTING", raw)
    with pytest.raises(ImproperlyConfigured, match="X_SETTING must be comma-separated durations"):
        envdurations("X_SETTING", "1m")
