"""Benchmark: the executive report on the sample data (issue 6, Speed: at most 10 s, PDF included).

1. Picks the best bundled candidate against FIFO over the first 7 days: every bundled scenario runs
   once (engine.compare.run_scenarios) and is ranked by spend saved per year, then p95 wait; scenarios
   with [[region]] edits are listed but not picked (their savings come from edited prices, not from
   scheduling).
2. Times `build_report` + `write_pdf` for FIFO vs that candidate over the first 7 days, in process
   (tables loaded, as the dashboard has them cached), and `meridian report` end to end (a fresh
   process: imports, database, simulation, PDF).
3. --whole: the same report over the whole sample (92,340 jobs).
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

from engine.cli_simulate import tables
from engine.compare import first_days, run_scenarios
from engine.report import build_report, write_pdf
from engine.scenario import Scenario

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "sample_data" / "scenarios"
SCREENSHOT = REPO / "dashboard" / "screenshots" / "report.png"


def _timed(call):
    start = time.perf_counter()
    value = call()
    return value, time.perf_counter() - start


def best_candidate(data) -> str:
    """The bundled scenario without price edits that saves the most spend per year against FIFO over
    7 days (then the lower p95 wait)."""
    names = sorted(p.stem for p in SCENARIOS.glob("*.toml") if p.stem != "fifo")
    scenarios = [Scenario.load(SCENARIOS / f"{n}.toml") for n in ["fifo", *names]]
    runs, _ = run_scenarios(first_days(scenarios, data[0], 7), *data)
    base = runs[0].kpis
    print(f"{'candidate (7 days vs fifo)':28s} {'spend saved/yr':>15s} {'idle $ recovered/yr':>20s} {'p95 wait h':>11s}")
    rows = []
    for run in runs[1:]:
        k = run.kpis
        saved = base["cost_usd_per_year"] - k["cost_usd_per_year"]
        if not run.scenario.region_edits:
            rows.append((saved, -k["wait_p95_s"], run.scenario.name))
        print(f"{run.scenario.name:28s} {saved:15,.0f} {base['idle_cost_usd_per_year'] - k['idle_cost_usd_per_year']:20,.0f}"
              f" {k['wait_p95_s'] / 3600:11.2f}")
    return max(rows)[2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--whole", action="store_true", help="also report over the whole sample")
    parser.add_argument("--screenshot", action="store_true", help="write dashboard/screenshots/report.png")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.duckdb"
        data, seconds = _timed(lambda: tables(types.SimpleNamespace(trace=None, dataset="sample", db=str(db))))
        print(f"load the sample's tables: {seconds:.2f} s")
        best = best_candidate(data)
        print(f"best bundled candidate: {best}")
        fifo, cand = Scenario.load(SCENARIOS / "fifo.toml"), Scenario.load(SCENARIOS / f"{best}.toml")
        windows = [("first 7 days", 7.0), *([("whole sample", None)] if opts.whole else [])]
        for label, days in windows:
            report, build_s = _timed(lambda: build_report(*data, fifo, [cand], days=days))
            pdf = Path(folder) / f"report-{label.replace(' ', '-')}.pdf"
            _, pdf_s = _timed(lambda: write_pdf(report, pdf))
            print(f"{label}: build {build_s:.2f} s + PDF {pdf_s:.2f} s = {build_s + pdf_s:.2f} s "
                  f"({pdf.stat().st_size / 1e3:.0f} kB)")
            for sentence in report.headline:
                print(f"  - {sentence}")
            if label == "first 7 days" and opts.screenshot:
                subprocess.run(["pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile", str(pdf),
                                str(SCREENSHOT.with_suffix(""))], check=True)
                print(f"wrote {SCREENSHOT.relative_to(REPO)}")
        out = Path(folder) / "cli.pdf"
        command = [sys.executable, "-m", "engine.cli", "report", "--dataset", "sample", "--db", str(db),
                   "--baseline", str(SCENARIOS / "fifo.toml"), "--candidate", str(SCENARIOS / f"{best}.toml"),
                   "--days", "7", "--out", str(out)]
        done, cli_s = _timed(lambda: subprocess.run(command, capture_output=True, text=True, cwd=REPO))
        assert done.returncode == 0, done.stderr
        print(f"`meridian report ... --days 7 --out report.pdf` end to end (fresh process): {cli_s:.2f} s")


if __name__ == "__main__":
    main()
