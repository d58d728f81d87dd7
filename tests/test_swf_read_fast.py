"""The SWF job lines' fast reader (pyarrow) against the line-by-line one (Python's float): the same values,
bit for bit, for any numeric fields and whitespace; and None, so that the line-by-line pass reports the
problems, for a line that is not 18 numbers."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.telemetry.errors import ErrorCollector
from engine.telemetry.importers.swf_rows import FIELDS, _read_fast, _read_slow

_NUMBER = st.one_of(st.integers(-1, 10**15).map(str),
                    st.floats(-1e12, 1e12, allow_nan=False).map(repr),
                    st.decimals(-10**6, 10**6, places=4, allow_nan=False, allow_infinity=False).map(str),
                    st.sampled_from(["-0", "+7", "1.", ".5", "1e5", "2.5E-3", "007"]))
_GAP = st.sampled_from([" ", "  ", "\t", " \t "])


@st.composite
def _line(draw) -> str:
    gaps = draw(st.lists(_GAP, min_size=len(FIELDS) + 1, max_size=len(FIELDS) + 1))
    fields = draw(st.lists(_NUMBER, min_size=len(FIELDS), max_size=len(FIELDS)))
    return gaps[0] + "".join(f + gap for f, gap in zip(fields, gaps[1:])) + draw(st.sampled_from(["", "\r"]))


@settings(max_examples=200, deadline=None)
@given(st.lists(_line(), min_size=1, max_size=5))
def test_the_fast_reader_gives_what_python_reads(lines):
    body = "\n".join(lines)
    fast = _read_fast(body, len(lines))
    slow = _read_slow(body, np.arange(1, len(lines) + 1), ErrorCollector("s.swf"))
    assert fast is not None and fast.flags.writeable
    assert np.array_equal(fast.view(np.int64), slow.view(np.int64))


def test_a_line_that_is_not_18_numbers_is_left_to_the_line_by_line_reader():
    good = " ".join(["1"] * len(FIELDS))
    assert _read_fast(good, 1).shape == (1, len(FIELDS))
    for body, count in ((" ".join(["1"] * (len(FIELDS) - 1)), 1), (good + " 1", 1), (good.replace("1", "x", 1), 1),
                        (good.replace("1", "nan", 1), 1), (good.replace("1", "1_0", 1), 1), (good + "\n" + good, 1),
                        (good + "\n ", 2)):
        assert _read_fast(body, count) is None
