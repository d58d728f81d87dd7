"""ErrorCollector: reports the 100 lowest problems by (line, reason), whatever order they arrive in."""
import numpy as np
import pytest

from engine.telemetry.errors import MAX_REPORTED, ErrorCollector, ImportRejected


def _reported(collector: ErrorCollector) -> tuple[list[tuple[int, str]], int]:
    with pytest.raises(ImportRejected) as caught:
        collector.raise_if_any()
    return [(e.line, e.reason) for e in caught.value.errors], caught.value.total


def test_nothing_added_raises_nothing():
    ErrorCollector("f.csv").raise_if_any()


def test_late_columns_with_early_lines_are_still_shown():
    """Validated column by column: column B's problems come after 150 of column A's, on earlier lines."""
    errors = ErrorCollector("f.csv")
    for line in range(51, 201):
        errors.add(line, "A is bad")
    errors.add_many([2, 3], "B is bad")
    errors.add_many([1, 400], "C is {!r}", ["x", "y"])
    shown, total = _reported(errors)
    assert total == 154
    assert shown[:4] == [(1, "C is 'x'"), (2, "B is bad"), (3, "B is bad"), (51, "A is bad")]
    assert shown[-1] == (147, "A is bad") and len(shown) == MAX_REPORTED


def test_ties_on_a_line_are_ordered_by_reason():
    errors = ErrorCollector("f.csv")
    errors.add_many(np.arange(1, 101), "z")
    errors.add(100, "a")
    shown, total = _reported(errors)
    assert total == 101
    assert shown[-2:] == [(99, "z"), (100, "a")]


def test_many_single_additions_keep_the_lowest_in_bounded_memory():
    errors = ErrorCollector("f.csv")
    for line in range(100_000, 0, -1):
        errors.add(line, "bad")
    assert len(errors._single) < 20 * MAX_REPORTED
    shown, total = _reported(errors)
    assert total == 100_000 and shown == [(line, "bad") for line in range(1, 101)]


def test_long_values_are_cut_in_messages():
    errors = ErrorCollector("f.csv")
    errors.add_many([7], "value {!r} and count {}", [("x" * 100, 3)])
    shown, _ = _reported(errors)
    assert shown == [(7, f"value {'x' * 57 + '...'!r} and count 3")]
