"""Live follow-the-sun (engine.sim.processes.handoff) on a hand-built two-region fleet: at a working-day
start exactly the borrowed work its own queued work needs moves, each move's cost is checkpoint +
transfer + restart, the minimum run holds, residency holds through hand-offs, and without [handoff]
a run is the one it was before."""
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import job

from engine.analysis.runs.sim_metrics import kpis
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.sim.processes import table
from engine.sim.processes.base import WorldProcess
from engine.world.facts import World
from engine.world.residency import allowed_mask

# eu works 09:00-18:00 UTC, ap 09:00-18:00 Tokyo = 00:00-09:00 UTC, both Mon-Fri, no holidays (no country)
REGIONS = pd.DataFrame({"region": ["eu", "ap"], "timezone": ["UTC", "Asia/Tokyo"], "country": ["", ""],
                        "jurisdiction": ["EU", "JP"]})
MONDAY = pd.Timestamp("2026-01-05")  # the sim_helpers' T0 is 2026-01-01 (Thursday)
H = 3600.0
HANDOFF = {"enabled": True, "checkpoint_min": 10, "checkpoint_gb_per_gpu": 16, "transfer_gbps": 10,
           "restart_min": 5, "min_run_h": 4, "min_left_h": 2}


def at(hours: float) -> float:
    """Seconds from sim_helpers.T0 to Monday 2026-01-05 + `hours` UTC."""
    return (MONDAY - pd.Timestamp("2026-01-01")).total_seconds() + hours * H


def fleet(**gpus_by_region):
    return pd.DataFrame([dict(region=r, cluster="c", node=f"{r}{i}", gpu_type="A", gpus=g, cpus=64,
                              memory_gib=512, rack="k0", tier="reserved")
                         for r, sizes in gpus_by_region.items() for i, g in enumerate(sizes)])


def jobs() -> pd.DataFrame:
    """Monday 02:00 UTC (ap at work, eu asleep): a0 fills ap until 09:00; a1, a2 and a3 (ap's, flexible)
    cannot start at home and follow-the-sun lends them eu's 8 GPUs. At 08:30 eu's own e0 (6 GPUs,
    development: it stays home) queues behind them. At 09:00 eu's day begins and ap's ends. Recorded
    as run from their submits (the data's observed end, the window's, is a1's end: Tuesday 08:00:01)."""
    return _recorded_from_submit(pd.DataFrame([
        job(0, at(2), 7 * H, 8, region="ap"),                                          # ends 09:00
        job(1, at(2) + 1, 30 * H, 4, region="ap"),                                     # borrowed
        job(2, at(2) + 2, 30 * H, 2, region="ap", workload_class="batch"),              # borrowed
        job(3, at(2) + 3, 10 * H, 2, 8 * H, region="ap"),                               # 1 h of request left at 09:00
        job(4, at(8.5), 5 * H, 6, region="eu", workload_class="development")]))         # eu's own work


def _recorded_from_submit(frame: pd.DataFrame) -> pd.DataFrame:
    run = frame["end_utc"] - frame["start_utc"]
    return frame.assign(start_utc=frame["submit_utc"], end_utc=frame["submit_utc"] + run)


def simulate(handoff: dict | None, frame: pd.DataFrame | None = None, nodes=None):
    spec = {"name": "t", "policies": {"routing": "follow-the-sun"}}
    if handoff is not None:
        spec["handoff"] = handoff
    return run_scenario(Scenario.from_dict(spec), jobs() if frame is None else frame,
                        fleet(eu=[8], ap=[8]) if nodes is None else nodes, World(REGIONS))


def test_a_working_day_start_moves_exactly_the_borrowed_work_its_own_queue_needs():
    result = simulate(HANDOFF)
    out = result.jobs.set_index("job_id")
    assert out.loc[["j1", "j2", "j3"], "region"].tolist() == ["ap", "ap", "eu"]  # a3 stays: too little left
    moves = result.handoffs
    # e0 asks 6 GPUs, eu has 0 free: shortfall 6; largest first: a1 (4), then a2 (2) covers it
    assert moves["job_id"].tolist() == ["j1", "j2"]
    assert moves["from_region"].tolist() == ["eu", "eu"] and moves["to_region"].tolist() == ["ap", "ap"]
    t9 = 7 * H  # 09:00, in seconds from the first submit (02:00)
    assert moves["time_s"].tolist() == [t9, t9] and set(moves["reason"]) == {"working-day-start"}
    # transfer: 16 GB x GPUs x 8 / 10 Gbit/s: a1 4 GPUs 51.2 s, a2 2 GPUs 25.6 s
    assert moves["transfer_s"].tolist() == pytest.approx([51.2, 25.6])
    # lost: 600 s checkpoint + transfer + 300 s restart, x GPUs: a1 951.2 x 4, a2 925.6 x 2 GPU-seconds
    assert moves["lost_s"].tolist() == pytest.approx([951.2, 925.6])
    assert moves["lost_gpu_hours"].tolist() == pytest.approx([951.2 * 4 / H, 925.6 * 2 / H])
    # moved: the work left at the checkpoint's start: 30 h - (7 h - 1 s) for a1, 30 h - (7 h - 2 s) for a2
    assert moves["moved_gpu_hours"].tolist() == pytest.approx([(23 * H + 1) * 4 / H, (23 * H + 2) * 2 / H])
    # e0 starts when the checkpoints are written (09:10) in the room a1 and a2 left
    assert out.loc["j4", "start_s"] == pytest.approx(t9 + 600)
    # a1 ends 951.2 s later than its 30 h from its start at 02:00:01
    assert out.loc["j1", "end_s"] == pytest.approx(1 + 30 * H + 951.2)
    assert out.loc["j2", "end_s"] == pytest.approx(2 + 30 * H + 925.6)
    assert out["handoffs"].tolist() == [0, 1, 1, 0, 0]
    assert out["handoff_lost_gpu_hours"].tolist() == pytest.approx([0, 951.2 * 4 / H, 925.6 * 2 / H, 0, 0])
    pieces = result.segments[result.segments["outcome"] == "handed-off"]
    assert pieces["job_id"].tolist() == ["j1", "j2"] and pieces["end_s"].tolist() == [t9 + 600] * 2
    values = kpis(result)
    assert values["handoff_moves"] == 2 and values["handoff_jobs"] == 2
    assert values["handoff_lost_gpu_hours"] == pytest.approx((951.2 * 4 + 925.6 * 2) / H)


def test_the_job_story_charges_the_transit_to_the_hand_off():
    from engine.analysis.runs.job_story import StoryContext, job_story
    from engine.sim.state.workload import build_workload

    scenario = Scenario.from_dict({"name": "t", "policies": {"routing": "follow-the-sun"}, "handoff": HANDOFF})
    result = simulate(HANDOFF)
    context = StoryContext.of(scenario, build_workload(*scenario.apply(jobs(), fleet(eu=[8], ap=[8]))))
    story = job_story(result, 1, context)  # a1: leaves eu at 09:10, queues in ap 51.2 s later, starts at once
    assert (story.timeline["event"] == "handed-off").sum() == 1
    waits = dict(zip(story.reasons["reason"], story.reasons["seconds"]))
    assert waits == {"handed-off": pytest.approx(51.2)}


def test_the_home_work_waiting_at_a_day_start_waits_less():
    from engine.analysis.runs.handoff import day_start_wait

    # e0 (eu's, 6 GPUs) waits at eu's 09:00 start. Without the hand-off it starts when a3 (12:00:03) and
    # a1 (Tuesday 08:00:01) have ended: 23.5 h + 1 s after its 08:30 submit; with it, at 09:10: 40 min
    assert day_start_wait(simulate(None), World(REGIONS)) == (1, pytest.approx(23.5 * H + 1))
    assert day_start_wait(simulate(HANDOFF), World(REGIONS)) == (1, pytest.approx(40 * 60))


def test_a_smaller_shortfall_moves_only_what_it_needs():
    frame = jobs()
    frame.loc[4, "gpus"] = 4  # e0 asks 4: a1 alone covers it
    assert simulate(HANDOFF, frame).handoffs["job_id"].tolist() == ["j1"]


def test_the_minimum_run_holds():
    # every borrowed job has run 7 h at 09:00: under a minimum of 8 h none moves, that day or later
    result = simulate({**HANDOFF, "min_run_h": 8})
    assert result.handoffs.empty and result.jobs["handoffs"].sum() == 0
    assert (result.jobs["region"] == ["ap", "eu", "eu", "eu", "eu"]).all()


def test_no_hand_off_without_the_section_and_the_run_is_the_one_before():
    before, same = simulate(None), simulate({**HANDOFF, "enabled": False})
    assert before.handoffs is None and "handoffs" not in before.jobs.columns
    pd.testing.assert_frame_equal(before.jobs, same.jobs)
    pd.testing.assert_frame_equal(before.segments, same.segments)
    assert not set(kpis(before)) & {"handoff_moves", "handoff_lost_gpu_hours"}
    assert (before.jobs["region"] == ["ap", "eu", "eu", "eu", "eu"]).all()


def test_bad_handoff_input_names_the_table_and_key():
    with pytest.raises(ScenarioError, match=r"\[handoff\] checkpoint_min must be"):
        Scenario.from_dict({"handoff": {"enabled": True, "checkpoint_min": -1}})
    with pytest.raises(ScenarioError, match=r"unknown \[handoff\] key minimum_run"):
        Scenario.from_dict({"handoff": {"minimum_run": 1}})
    with pytest.raises(ScenarioError, match=r"\[handoff\] hands back work a routing policy sent away from home; "
                                             r"routing 'home-only' keeps every job home"):
        Scenario.from_dict({"handoff": {"enabled": True}})


TAGS = st.sampled_from([None, "EU", "JP", "regions:eu,ap"])
extra_job = st.tuples(st.floats(0, 30), st.sampled_from([1, 3, 8, 30]), st.sampled_from([1, 2, 4]),
                      st.sampled_from(["eu", "ap"]), TAGS, st.sampled_from(["training", "batch", "development"]))


@settings(max_examples=30, deadline=None)
@given(st.lists(TAGS, min_size=5, max_size=5), st.lists(extra_job, max_size=6), st.sampled_from([0.5, 1.0, 3.0, 8.0]))
def test_residency_and_the_minimum_run_hold_through_hand_offs(base_tags, extra, min_run_h):
    # the hand-built morning (which hands a1 and a2 over when their residency lets them go to ap),
    # with residency tags drawn for its jobs and more jobs of both regions around it
    more = [job(5 + k, at(hour), length * H, gpus, region=home, workload_class=kind)
            for k, (hour, length, gpus, home, _, kind) in enumerate(extra)]
    frame = pd.concat([jobs(), pd.DataFrame(more)], ignore_index=True)
    frame["residency"] = base_tags + [tag for *_, tag, _ in extra]
    frame = frame.sort_values("submit_utc", kind="stable")
    result = simulate({**HANDOFF, "min_run_h": min_run_h, "min_left_h": 0}, frame)
    out = result.jobs
    tags = dict(zip(frame["job_id"], frame["residency"]))
    allowed = allowed_mask(out.assign(residency=out["job_id"].map(tags)), REGIONS)
    names = list(REGIONS["region"])
    assert all(allowed[k, names.index(r)] for k, r in enumerate(out["region"]))
    for move in result.handoffs.itertuples():
        assert allowed[move.row, names.index(move.to_region)] and allowed[move.row, names.index(move.from_region)]
    pieces = result.segments[result.segments["outcome"] == "handed-off"]
    assert ((pieces["end_s"] - pieces["start_s"]) >= min_run_h * H + 600 - 1e-6).all()
    assert len(pieces) == len(result.handoffs) == int(out["handoffs"].sum())


class Ticker(WorldProcess):
    """A toy clock that ticks every 1.1 h (never at a day start) while the run has any other event
    left or a job runs (as the reclaim clock and the spot reclaimer decide whether to go on)."""

    kinds = (60,)  # an event kind no engine process uses

    def __init__(self, run) -> None:
        self.run, self.ticks = run, 0
        run.events.push(1.1 * H, 60, 0)

    @classmethod
    def attach(cls, run):
        return cls(run)

    def on_event(self, kind, payload, now):
        self.ticks += 1
        events = self.run.events
        if len(events) > events.background_pending or self.run.pods:
            events.push(now + 1.1 * H, 60, 0)
        return []


def test_the_day_starts_keep_no_other_clock_going():
    # were the day starts ordinary events, the ticker and the hand-off would keep each other going
    # until the run overran its work budget (50 event batches a job); they are background events
    table.register(Ticker)
    try:
        result = simulate(HANDOFF)
    finally:
        table.unregister(Ticker)
    assert result.handoffs["job_id"].tolist() == ["j1", "j2"]


def test_a_stage_handed_over_mid_run_keeps_its_chain_link():
    # j5 (eu's, 8 GPUs, 1 h) is the stage after a1 (j1), with a 450 GB checkpoint. a1 is handed off eu -> ap at
    # 09:10 Monday: j5 is not released by the hand-off (the stage did not end), it waits for a1's end in ap
    # (1 + 30 h + 951.2 s = 108952.2 s), is routed then (eu, off-hours at 08:16 UTC) and receives the
    # checkpoint from ap, where a1 ended: 450 GB x 8 / 10 Gbit/s = 360 s, so it starts at 109312.2 s
    succ = pd.DataFrame([job(5, at(3), H, 8, region="eu")])
    frame = pd.concat([jobs(), _recorded_from_submit(succ)], ignore_index=True)
    frame = frame.assign(depends_on=[None] * 5 + ["j1"], checkpoint_gb=[None] * 5 + [450.0])
    spec = {"name": "t", "policies": {"routing": "follow-the-sun"}, "handoff": HANDOFF, "data": {"transfer_gbps": 10}}
    result = run_scenario(Scenario.from_dict(spec), frame, fleet(eu=[8], ap=[8]), World(REGIONS))
    assert result.handoffs["job_id"].tolist() == ["j1", "j2"]
    out = result.jobs.set_index("job_id")
    assert out.loc["j1", "end_s"] == pytest.approx(1 + 30 * H + 951.2)
    chain = result.chains.iloc[0]
    assert [chain["predecessor_job_id"], chain["from_region"], chain["to_region"]] == ["j1", "ap", "eu"]
    assert chain["predecessor_end_s"] == pytest.approx(1 + 30 * H + 951.2)
    assert chain["transfer_s"] == pytest.approx(360.0)
    assert out.loc["j5", ["region", "reason"]].tolist() == ["eu", "waiting-for-predecessor"]
    assert out.loc["j5", "start_s"] == pytest.approx(1 + 30 * H + 951.2 + 360.0)
