"""Many sessions on one real `streamlit run` server, through Streamlit's own protocol (no browser: see
tests/protocol_session.py): sessions opening the Overview at once each get the whole page, priced, with
every chart and the same figures, and the recorded history behind its dollars is replayed once for all
of them. Speed is measured by benchmarks/load_test.py, not asserted here."""
import asyncio

from conftest import streamlit_server
from protocol_session import open_page

SESSIONS = 4
CHARTS = 6


def _complete(run) -> bool:
    return len(run.metrics) >= 5 and "..." not in run.metrics and run.charts >= CHARTS


async def _open_all(url: str) -> list:
    return await asyncio.gather(*[open_page(url, _complete, timeout_s=300) for _ in range(SESSIONS)])


def test_sessions_opening_the_overview_at_once_share_one_replay(sample_db, tmp_path):
    log = tmp_path / "server.log"
    with streamlit_server(sample_db, log) as url:
        first = asyncio.run(_open_all(url))
        again = asyncio.run(_open_all(url))
    runs = [run for _, run in first + again]
    assert all(run.exceptions == 0 for run in runs)
    assert all(run.charts == CHARTS for run in runs)
    assert len({tuple(run.metrics) for run in runs}) == 1
    assert runs[0].metrics[2].startswith("$")          # the dollars tile is priced
    computed = [line for line in log.read_text(errors="replace").splitlines() if "meridian.shared computed" in line]
    assert len(computed) == 1 and "'whatif'" in computed[0]   # the recorded replay, for all eight
