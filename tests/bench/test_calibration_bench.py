"""`python -m bench --only calibration`: score / 100 is calibrated per provider family (bench/calibration.py)."""

from __future__ import annotations

import subprocess
import sys

from bench import calibration
from verification.engine.providers import PROVIDER_FAMILIES


def test_every_family_has_an_expected_calibration_error_of_at_most_five_points() -> None:
    result = calibration.measure(seed=7, rows_per_family=4000)
    assert set(result) == set(PROVIDER_FAMILIES)
    for family, found in result.items():
        assert int(found["scored"]) > 3000, family  # type: ignore[call-overload]
        assert float(found["ece"]) <= calibration.MAX_ECE, (family, found["ece"])  # type: ignore[arg-type]


def test_the_expected_calibration_error_is_the_rows_weighted_gap_per_tenth() -> None:
    pairs = [(0.95, 1.0), (0.95, 0.0), (0.15, 0.0), (0.15, 0.0)]
    assert calibration.reliability(pairs) == [(1, 2, 0.15, 0.0), (9, 2, 0.95, 0.5)]
    assert calibration.ece(pairs) == (2 * 0.15 + 2 * 0.45) / 4
    assert calibration.brier(pairs) == (0.05**2 + 0.95**2 + 2 * 0.15**2) / 4


def test_the_documented_command_reports_every_family_and_meets_the_bar() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--only", "calibration"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "met: ECE <= 0.05 for every provider family" in done.stdout
    for family in PROVIDER_FAMILIES:
        assert f"\n{family:9} |" in done.stdout
