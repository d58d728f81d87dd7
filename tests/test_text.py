"""engine.core.text: the one module where durations become words, one style per purpose."""
import math

import pytest

from engine.core.text import duration, hours, hours_minutes


@pytest.mark.parametrize("seconds, text", [(45, "45 s"), (720, "12 min"), (7200, "2 h"), (12_000, "3 h 20 min"),
                                           (100 * 3600, "100 h"), (1_000_000, "278 h"), (None, "n/a"),
                                           (math.nan, "n/a"), (math.inf, "no limit")])
def test_hours_minutes(seconds, text):
    assert hours_minutes(seconds) == text


@pytest.mark.parametrize("seconds, text", [(30, "30 s"), (2520, "42 min"), (57_960, "16.1 h"),
                                           (99.9 * 3600, "99.9 h"), (1_234_567, "343 h"), (4_000_000, "1,111 h"),
                                           (None, "n/a"), (math.nan, "n/a"), (math.inf, "n/a")])
def test_hours(seconds, text):
    assert hours(seconds) == text


@pytest.mark.parametrize("seconds, text", [(45, "45 s"), (200, "3.33 min"), (19_800, "5.5 h"),
                                           (276_480, "3.2 d"), (None, "-"), (math.nan, "-")])
def test_duration(seconds, text):
    assert duration(seconds) == text


def test_duration_names_what_is_missing_as_asked():
    assert duration(None, "unknown") == "unknown" and duration(math.inf, "unknown") == "unknown"
