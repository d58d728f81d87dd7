"""Utilisation importer: Philly's node sequence end to end, the generic GPU form, malformed series."""
from pathlib import Path

import pandas as pd
import pytest
from conftest import TRACES, shared

from engine.telemetry.errors import ImportRejected
from engine.telemetry.importers.common import ImportOptions
from engine.telemetry.importers.detect import detect_format
from engine.telemetry.importers.utilization import parse_utilization
from engine.telemetry.ingest import ingest_path
from engine.telemetry.store import Store

PHILLY = TRACES / "philly" / "philly_node_sequence.csv"
DATA = Path(__file__).parent / "data" / "utilization"


@pytest.fixture
def store(tmp_path):
    store = Store.open(tmp_path / "meridian.duckdb")
    yield store
    store.close()


@shared("traces/philly/philly_node_sequence.csv")
def test_philly_node_sequence(store):
    assert detect_format(PHILLY.name, PHILLY.read_bytes()) == "utilization"
    result = ingest_path(store, PHILLY)
    assert (result.format, result.rows) == ("utilization", 105_644)
    assert "times without a UTC offset read as UTC (pass the time zone to say otherwise)" in result.notes
    series = store.utilization(result.dataset)
    assert len(series) == 105_644
    first, last = series.iloc[0], series.iloc[-1]
    assert (first["ts_utc"], first["busy"], first["total"], first["unit"]) == (
        pd.Timestamp("2017-10-03 00:00:00"), 312, 420, "nodes")
    assert first["util_pct"] == pytest.approx(100 * 312 / 420)
    assert (last["ts_utc"], last["busy"]) == (pd.Timestamp("2017-12-15 18:42:00"), 186)
    assert set(series["region"]) == {"default"}
    summary = store.datasets().set_index("name").loc[result.dataset]
    assert (summary["format"], summary["rows"]) == ("utilization", 105_644)


@shared("traces/philly/philly_node_sequence.csv")
def test_philly_in_a_stated_zone():
    series = parse_utilization(PHILLY.read_bytes(), PHILLY.name,
                               ImportOptions(tz="America/Los_Angeles")).tables["utilization"]
    assert series["ts_utc"].iloc[0] == pd.Timestamp("2017-10-03 07:00:00")      # PDT
    assert series["ts_utc"].iloc[-1] == pd.Timestamp("2017-12-16 02:42:00")     # PST


def test_generic_gpu_series_with_mixed_time_forms():
    batch = parse_utilization((DATA / "gpu_busy.csv").read_bytes(), "gpu_busy.csv",
                              ImportOptions(tz="Europe/Berlin"))
    series = batch.tables["utilization"]
    assert series["ts_utc"].tolist() == [pd.Timestamp(t) for t in (
        "2024-03-31 00:30:00",     # Z
        "2024-03-30 23:30:00",     # +02:00
        "2024-03-31 01:30:00",     # naive Berlin wall time, after clocks went forward (CEST)
        "2024-03-31 02:30:00",     # epoch seconds
        "2024-03-31 02:00:00")]
    assert series["region"].tolist() == ["eu-west", "eu-west", "eu-west", "ap-south", "default"]
    assert series["cluster"].tolist() == ["c1", "c1", "c1", "c2", "c3"]
    assert series["util_pct"].tolist() == [75, 100, 50, 0, 75]
    assert set(series["unit"]) == {"gpus"}
    assert batch.notes == ["times without a UTC offset read as wall-clock times of Europe/Berlin"]


def test_utilization_fractions_become_percent():
    batch = parse_utilization((DATA / "util_fraction.csv").read_bytes(), "util_fraction.csv", ImportOptions())
    series = batch.tables["utilization"]
    assert series["util_pct"].tolist() == [25, 100, 0]
    assert series["node"].tolist() == ["n1", "n1", "n2"] and series["busy"].isna().all()
    assert "utilization values are all <= 1: read as fractions and multiplied by 100" in batch.notes


def test_malformed_series(store):
    ingest_path(store, DATA / "gpu_busy.csv", options=ImportOptions(tz="Europe/Berlin"))
    before = store.content_digest()
    with pytest.raises(ImportRejected) as caught:
        ingest_path(store, DATA / "malformed.csv")
    name = str(DATA / "malformed.csv")
    assert caught.value.lines() == [f"{name}:{line}: {reason}" for line, reason in [
        (3, "timestamp is not a time: 'yesterday' (expected ISO-8601 or epoch seconds)"),
        (4, "busy_gpus 20 exceeds total_gpus 16"),
        (5, "busy_gpus is not a number: 'n/a'"),
        (6, "negative value '-1' in column 'total_gpus'"),
    ]]
    assert store.content_digest() == before


def test_wall_times_a_clock_change_skipped_or_repeated_follow_the_daylight_saving_rule():
    series = b"time,busy_gpus,total_gpus\n2024-03-31 01:59,1,2\n2024-03-31 02:30,1,2\n2024-10-27 02:30,1,2\n"
    with pytest.raises(ImportRejected) as caught:
        parse_utilization(series, "dst.csv", ImportOptions(tz="Europe/Berlin", dst="reject"))
    assert [line.split(" (clocks")[0] for line in caught.value.lines()] == [
        "dst.csv:3: local time '2024-03-31 02:30' in column 'time' does not exist in Europe/Berlin",
        "dst.csv:4: local time '2024-10-27 02:30' in column 'time' happened twice in Europe/Berlin"]
    batch = parse_utilization(series, "dst.csv", ImportOptions(tz="Europe/Berlin"))
    assert batch.tables["utilization"]["ts_utc"].tolist()[1:] == [
        pd.Timestamp("2024-03-31 01:30"), pd.Timestamp("2024-10-27 00:30")]   # 03:30 CEST; the first 02:30
    assert ("1 local time(s) in column 'time' fall in the hour repeated when clocks go back in Europe/Berlin: "
            "read as the first (earlier, daylight-saving) occurrence") in batch.notes


def test_series_without_usable_columns():
    with pytest.raises(ImportRejected) as caught:
        parse_utilization(b"time,active\n2024-01-01 00:00,3\n", "half.csv", ImportOptions())
    assert caught.value.lines() == [
        "half.csv:1: a utilisation series needs a time column (timestamp, ts or time) and either busy and "
        "total (busy_gpus/total_gpus, or Philly's active/total) or util_pct"]


def test_header_only_series_is_rejected():
    with pytest.raises(ImportRejected) as caught:
        parse_utilization(b"time,active,total\n\n", "philly.csv", ImportOptions())
    assert caught.value.lines() == ["philly.csv: no data rows (header only?)"]
