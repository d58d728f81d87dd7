"""Live follow-the-sun's re-checks (engine.sim.processes.handoff, [handoff] recheck_h): on the hand-built
two-region morning of test_handoff, eu's own work that queues after its 09:00 start is served by a look
during the day's first hours, and no look falls past them."""
import pandas as pd
import pytest
from test_handoff import HANDOFF, H, at, jobs, simulate

from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario


def late(hour: float):
    """test_handoff's morning with eu's own e0 (6 GPUs) submitted at `hour` UTC on Monday instead of 08:30."""
    frame = jobs()
    for column in ("submit_utc", "start_utc", "end_utc"):  # recorded as run from its submit
        frame.loc[4, column] += pd.Timedelta(hours=hour - 8.5)
    return frame


def test_without_a_recheck_work_queued_after_the_day_start_moves_nothing():
    # at 09:00 nothing of eu's waits: no shortfall, no move; the borrowed work ends on Tuesday
    result = simulate(HANDOFF, late(10.5))
    assert result.handoffs.empty
    # e0 (6 GPUs) starts when a1 (4 GPUs, Tuesday 08:00:01 UTC) has ended: 2 (a3 ended 12:00:03) + 4 free
    assert result.jobs.set_index("job_id").loc["j4", "start_s"] == pytest.approx(30 * H + 1)


def test_a_recheck_in_the_first_hours_moves_exactly_the_borrowed_work_then_needed():
    result = simulate({**HANDOFF, "recheck_h": 4, "recheck_every_min": 60}, late(10.5))
    moves = result.handoffs
    # looks at 10:00 (e0 not submitted yet) and 11:00: shortfall 6 GPUs, a1 (4) and a2 (2) move to ap
    # (20:00 in Tokyo, its a0 ended at 09:00); 11:00 UTC is 9 h after the first submit (02:00)
    assert moves["job_id"].tolist() == ["j1", "j2"] and moves["to_region"].tolist() == ["ap", "ap"]
    assert moves["time_s"].tolist() == [9 * H, 9 * H]
    assert set(moves["reason"]) == {"working-day-recheck"}
    assert result.jobs.set_index("job_id").loc["j4", "start_s"] == pytest.approx(9 * H + 600)


def test_no_look_falls_past_the_recheck_window():
    # looks at 10, 11, 12 and 13:00 for recheck_h = 4; e0 queues at 13:30: nothing moves that day
    assert simulate({**HANDOFF, "recheck_h": 4}, late(13.5)).handoffs.empty
    result = simulate({**HANDOFF, "recheck_h": 5}, late(13.5))  # a look at 14:00, 12 h after the first submit
    # a3 (2 GPUs) ended at 12:00:03: the shortfall is 6 - 2 free = 4, which a1 (4 GPUs) alone covers
    assert result.handoffs["job_id"].tolist() == ["j1"] and result.handoffs["time_s"].tolist() == [12 * H]
    assert result.jobs.set_index("job_id").loc["j4", "start_s"] == pytest.approx(at(14) - at(2) + 600)


@pytest.mark.parametrize("key, value, message", [
    ("recheck_h", 25, r"\[handoff\] recheck_h must be"), ("recheck_every_min", 1, r"\[handoff\] recheck_every_min must be")])
def test_bad_recheck_input_names_the_table_and_key(key, value, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_dict({"handoff": {"enabled": True, key: value}, "policies": {"routing": "follow-the-sun"}},
                           source="s.toml")
