"""Benchmark: the simulator core against a floor measured in the same run (issue 22).

The floor is a bare FCFS replay of the HPC2N log in plain Python with heapq (`floor_main` below,
run as its own process: it reads the gzip'd log line by line and replays it on 240 processors).
Every figure is printed as seconds and as a ratio to that floor, since absolute times drift on
this shared machine. Processes are timed whole (start-up, imports, parsing, simulating, output)
with /usr/bin/time -v, which also gives their peak memory.

    .venv/bin/python benchmarks/bench_core.py [--repeat 3] [--skip-sample] [--skip-pass]
        [--scale-table] [--million]

1. `meridian simulate --trace HPC2N --scenario easy-backfill.toml --json` (target <= 4x the floor)
   and the same with fifo.toml (FCFS, no backfilling: target <= 2x);
2. one scheduling pass over 10,000 queued jobs on 2,000 nodes, EASY + best-fit (target <= 2 ms
   median; benchmarks/bench_schedule_pass.py's state);
3. every bundled scenario on the whole sample, in process, data loaded once (target <= 5 s each);
4. --million: `meridian sample --scale 11` (1.04M jobs), `meridian ingest DIR`, `meridian simulate
   --dataset` under easy-backfill.toml and follow-the-sun.toml (target <= 120 s, <= 4 GB peak each);
   --scale-table: the same at scales 0.11 and 1.1 too (10^4, 10^5, 10^6 jobs), easy-backfill.toml.
"""
from __future__ import annotations

import argparse
import gzip
import heapq
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[1]
HPC2N = REPO.parent / "shared" / "traces" / "swf" / "HPC2N-2002-2.2-cln.swf.gz"
SCENARIOS = REPO / "sample_data" / "scenarios"
MERIDIAN = [sys.executable, "-m", "engine.cli"]


def floor_main(path: str) -> None:
    """The floor: parse the SWF log and replay it first-come-first-served on 240 processors."""
    submit, run, procs = [], [], []
    with gzip.open(path, "rt") as lines:
        for line in lines:
            if line.startswith(";") or not line.strip():
                continue
            f = line.split()
            p = int(f[4]) if int(f[4]) > 0 else int(f[7])
            if p > 0 and float(f[3]) >= 0:
                submit.append(float(f[1]))
                run.append(float(f[3]))
                procs.append(p)
    order = sorted(range(len(submit)), key=submit.__getitem__)
    free, running, waiting, i, total_wait = 240, [], deque(), 0, 0.0
    while i < len(order) or waiting:
        arrival = submit[order[i]] if i < len(order) else float("inf")
        if running and running[0][0] <= arrival:
            now, p = heapq.heappop(running)
            free += p
        else:
            now = arrival
            waiting.append(order[i])
            i += 1
        while waiting and procs[waiting[0]] <= free:
            j = waiting.popleft()
            free -= procs[j]
            total_wait += now - submit[j]
            heapq.heappush(running, (now + run[j], procs[j]))
    print(f"{len(submit)} jobs, mean wait {total_wait / len(submit):.1f} s")


class Timed(NamedTuple):
    """One process: wall seconds, peak resident MB, CPU seconds (user + system: steadier than the wall
    clock on a shared machine), and its standard output (None unless asked for)."""

    seconds: float
    peak_mb: float
    cpu_s: float
    out: str | None


def timed_process(command: list[str], cwd: Path = REPO, output: bool = False) -> Timed:
    """One process run in `cwd`, timed by /usr/bin/time -v; its standard output kept when `output`."""
    began = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *command], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    cpu = sum(float(re.search(rf"{kind} time \(seconds\): ([\d.]+)", done.stderr).group(1)) for kind in ("User", "System"))
    return Timed(seconds, peak_kb / 1024, cpu, done.stdout if output else None)


def floor(repeat: int) -> float:
    """Median wall seconds of the floor process."""
    return statistics.median(timed_process([sys.executable, __file__, "--floor", str(HPC2N)])[0]
                             for _ in range(repeat))


def row(label: str, seconds: float, base: float, target: str, peak_mb: float | None = None) -> None:
    memory = f"  peak {peak_mb:7,.0f} MB" if peak_mb is not None else ""
    print(f"  {label:48s} {seconds:8.2f} s  {seconds / base:6.1f}x floor  (target {target}){memory}", flush=True)


def simulate_hpc2n(base: float, repeat: int) -> None:
    for scenario, target in (("easy-backfill", "<= 4x"), ("fifo", "<= 2x")):
        command = [*MERIDIAN, "simulate", "--trace", str(HPC2N), "--scenario", str(SCENARIOS / f"{scenario}.toml"),
                   "--json"]
        runs = [timed_process(command) for _ in range(repeat)]
        row(f"simulate --trace HPC2N {scenario}", statistics.median(r[0] for r in runs), base, target,
            max(r[1] for r in runs))


def one_pass(base: float) -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_schedule_pass import prepared, workload

    from engine.sim.output.collector import collector_paused
    work, times = workload(), []
    for _ in range(15):
        run = prepared(work, "easy", "best-fit")
        with collector_paused():
            began = time.perf_counter()
            run._schedule("r", 3600.0)
            times.append(time.perf_counter() - began)
    median = statistics.median(times)
    print(f"  {'one pass, 10,000 queued, 2,000 nodes, EASY best-fit':48s} {median * 1000:8.2f} ms "
          f"(target <= 2 ms median; floor not applicable)", flush=True)


def whole_sample(base: float) -> None:
    from engine.scenario.spec import Scenario
    from engine.service.run import run_scenario
    from engine.telemetry.sample import read_bundle
    from engine.world.facts import World
    bundle = read_bundle().tables
    jobs, fleet = bundle["jobs"], bundle["fleet"]
    world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
    for path in sorted(SCENARIOS.glob("*.toml")):
        scenario = Scenario.load(path)
        began = time.perf_counter()
        run_scenario(scenario, jobs, fleet, world)
        row(f"whole sample {path.stem}", time.perf_counter() - began, base, "<= 5 s")


def generated(scale: float, folder: Path, days: float | None = None) -> tuple[Path, int]:
    """A database holding `meridian sample --scale` ingested as dataset "big"; (db path, jobs)."""
    out, db = folder / f"sample-{scale}", folder / f"big-{scale}.duckdb"
    subprocess.run([*MERIDIAN, "sample", "--scale", str(scale), "--out", str(out)], cwd=REPO, check=True,
                   capture_output=True)
    subprocess.run([*MERIDIAN, "ingest", str(out), "--dataset", "big", "--db", str(db)], cwd=REPO, check=True,
                   capture_output=True)
    import duckdb
    with duckdb.connect(str(db), read_only=True) as con:
        jobs = con.execute("select count(*) from jobs where dataset = 'big'").fetchone()[0]
    return db, jobs


def simulate_dataset(db: Path, scenario: str) -> tuple[float, float]:
    return timed_process([*MERIDIAN, "simulate", "--dataset", "big", "--db", str(db), "--scenario",
                          str(SCENARIOS / f"{scenario}.toml"), "--json"])[:2]


def scaling(base: float, scales: tuple[float, ...]) -> None:
    """Jobs against seconds and peak memory of `meridian simulate --dataset` under easy-backfill.toml,
    and for the largest scale also under follow-the-sun.toml (the million-job target)."""
    print("  jobs        scenario          seconds   x floor   peak MB", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        for scale in scales:
            db, jobs = generated(scale, Path(folder))
            for scenario in ("easy-backfill", "follow-the-sun") if scale == max(scales) else ("easy-backfill",):
                seconds, peak = simulate_dataset(db, scenario)
                print(f"  {jobs:>10,}  {scenario:15s} {seconds:9.2f} {seconds / base:8.1f} {peak:9,.0f}", flush=True)


def main() -> None:
    args = argparse.ArgumentParser()
    args.add_argument("--floor", help=argparse.SUPPRESS)
    args.add_argument("--repeat", type=int, default=3)
    args.add_argument("--skip-hpc2n", action="store_true")
    args.add_argument("--skip-pass", action="store_true")
    args.add_argument("--skip-sample", action="store_true")
    args.add_argument("--scale-table", action="store_true")
    args.add_argument("--million", action="store_true")
    opts = args.parse_args()
    if opts.floor:
        return floor_main(opts.floor)
    base = floor(opts.repeat)
    print(f"floor (bare heapq FCFS replay of HPC2N, whole process): {base:.3f} s", flush=True)
    if not opts.skip_hpc2n:
        simulate_hpc2n(base, opts.repeat)
    if not opts.skip_pass:
        one_pass(base)
    if not opts.skip_sample:
        whole_sample(base)
    if opts.scale_table or opts.million:
        scaling(base, (0.11, 1.1, 11) if opts.scale_table else (11,))
    print(f"floor again at the end: {floor(opts.repeat):.3f} s")


if __name__ == "__main__":
    main()
