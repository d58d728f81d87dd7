"""How fast the Overview is on the embedded sample: the analysis alone, and in a real browser.

Prints:
- loading the sample bundle into a fresh database (what a first start does once);
- reading the dataset's tables from DuckDB and `build_overview` (median of several runs), and
  its main steps; the same on 200,000 seeded random jobs;
- in Chromium against `streamlit run`: the time from navigation to every Overview chart drawn,
  first load (empty analysis cache) and cached (later loads, median).

Run from the repository root: .venv/bin/python benchmarks/bench_overview.py [--runs N]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from conftest import ALL_CHARTS_DRAWN, CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402

from engine.analysis.telemetry import activity, busy, capacity  # noqa: E402
from engine.analysis.telemetry.overview import build_overview
from engine.telemetry.sample import SAMPLE_DATASET, ensure_sample  # noqa: E402
from engine.telemetry.store import Store  # noqa: E402

EXPECTED_CHARTS = 6


def _timed(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def analysis(db: Path, runs: int) -> None:
    store = Store.open(db)
    start = time.perf_counter()
    ensure_sample(store)
    print(f"load sample bundle into a fresh database: {time.perf_counter() - start:.2f} s")
    t_read, tables = _timed(lambda: (store.jobs(SAMPLE_DATASET), store.fleet(SAMPLE_DATASET),
                                     store.regions(SAMPLE_DATASET), store.utilization(SAMPLE_DATASET)), runs)
    jobs, fleet = tables[0], tables[1]
    print(f"sample: {len(jobs):,} jobs, {int(fleet['gpus'].sum()):,} GPUs, {len(tables[3]):,} utilisation samples")
    print(f"read the dataset's tables from DuckDB: {t_read:.3f} s (median of {runs})")
    t_all, overview = _timed(lambda: build_overview(*tables), runs)
    print(f"build_overview: {t_all:.3f} s (median of {runs}); utilisation {overview.kpis.utilisation_pct:.1f}%")
    window = activity.job_window(jobs)
    t_iv, intervals = _timed(lambda: activity.job_intervals(jobs, window), runs)
    cap, _ = capacity.capacity(capacity.fleet_tiers(fleet), intervals)
    t_busy, _ = _timed(lambda: busy.hourly_by_type(intervals, cap, window), runs)
    print(f"  job_intervals: {t_iv:.3f} s; busy GPU-hours per UTC hour x (region, GPU type): {t_busy:.3f} s "
          f"({len(cap)} pairs x {window.hours:.0f} h)")
    store.close()


def synthetic(n_jobs: int, runs: int) -> None:
    """Busy GPU-hours and the whole analysis on `n_jobs` seeded random jobs over 90 days, 6 regions."""
    rng = np.random.default_rng(7)
    submit = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.uniform(0, 90 * 86400, n_jobs), unit="s")
    start = submit + pd.to_timedelta(rng.exponential(3600, n_jobs), unit="s")
    regions = np.array(["us-east", "us-west", "eu-west", "ap-south", "me-central", "ap-northeast"])
    jobs = pd.DataFrame({
        "job_id": np.arange(n_jobs).astype(str), "workload_class": rng.choice(["training", "hpo", "batch"], n_jobs),
        "submit_utc": submit, "start_utc": start,
        "end_utc": start + pd.to_timedelta(rng.exponential(4 * 3600, n_jobs), unit="s"),
        "gpus": rng.choice([0.25, 1.0, 8.0], n_jobs), "gpu_type": rng.choice(["H100", "A100", "L4"], n_jobs),
        "region": rng.choice(regions, n_jobs), "status": "completed"})
    zones = pd.DataFrame({"region": regions, "timezone": [
        "America/New_York", "America/Los_Angeles", "Europe/Dublin", "Asia/Kolkata", "Asia/Riyadh", "Asia/Tokyo"]})
    window = activity.job_window(jobs)

    def busy_hours():
        intervals = activity.job_intervals(jobs, window)
        cap, _ = capacity.capacity(capacity.fleet_tiers(pd.DataFrame()), intervals)
        return busy.hourly_by_type(intervals, cap, window)

    t_busy, hourly = _timed(busy_hours, runs)
    empty = pd.DataFrame()
    t_all, _ = _timed(lambda: build_overview(jobs, empty, zones, empty), runs)
    print(f"{n_jobs:,} random jobs: busy GPU-hours per UTC hour x (region, GPU type) incl. inferred capacity "
          f"{t_busy:.3f} s ({len(hourly):,} bins); build_overview {t_all:.3f} s (medians of {runs})")


def browser(db: Path, runs: int, log: Path) -> None:
    from playwright.sync_api import sync_playwright

    with streamlit_server(db, log) as url, sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = chromium.new_page(viewport={"width": 1440, "height": 2400})

        def load() -> float:
            start = time.perf_counter()
            page.goto(url)
            page.wait_for_function(ALL_CHARTS_DRAWN, arg=EXPECTED_CHARTS, timeout=120_000)
            return time.perf_counter() - start

        def switch() -> float:
            page.locator('[data-testid="stSidebarNav"]').get_by_text("Data", exact=True).click()
            page.wait_for_selector('[data-testid="stFileUploader"]', timeout=120_000)
            start = time.perf_counter()
            page.locator('[data-testid="stSidebarNav"]').get_by_text("Overview", exact=True).click()
            page.wait_for_function(ALL_CHARTS_DRAWN, arg=EXPECTED_CHARTS, timeout=120_000)
            return time.perf_counter() - start

        first = load()
        reloads = [load() for _ in range(runs)]
        switches = [switch() for _ in range(runs)]
        chromium.close()
    print(f"browser, until all {EXPECTED_CHARTS} Overview charts are drawn: first load after server start "
          f"{first:.2f} s; full page load {statistics.median(reloads):.2f} s (median of {runs}, max "
          f"{max(reloads):.2f} s); Data -> Overview in the app {statistics.median(switches):.2f} s "
          f"(median of {runs}, max {max(switches):.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        analysis(db, args.runs)
        synthetic(200_000, args.runs)
        browser(db, args.runs, Path(tmp) / "server.log")


if __name__ == "__main__":
    main()
