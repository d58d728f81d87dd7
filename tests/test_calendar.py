"""Calendars: working weeks, working hours across midnight and DST, holidays, hour of week.

Expected instants are worked out by hand from the UTC offsets of 2026 (CET +1 / CEST +2 switch on
Sunday 29 March; EDT -4 / EST -5 on Sunday 1 November; EST -> EDT on Sunday 8 March)."""
import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.world.calendar import (
    Calendar,
    holiday_days,
    parse_holiday_spec,
    parse_working_days,
    region_calendars,
    team_calendars,
)

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
EVERY_DAY = "Mon-Sun"


def utc(text: str) -> int:
    """UTC epoch seconds of 'YYYY-MM-DD HH:MM' read as UTC."""
    return int(pd.Timestamp(text, tz="UTC").timestamp())


def minutes_at_work(cal: Calendar, first: str, last: str) -> int:
    grid = np.arange(utc(first), utc(last), 60)
    return int(cal.at_work(grid).sum())


def intervals(cal: Calendar, first: str, last: str) -> list[tuple[str, str]]:
    starts, ends = cal.work_intervals(utc(first), utc(last))
    fmt = "%Y-%m-%d %H:%M"
    return [(pd.Timestamp(s, unit="s").strftime(fmt), pd.Timestamp(e, unit="s").strftime(fmt))
            for s, e in zip(starts, ends)]


# --- parsing -----------------------------------------------------------------------------------
@pytest.mark.parametrize("text, days", [
    ("Mon-Fri", (0, 1, 2, 3, 4)), ("Sun-Thu", (0, 1, 2, 3, 6)), ("Sat-Wed", (0, 1, 2, 5, 6)),
    ("Mon,Tue,Thu", (0, 1, 3)), ("mon-wed, FRI", (0, 1, 2, 4)), ("Sun", (6,)), ("Mon-Sun", tuple(range(7))),
])
def test_working_week_patterns(text, days):
    assert parse_working_days(text) == days


@pytest.mark.parametrize("text", ["", "Mon-Fri-Sat", "Funday", "Mon;Fri", "Monday-Friday"])
def test_bad_working_week_names_the_valid_forms(text):
    with pytest.raises(ValueError, match="Mon-Fri.*Sun-Thu.*Mon,Tue,Thu"):
        parse_working_days(text)


@pytest.mark.parametrize("spec, parsed", [
    ("US", ("US", None)), ("de-by", ("DE", "BY")), ("US-CA", ("US", "CA")), ("FR-zone a", ("FR", "Zone A")),
    ("", (None, None)), (None, (None, None)), (float("nan"), (None, None)), ("  ", (None, None)),
])
def test_holiday_spec(spec, parsed):
    assert parse_holiday_spec(spec) == parsed


def test_bad_holiday_specs_are_explained():
    with pytest.raises(ValueError, match="'XX'.*ISO 3166"):
        parse_holiday_spec("XX")
    with pytest.raises(ValueError, match="US has no subdivision 'ZZ'.*CA"):
        parse_holiday_spec("US-ZZ")


@pytest.mark.parametrize("kwargs, message", [
    ({"tz": "Mars/Olympus"}, "IANA"), ({"tz": "UTC", "start_hour": 24}, "0..23"),
    ({"tz": "UTC", "end_hour": 25}, "0..24"), ({"tz": "UTC", "working_days": ()}, "at least one"),
    ({"tz": "UTC", "working_days": (0, 7)}, "at least one"),
])
def test_invalid_calendars(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Calendar(**kwargs)


def test_calendar_normalises_its_fields_and_is_hashable():
    cal = Calendar("Europe/Berlin", "Fri,Mon-Thu", 9, 17, "de-by")
    assert (cal.working_days, cal.holiday_country, cal.holiday_subdivision) == ((0, 1, 2, 3, 4), "DE", "BY")
    assert cal == Calendar("Europe/Berlin", (4, 3, 2, 1, 0), 9, 17, "DE", "BY")
    assert len({cal, Calendar("Europe/Berlin", "Mon-Fri", 9, 17, "DE-BY")}) == 1


# --- daylight-saving time -----------------------------------------------------------------------
def test_berlin_working_day_is_eight_hours_either_side_of_spring_forward():
    cal = Calendar("Europe/Berlin", EVERY_DAY, 9, 17)
    assert intervals(cal, "2026-03-28 00:00", "2026-03-30 00:00") == [
        ("2026-03-28 08:00", "2026-03-28 16:00"),     # Saturday, CET
        ("2026-03-29 07:00", "2026-03-29 15:00"),     # Sunday, CEST from 01:00 UTC
    ]
    assert minutes_at_work(cal, "2026-03-28 00:00", "2026-03-29 00:00") == 480
    assert minutes_at_work(cal, "2026-03-29 00:00", "2026-03-30 00:00") == 480


def test_berlin_weekdays_around_spring_forward():
    cal = Calendar("Europe/Berlin", "Mon-Fri", 9, 17, "DE")
    assert intervals(cal, "2026-03-27 00:00", "2026-03-31 00:00") == [
        ("2026-03-27 08:00", "2026-03-27 16:00"), ("2026-03-30 07:00", "2026-03-30 15:00")]


def test_new_york_working_day_is_eight_hours_either_side_of_fall_back():
    cal = Calendar("America/New_York", EVERY_DAY, 9, 17)
    assert intervals(cal, "2026-10-31 00:00", "2026-11-02 00:00") == [
        ("2026-10-31 13:00", "2026-10-31 21:00"), ("2026-11-01 14:00", "2026-11-01 22:00")]
    assert minutes_at_work(cal, "2026-10-31 04:00", "2026-11-01 04:00") == 480
    assert minutes_at_work(cal, "2026-11-01 04:00", "2026-11-02 05:00") == 480


def test_night_shift_over_dst_nights_is_seven_or_nine_real_hours():
    berlin = Calendar("Europe/Berlin", EVERY_DAY, 22, 6)
    assert ("2026-03-28 21:00", "2026-03-29 04:00") in intervals(berlin, "2026-03-28 12:00", "2026-03-29 12:00")
    new_york = Calendar("America/New_York", EVERY_DAY, 22, 6)
    assert ("2026-11-01 02:00", "2026-11-01 11:00") in intervals(new_york, "2026-11-01 00:00", "2026-11-01 12:00")
    assert minutes_at_work(new_york, "2026-11-01 00:00", "2026-11-01 12:00") == 9 * 60


def test_hours_that_occur_twice_or_never():
    fall_back = Calendar("America/New_York", EVERY_DAY, 1, 3)      # 01:00 EDT to 03:00 EST
    assert intervals(fall_back, "2026-11-01 00:00", "2026-11-01 12:00") == [("2026-11-01 05:00", "2026-11-01 08:00")]
    assert minutes_at_work(fall_back, "2026-11-01 00:00", "2026-11-01 12:00") == 180
    spring = Calendar("America/New_York", EVERY_DAY, 2, 4)         # 02:00 EST does not exist
    assert intervals(spring, "2026-03-08 00:00", "2026-03-08 12:00") == [("2026-03-08 07:00", "2026-03-08 08:00")]
    assert minutes_at_work(spring, "2026-03-08 00:00", "2026-03-08 12:00") == 60


# --- crossing midnight --------------------------------------------------------------------------
@pytest.mark.parametrize("when, expected", [
    ("2026-09-04 23:00", True),    # Friday night
    ("2026-09-05 03:00", True),    # Saturday early morning, still Friday's shift
    ("2026-09-05 06:00", False),   # shift ends at 06:00 (exclusive)
    ("2026-09-05 22:00", False),   # Saturday's shift: not a working day
    ("2026-09-07 03:00", False),   # Monday early morning belongs to Sunday's shift
    ("2026-09-07 21:59", False),
    ("2026-09-07 22:00", True),    # Monday night
])
def test_shift_crossing_midnight_belongs_to_its_start_day(when, expected):
    cal = Calendar("UTC", "Mon-Fri", 22, 6)
    assert cal.at_work(np.array([utc(when)]))[0] == expected
    assert cal.at_work_at(utc(when)) == expected


def test_night_shift_before_a_holiday_and_reclaim_after_christmas():
    cal = Calendar("America/New_York", "Mon-Fri", 22, 6, "US")
    got = cal.at_work(np.array([utc("2026-12-25 10:00"),    # Thu 24 shift, 05:00 EST on the 25th
                                utc("2026-12-26 03:00"),    # Christmas (Fri) shift: off
                                utc("2026-12-29 03:00")]))  # Mon 28 shift, 22:00 EST
    assert got.tolist() == [True, False, True]
    assert cal.next_work_start_at(utc("2026-12-25 12:00")) == utc("2026-12-29 03:00")


def test_full_day_and_24_hour_shifts():
    assert minutes_at_work(Calendar("UTC", "Mon", 0, 0), "2026-09-06 00:00", "2026-09-09 00:00") == 24 * 60
    assert intervals(Calendar("UTC", "Mon", 0, 24), "2026-09-06 00:00", "2026-09-09 00:00") == [
        ("2026-09-07 00:00", "2026-09-08 00:00")]
    assert intervals(Calendar("UTC", "Mon", 6, 6), "2026-09-06 00:00", "2026-09-09 00:00") == [
        ("2026-09-07 06:00", "2026-09-08 06:00")]


# --- holidays and working weeks in several countries --------------------------------------------
def test_christmas_in_the_us_and_the_next_working_day():
    cal = Calendar("America/New_York", "Mon-Fri", 9, 18, "US")
    assert cal.is_holiday(np.array([utc("2026-12-25 15:00"), utc("2026-12-24 15:00")])).tolist() == [True, False]
    assert cal.at_work(np.array([utc("2026-12-25 15:00"), utc("2026-12-24 15:00")])).tolist() == [False, True]
    # Thursday 24th 18:00 EST -> (Christmas Friday, weekend) -> Monday 28th 09:00 EST
    assert cal.next_work_start_at(utc("2026-12-24 23:00")) == utc("2026-12-28 14:00")


def test_india_dussehra_and_diwali():
    team = Calendar("Asia/Kolkata", "Mon-Fri", 10, 19, "IN")
    # 06:00 UTC = 11:30 IST; Dussehra is Tuesday 20 October 2026
    assert team.at_work(np.array([utc("2026-10-20 06:00"), utc("2026-10-21 06:00")])).tolist() == [False, True]
    every_day = Calendar("Asia/Kolkata", EVERY_DAY, 10, 19, "IN")
    assert every_day.is_holiday_at(utc("2026-11-08 06:00"))            # Diwali, a Sunday
    assert every_day.at_work(np.array([utc("2026-11-07 06:00"), utc("2026-11-08 06:00")])).tolist() == [True, False]


def test_golden_week_in_tokyo():
    cal = Calendar("Asia/Tokyo", "Mon-Fri", 9, 18, "JP")
    # Friday 1 May 18:00 JST -> weekend, 4-6 May holidays -> Thursday 7 May 09:00 JST (00:00 UTC)
    assert cal.next_work_start_at(utc("2026-05-01 09:00")) == utc("2026-05-07 00:00")
    days = [f"2026-05-0{d} 03:00" for d in range(1, 8)]                 # 12:00 JST
    assert cal.at_work(np.array([utc(d) for d in days])).tolist() == [True, False, False, False, False, False, True]


def test_sun_thu_week_in_israel_with_rosh_hashanah():
    cal = Calendar("Asia/Jerusalem", "Sun-Thu", 9, 18, "IL")
    week = [utc(f"2026-09-{d:02d} 07:00") for d in range(6, 13)]        # 10:00 IDT, Sun 6 .. Sat 12
    assert cal.at_work(np.array(week)).tolist() == [True, True, True, True, True, False, False]
    assert cal.is_holiday_at(utc("2026-09-13 07:00"))                    # Rosh Hashanah, a Sunday
    # Thursday 10th 19:00 IDT -> Fri, Sat, holiday Sunday -> Monday 14th 09:00 IDT (06:00 UTC)
    assert cal.next_work_start_at(utc("2026-09-10 16:00")) == utc("2026-09-14 06:00")


def test_saudi_week_with_national_day():
    cal = Calendar("Asia/Riyadh", "Sun-Thu", 8, 17, "SA")
    hours = np.arange(utc("2026-09-19 21:00"), utc("2026-09-26 21:00"), 3600)   # Sun..Sat local
    assert int(cal.at_work(hours).sum()) == 4 * 9                        # Wednesday 23rd is off


def test_sat_wed_week():
    cal = Calendar("Asia/Dubai", "Sat-Wed", 9, 17, "AE")
    noon = [utc(f"2026-09-{d:02d} 08:00") for d in range(5, 12)]         # Sat 5 .. Fri 11, 12:00 GST
    assert cal.at_work(np.array(noon)).tolist() == [True, True, True, True, True, False, False]


def test_subdivision_holidays():
    bavaria, germany = Calendar("Europe/Berlin", "Mon-Fri", 9, 17, "DE-BY"), Calendar("Europe/Berlin", "Mon-Fri", 9, 17, "DE")
    epiphany = utc("2026-01-06 10:00")                                    # Tuesday, Bavaria only
    assert (bavaria.at_work_at(epiphany), germany.at_work_at(epiphany)) == (False, True)
    california, us = Calendar("America/Los_Angeles", holiday_country="US-CA"), Calendar("America/Los_Angeles", holiday_country="US")
    chavez = utc("2026-03-31 18:00")                                      # Tuesday 11:00 PDT
    assert (california.is_holiday_at(chavez), us.is_holiday_at(chavez)) == (True, False)


def test_holiday_sets_are_cached_and_read_only():
    before = holiday_days.cache_info().misses
    Calendar("Pacific/Auckland", holiday_country="NZ").is_holiday(np.array([utc("2026-12-24 12:00")]))
    misses = holiday_days.cache_info().misses
    assert misses >= before + 3                                           # 2025, 2026, 2027 at least
    Calendar("Pacific/Auckland", EVERY_DAY, holiday_country="NZ").is_holiday(np.array([utc("2026-12-27 12:00")]))
    assert holiday_days.cache_info().misses == misses
    Calendar("Pacific/Auckland", holiday_country="NZ").is_holiday(np.array([utc("2040-05-04 03:00")]))
    assert holiday_days.cache_info().misses > misses
    with pytest.raises(ValueError):
        holiday_days("NZ", None, 2026)[0] = 0


# --- hour of week, constructors, array handling -------------------------------------------------
@pytest.mark.parametrize("tz, when, hour", [
    ("Asia/Tokyo", "2026-08-02 15:00", 0),          # Monday 00:00 JST
    ("Asia/Tokyo", "2026-08-02 14:59", 167),        # Sunday 23:59 JST
    ("Asia/Kolkata", "2026-08-03 04:30", 10),       # Monday 10:00 IST
    ("America/Los_Angeles", "2026-08-08 07:00", 5 * 24 + 0),   # Saturday 00:00 PDT
    ("Europe/Berlin", "2026-03-29 01:00", 6 * 24 + 3),         # Sunday 03:00 CEST, just after the switch
])
def test_local_hour_of_week(tz, when, hour):
    cal = Calendar(tz)
    assert cal.local_hour_of_week(np.array([utc(when)])).tolist() == [hour]
    assert cal.hour_of_week_at(utc(when)) == hour


def test_region_calendar_takes_national_holidays():
    regions = pd.read_csv(SAMPLE / "regions.csv")
    cals = region_calendars(regions)
    assert list(cals) == regions["region"].tolist()
    dublin = cals["eu-west"]
    assert (dublin.tz, dublin.working_days, dublin.start_hour, dublin.end_hour, dublin.holiday_country) == (
        "Europe/Dublin", (0, 1, 2, 3, 4), 9, 18, "IE")
    # Monday 3 August 2026 is Ireland's August bank holiday; Tuesday is a normal day (10:00 IST)
    assert dublin.at_work(np.array([utc("2026-08-03 09:00"), utc("2026-08-04 09:00")])).tolist() == [False, True]
    no_country = Calendar.from_region({"region": "default", "timezone": "UTC", "country": None}, "Mon-Sun", 0, 24)
    assert no_country.holiday_country is None and no_country.at_work_at(utc("2026-12-25 12:00"))


def test_team_calendars_of_the_sample():
    cals = team_calendars(pd.read_csv(SAMPLE / "teams.csv"))
    assert len(cals) == 12
    assert cals["arabic-nlp"] == Calendar("Asia/Riyadh", "Sun-Thu", 8, 17, "SA")
    assert cals["eu-assistant"] == Calendar("Europe/Berlin", "Mon-Fri", 9, 17, "DE")
    # Labor Day, Monday 7 September 2026, 12:00 PDT
    assert not cals["foundation"].at_work_at(utc("2026-09-07 19:00"))
    assert cals["foundation"].at_work_at(utc("2026-09-08 19:00"))


def test_arrays_keep_their_shape_and_datetimes_are_accepted():
    cal = Calendar("Europe/Berlin", "Mon-Fri", 9, 17)
    grid = np.array([[utc("2026-03-27 08:00"), utc("2026-03-27 16:00")],
                     [utc("2026-03-30 06:59"), utc("2026-03-30 07:00")]])
    assert cal.at_work(grid).tolist() == [[True, False], [False, True]]
    assert cal.next_work_start(grid).tolist() == [[grid[0, 0], utc("2026-03-30 07:00")],
                                                   [utc("2026-03-30 07:00"), grid[1, 1]]]
    assert cal.next_work_start(np.array([])).size == 0 and cal.at_work(np.array([], dtype=np.int64)).size == 0
    assert cal.at_work_at(dt.datetime(2026, 3, 30, 7, 30))                       # naive = UTC
    assert cal.at_work_at(dt.datetime(2026, 3, 30, 9, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))))
    assert cal.next_work_start(np.array([utc("2026-03-27 08:00") + 0.5]))[0] == utc("2026-03-27 08:00") + 0.5


# --- vectorised and scalar paths agree; next_work_start is the first working instant ------------
ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe",
         "America/Santiago", "Asia/Riyadh", "Pacific/Chatham", "UTC"]
calendars = st.builds(Calendar, tz=st.sampled_from(ZONES),
                      working_days=st.sampled_from(["Mon-Fri", "Sun-Thu", "Sat-Wed", "Mon,Wed,Fri", "Sun"]),
                      start_hour=st.integers(0, 23), end_hour=st.integers(0, 24),
                      holiday_country=st.sampled_from([None, "US", "DE-BY", "JP", "IL", "IN"]))
instants = st.lists(st.integers(utc("2024-01-01 00:00"), utc("2032-12-31 00:00")), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(cal=calendars, times=instants)
def test_vectorised_matches_scalar(cal, times):
    t = np.array(times, dtype=np.int64)
    assert cal.at_work(t).tolist() == [cal.at_work_at(x) for x in times]
    assert cal.local_hour_of_week(t).tolist() == [cal.hour_of_week_at(x) for x in times]
    assert cal.is_holiday(t).tolist() == [cal.is_holiday_at(x) for x in times]


@settings(max_examples=150, deadline=None)
@given(cal=calendars, times=instants)
def test_next_work_start_is_the_first_instant_at_work(cal, times):
    t = np.array(times, dtype=np.int64)
    nxt = cal.next_work_start(t)
    assert (nxt >= t).all() and cal.at_work(nxt).all()
    moved = nxt > t
    assert not cal.at_work(nxt[moved] - 1).any()
    assert (nxt - t < 40 * 86_400).all()


def test_years_the_holiday_package_does_not_cover_are_quiet(recwarn):
    cal = Calendar("Asia/Kolkata", EVERY_DAY, 10, 19, "IN")          # lunar holidays only 2001-2035
    assert cal.at_work(np.array([utc("2040-01-26 06:00"), utc("2040-01-27 06:00")])).tolist() == [False, True]
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]
