"""engine.core.text: the one wait-in-words formatter of the What-if and Teams & fairness pages."""
import math

import pytest

from engine.core.text import hours_minutes


@pytest.mark.parametrize("seconds, text", [(45, "45 s"), (720, "12 min"), (7200, "2 h"), (12_000, "3 h 20 min"),
                                           (100 * 3600, "100 h"), (1_000_000, "278 h"), (None, "n/a"),
                                           (math.nan, "n/a"), (math.inf, "no limit")])
def test_hours_minutes(seconds, text):
    assert hours_minutes(seconds) == text
