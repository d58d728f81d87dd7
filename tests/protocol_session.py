"""A Streamlit session without a browser, for benchmarks/load_test.py and tests/test_protocol_sessions.py: it speaks the server's own protocol
(a websocket at /_stcore/stream carrying the BackMsg and ForwardMsg protobufs that ship with Streamlit)
the way the browser does, so K sessions cost the load test almost nothing and the seconds measured are
the server's: from connecting to the page's last element delivered.

What it does as the browser would: asks for the default page (the Overview), answers the server's
auto-reruns of a fragment (the Overview polls its pricing every two seconds) at the interval given, and
counts what a full script run delivered: the metric tiles' values and the plotly charts.
What it does not do: draw anything. A browser's own time to draw a page is measured apart (the browser
round of load_test.py, or one Chromium session).
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

FRAGMENT_DONE = ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY


@dataclass
class PageRun:
    """What the latest full script run delivered."""

    metrics: list[str] = field(default_factory=list)
    charts: int = 0
    exceptions: int = 0


async def _auto_rerun(ws, page_hash: str, fragment_id: str, interval_s: float) -> None:
    """Ask for the fragment's rerun every `interval_s`, as the browser's timer does."""
    while True:
        await asyncio.sleep(interval_s)
        back = BackMsg()
        back.rerun_script.page_script_hash = page_hash
        back.rerun_script.fragment_id = fragment_id
        back.rerun_script.is_auto_rerun = True
        await ws.send(back.SerializeToString())


async def open_page(url: str, done, timeout_s: float) -> tuple[float, PageRun]:
    """Seconds from connecting to the end of the first full script run whose delivery satisfies
    `done(PageRun)`, and that run. Raises TimeoutError after `timeout_s`."""
    start = time.perf_counter()
    stream = url.replace("http://", "ws://", 1) + "/_stcore/stream"
    timers: dict[str, asyncio.Task] = {}
    async with websockets.connect(stream, subprotocols=["streamlit"], max_size=2**28) as ws:
        back = BackMsg()
        back.rerun_script.query_string = ""
        await ws.send(back.SerializeToString())
        run, page_hash = PageRun(), ""
        try:
            async with asyncio.timeout(timeout_s):
                async for raw in ws:
                    msg = ForwardMsg()
                    msg.ParseFromString(raw)
                    kind = msg.WhichOneof("type")
                    if kind == "new_session":
                        run, page_hash = PageRun(), msg.new_session.page_script_hash
                    elif kind == "auto_rerun" and msg.auto_rerun.fragment_id not in timers:
                        timers[msg.auto_rerun.fragment_id] = asyncio.create_task(_auto_rerun(
                            ws, page_hash, msg.auto_rerun.fragment_id, msg.auto_rerun.interval))
                    elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                        element = msg.delta.new_element
                        what = element.WhichOneof("type")
                        if what == "metric":
                            run.metrics.append(element.metric.body)
                        elif what == "plotly_chart":
                            run.charts += 1
                        elif what == "exception":
                            run.exceptions += 1
                    elif kind == "script_finished" and msg.script_finished != FRAGMENT_DONE and done(run):
                        return time.perf_counter() - start, run
        finally:
            for task in timers.values():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    raise ConnectionError("the server closed the session before the page was complete")
