"""Benchmark: the executive report on the sample data (issue 6, Speed: at most 10 s, PDF included;
issue 20: the report now leads with the load headroom and compaction searches).

The Report page's defaults: the recorded baseline (engine.scenario.recorded) against follow-the-sun
over the first 7 days, 3 seeds on 2 worker processes.
1. `build_report` + `write_pdf` in process (tables loaded, as the dashboard has them cached): first
   with the headroom searches' cache empty, then again (the page asked again, or after What-if ran
   the same scenarios: the searches are cached in the process).
2. `meridian report` end to end (a fresh process: imports, database, simulations, searches, PDF).
3. --whole: the same report over the whole sample (92,340 jobs), cache empty.
4. --screenshot: page 1 of the 7-day PDF to dashboard/screenshots/report.png (pdftoppm -r 80).

    .venv/bin/python benchmarks/bench_report.py [--whole] [--screenshot]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

from engine.cli.common import tables
from engine.scenario.recorded import recorded_baseline
from engine.scenario.spec import Scenario
from engine.service.headroom import measure as measure_module
from engine.service.headroom.measure import HeadroomOptions
from engine.service.report.builder import build_report
from engine.service.report.pdf import write_pdf

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "sample_data" / "scenarios"
SCREENSHOT = REPO / "dashboard" / "screenshots" / "report.png"
CANDIDATE = "follow-the-sun"


def _timed(call):
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--whole", action="store_true", help="also report over the whole sample")
    parser.add_argument("--screenshot", action="store_true", help="write dashboard/screenshots/report.png")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.duckdb"
        data, seconds = _timed(lambda: tables(types.SimpleNamespace(trace=None, dataset="sample", db=str(db))))
        print(f"load the sample's tables: {seconds:.2f} s")
        baseline, cand = recorded_baseline("per-pool-fifo"), Scenario.load(SCENARIOS / f"{CANDIDATE}.toml")
        options = HeadroomOptions(workers=2)
        windows = [("first 7 days", 7.0), *([("whole sample", None)] if opts.whole else [])]
        for label, days in windows:
            for attempt in ("searches run", "searches cached"):
                if attempt == "searches run":
                    measure_module._CACHE.clear()
                report, build_s = _timed(lambda: build_report(*data, baseline, [cand], days=days, headroom=options))
                pdf = Path(folder) / f"report-{label.replace(' ', '-')}.pdf"
                _, pdf_s = _timed(lambda: write_pdf(report, pdf))
                print(f"{label}, {attempt}: build {build_s:.2f} s + PDF {pdf_s:.2f} s = {build_s + pdf_s:.2f} s "
                      f"({pdf.stat().st_size / 1e3:.0f} kB)")
            for sentence in report.headline:
                print(f"  - {sentence}")
            if label == "first 7 days" and opts.screenshot:
                subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile", str(pdf),
                                str(SCREENSHOT.with_suffix(""))], check=True)
                print(f"wrote {SCREENSHOT.relative_to(REPO)}")
        out = Path(folder) / "cli.pdf"
        command = [sys.executable, "-m", "engine.cli", "report", "--dataset", "sample", "--db", str(db),
                   "--candidate", str(SCENARIOS / f"{CANDIDATE}.toml"), "--days", "7", "--workers", "2",
                   "--out", str(out)]
        done, cli_s = _timed(lambda: subprocess.run(command, capture_output=True, text=True, cwd=REPO))
        assert done.returncode == 0, done.stderr
        print(f"`meridian report --candidate {CANDIDATE}.toml --days 7 --out report.pdf` end to end "
              f"(fresh process): {cli_s:.2f} s")


if __name__ == "__main__":
    main()
