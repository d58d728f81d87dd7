"""Many users (issue 28 item 7): K Chromium sessions against one `streamlit run` server on 127.0.0.1.

Starts the dashboard on a fresh database holding the sample, then in two rounds opens K sessions at once
(one Chromium, one browser context per session: separate Streamlit sessions), each of which opens the
Overview (timed from navigation to its KPIs priced and its charts drawn) and then runs the What-if page's
default comparison (recorded vs easy-backfill, with the capacity headline, over the first `--days` days; timed
from the Run click to the headline and every table drawn). Round 1 starts cold (nothing computed);
round 2 opens K new sessions once round 1 is over (everything computed). Prints per round and page the
median, p95 and max seconds, the errors, the server's peak RSS (with its worker processes) and how many
heavy runs the server computed (its `meridian.shared` log lines; none before shared runs existed).

`--client protocol` opens the Overview in K sessions that speak Streamlit's protocol without a browser
(tests/protocol_session.py): the seconds are then the server's alone, from connecting to the page's
last chart and priced tile delivered. With `--client browser` (the default) the K Chromium renderers
share the machine's cores with the server, and on a 2-core machine their drawing (about 3 s of CPU per
Overview) dominates what is measured; real users draw on their own machines.

Bounded: at most 40 sessions, and every wait and the whole run have time limits. Not part of CI.
Run from the repository root, niced: nice .venv/bin/python benchmarks/load_test.py [--sessions K]
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import psutil  # noqa: E402
from conftest import ALL_CHARTS_DRAWN, CHROMIUM, CHROMIUM_ARGS, streamlit_server  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402
from protocol_session import open_page  # noqa: E402

from engine.telemetry.sample import ensure_sample  # noqa: E402
from engine.telemetry.store import Store  # noqa: E402

MAX_SESSIONS = 40
OVERVIEW_CHARTS = 6
PRICED = """() => { const values = Array.from(document.querySelectorAll('[data-testid="stMetricValue"]'));
    return values.length >= 5 && values.every(v => v.innerText.trim() !== '...'); }"""
IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
WHATIF_DONE = """() => document.body.innerText.includes('Why did this job wait?')
    && document.body.innerText.includes('GPUs needed')
    && !document.body.innerText.includes('Queued')"""


class PeakRss:
    """The peak resident memory of a process and its children, sampled every 0.25 s in a thread. It also puts
    back at this test's nice level any of the test's own processes that raised its priority (Chromium's GPU
    process renices itself to -8, and would then take the CPU from the server it measures)."""

    def __init__(self, pid: int):
        self.process, self.peak, self._stop = psutil.Process(pid), 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.wait(0.25):
            try:
                tree = [self.process, *self.process.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_info().rss for p in tree if p.is_running()))
                for child in me.children(recursive=True):
                    if child.nice() < me.nice():
                        child.nice(me.nice())
            except psutil.Error:
                continue

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


async def _session(browser, url: str, days: float, timeout_ms: int) -> dict:
    """One session: the Overview, then the What-if's default run; seconds of each, or the error."""
    context = await browser.new_context(viewport={"width": 1440, "height": 2400})
    page, out = await context.new_page(), {"errors": []}
    page.on("pageerror", lambda exc: out["errors"].append(str(exc)[:200]))
    stage = "opening the Overview"
    try:
        start = time.perf_counter()
        await page.goto(url, timeout=timeout_ms)
        stage = "the Overview's dollars"
        await page.wait_for_function(PRICED, timeout=timeout_ms)
        stage = "the Overview's charts"
        await page.wait_for_function(ALL_CHARTS_DRAWN, arg=OVERVIEW_CHARTS, timeout=timeout_ms)
        await page.wait_for_function(IDLE, timeout=timeout_ms)
        out["overview_s"] = time.perf_counter() - start
        stage = "the What-if"
        await page.locator('[data-testid="stSidebarNav"]').get_by_text("What-if", exact=True).click()
        run = page.get_by_role("button", name="Run", exact=True)
        await run.wait_for(timeout=timeout_ms)
        await page.wait_for_function(IDLE, timeout=timeout_ms)
        field = page.get_by_role("spinbutton", name="Simulate the jobs submitted in the first N days")
        await field.fill(f"{days:g}")
        await field.press("Enter")
        await page.wait_for_timeout(500)
        await page.wait_for_function(IDLE, timeout=timeout_ms)
        start = time.perf_counter()
        await run.click()
        await page.wait_for_function(WHATIF_DONE, timeout=timeout_ms)
        await page.wait_for_function(IDLE, timeout=timeout_ms)
        out["whatif_s"] = time.perf_counter() - start
        if await page.locator('[data-testid="stException"]').count():
            out["errors"].append("exception shown")
    except Exception as exc:  # a timeout or a closed page: counted, the other sessions go on
        out["errors"].append(f"{type(exc).__name__} waiting for {stage}: {str(exc).splitlines()[0][:120]}")
    finally:
        await context.close()
    return out


def _overview_complete(run) -> bool:
    return len(run.metrics) >= 5 and "..." not in run.metrics and run.charts >= OVERVIEW_CHARTS


async def _protocol_session(url: str, timeout_ms: int) -> dict:
    """One browserless session: the Overview, priced and with every chart, as the server delivers it."""
    try:
        seconds, run = await open_page(url, _overview_complete, timeout_ms / 1000)
        return {"overview_s": seconds, "errors": ["exception shown"] if run.exceptions else []}
    except Exception as exc:  # a timeout or a closed connection: counted, the other sessions go on
        return {"errors": [f"{type(exc).__name__} waiting for the Overview: {str(exc)[:120]}"]}


async def _gather(tasks: list, limit_s: float) -> list[dict]:
    """Every session's figures; those still running after `limit_s` seconds are stopped and count as errors."""
    tasks = [asyncio.ensure_future(task) for task in tasks]
    done, late = await asyncio.wait(tasks, timeout=max(1.0, limit_s))
    for task in late:
        task.cancel()
    return [t.result() for t in done] + [{"errors": ["stopped at the test's time limit"]} for _ in late]


async def _round(url: str, client: str, sessions: int, days: float, timeout_ms: int, limit_s: float) -> list[dict]:
    if client == "protocol":
        return await _gather([_protocol_session(url, timeout_ms) for _ in range(sessions)], limit_s)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return await _gather([_session(browser, url, days, timeout_ms) for _ in range(sessions)], limit_s)
        finally:
            await browser.close()


def _figures(results: list[dict], key: str) -> str:
    times = sorted(r[key] for r in results if key in r)
    if not times:
        return "none finished"
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return (f"{len(times)}/{len(results)} done, median {statistics.median(times):.1f} s, p95 {p95:.1f} s, "
            f"max {times[-1]:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20, help=f"sessions per round (at most {MAX_SESSIONS})")
    parser.add_argument("--client", choices=("browser", "protocol"), default="browser",
                        help="Chromium sessions (Overview and What-if), or browserless ones (Overview only)")
    parser.add_argument("--days", type=float, default=1.0, help="the What-if's days simulated (the page's N)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds any one wait may take")
    parser.add_argument("--limit", type=float, default=1800.0, help="seconds the whole test may take")
    args = parser.parse_args()
    sessions = max(1, min(args.sessions, MAX_SESSIONS))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "meridian.duckdb"
        store = Store.open(db)
        ensure_sample(store)
        store.close()
        log = Path(tmp) / "server.log"
        with streamlit_server(db, log) as url:
            server = [p for p in psutil.Process().children() if "streamlit" in " ".join(p.cmdline())][0]
            rss = PeakRss(server.pid)
            deadline = time.monotonic() + args.limit
            for name in ("cold", "warm"):
                left = deadline - time.monotonic()
                start = time.perf_counter()
                results = asyncio.run(_round(url, args.client, sessions, args.days, int(args.timeout * 1000), left))
                errors = [e for r in results for e in r["errors"]]
                print(f"{name}: {sessions} {args.client} sessions in {time.perf_counter() - start:.1f} s")
                print(f"  Overview: {_figures(results, 'overview_s')}")
                if args.client == "browser":
                    print(f"  What-if:  {_figures(results, 'whatif_s')}")
                print(f"  errors: {len(errors)} {errors[:3]}")
            print(f"server peak RSS (with its workers): {rss.stop() / 2**20:.0f} MB")
        computed = [line for line in log.read_text(errors="replace").splitlines() if "meridian.shared" in line]
        print(f"heavy runs computed by the server: {len(computed)}")
        for line in computed:
            print("  " + line.strip()[:160])


if __name__ == "__main__":
    main()
