"""The simulator on tiny hand-built fleets with exact expected start times, plus properties."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job, run, starts

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.sim.processes.timer import TIMER
from engine.sim.state.events import ARRIVAL, DEFERRED, FAILURE, FINISH, EventQueue


def test_event_queue_orders_finishes_failures_timers_deferred_then_arrivals():
    q = EventQueue(np.array([1.0, 5.0, 5.0]))
    q.push(5.0, TIMER, -1)
    q.push(5.0, DEFERRED, 3)
    q.push(5.0, FINISH, 7)
    q.push(5.0, FAILURE, 8)
    q.push(5.0, FINISH, 9)
    assert len(q) == 8 and q.peek_time() == 1.0
    assert q.pop_batch() == (1.0, [(ARRIVAL, 0)])
    assert q.pop_batch() == (5.0, [(FINISH, 7), (FINISH, 9), (FAILURE, 8), (TIMER, -1), (DEFERRED, 3),
                                  (ARRIVAL, 1), (ARRIVAL, 2)])
    assert len(q) == 0 and q.peek_time() == float("inf")


def test_event_queue_refuses_unsorted_arrivals():
    with pytest.raises(ValueError, match="non-decreasing"):
        EventQueue(np.array([2.0, 1.0]))


def test_fcfs_head_of_line_blocking():
    jobs = [job(0, 0, 100, 3), job(1, 10, 50, 2), job(2, 20, 10, 1)]
    result = run(jobs, fleet(4))
    assert starts(result) == [0.0, 100.0, 100.0]
    assert list(result.jobs["reason"]) == ["started", "blocked-by-capacity", "waiting-in-queue"]
    assert list(result.jobs["end_s"]) == [100.0, 150.0, 110.0]


def test_gang_job_waits_for_whole_nodes_all_at_once():
    jobs = [job(0, 0, 100, 1), job(1, 1, 10, 8, nodes=2)]
    result = run(jobs, fleet(4, 4))
    assert starts(result) == [0.0, 100.0]
    assert result.jobs["nodes"].tolist() == ["n0", "n0;n1"]
    assert result.jobs["gpus_allocated"].tolist() == [1.0, 8.0]


def test_gpu_type_constraint_and_never_fits():
    jobs = [job(0, 0, 100, 4, gpu_type="B"), job(1, 1, 10, 1, gpu_type="B"), job(2, 2, 10, 1, gpu_type="A"),
            job(3, 3, 10, 1, gpu_type="C"), job(4, 4, 10, 5, gpu_type="A")]
    result = run(jobs, fleet(4, 4, gpu_type=["A", "B"]), backfill="easy")
    # j2 asks for model A, which the blocked head (model B) does not need: it backfills at once.
    assert starts(result) == [0.0, 100.0, 2.0, None, None]
    assert result.jobs["nodes"].tolist()[:3] == ["n1", "n1", "n0"]
    assert result.jobs["reason"].tolist()[3:] == ["never-fits", "never-fits"]


def test_fractional_gpus_share_one_gpu():
    jobs = [job(i, 0, 100, 0.5, gpu_milli=500) for i in range(3)]
    result = run(jobs, fleet(1))
    assert starts(result) == [0.0, 0.0, 100.0]
    assert result.jobs["gpus_allocated"].tolist() == [0.5, 0.5, 0.5]


def test_failed_job_ends_at_its_recorded_duration():
    result = run([job(0, 0, 30, 1, requested=1000, status="failed"), job(1, 5, 10, 1)], fleet(1))
    assert starts(result) == [0.0, 30.0]
    assert result.jobs["failed"].tolist() == [True, False]


def test_pending_jobs_run_for_their_requested_runtime_or_are_skipped():
    rows = [job(0, 0, 10, 1), job(1, 1, 10, 1, requested=40), job(2, 2, 10, 1, requested=float("nan"))]
    for row in rows[1:]:
        row["start_utc"] = row["end_utc"] = None
        row["status"] = "pending"
    result = run(rows, fleet(1))
    assert result.jobs["job_id"].tolist() == ["j0", "j1"]
    assert result.jobs["end_s"].tolist() == [10.0, 50.0]
    assert len(result.notes) == 2


def test_queue_length_admission_rejects_with_a_reason():
    jobs = [job(0, 0, 100, 1), job(1, 1, 10, 1), job(2, 2, 10, 1)]
    result = run(jobs, fleet(1), admission=("queue-length-limit", {"max_queued": 1}))
    assert starts(result) == [0.0, 100.0, None]
    assert result.jobs["reason"].tolist()[2] == "rejected-by-admission"
    assert "rejected-by-admission" in set(result.decisions["decision"])


def test_jobs_stay_in_their_region():
    jobs = [job(0, 0, 100, 4, region="a"), job(1, 1, 10, 4, region="a")]
    nodes = pd.concat([fleet(4, region="a"), fleet(4, region="b").assign(node="m0")])
    assert starts(run(jobs, nodes)) == [0.0, 100.0]
    lost = run([job(0, 0, 10, 1, region="nowhere")], nodes)
    assert lost.jobs["reason"].tolist() == ["never-fits"]


def test_empty_workload_and_empty_fleet():
    empty = pd.DataFrame([job(0, 0, 10, 1)]).iloc[:0]
    assert len(run(empty, fleet(4)).jobs) == 0
    result = run([job(0, 0, 10, 1)], fleet(4).iloc[:0])
    assert result.jobs["reason"].tolist() == ["never-fits"] and result.capacity_gpus == {"r": 0.0}


def test_sjf_orders_the_queue_by_requested_runtime():
    jobs = [job(0, 0, 100, 1), job(1, 1, 50, 1), job(2, 2, 10, 1)]
    assert starts(run(jobs, fleet(1), order="sjf")) == [0.0, 110.0, 100.0]


def test_export_writes_csv_and_parquet(tmp_path):
    result = run([job(0, 0, 10, 1)], fleet(1))
    names = [p.name for p in result.to_csv(tmp_path) + result.to_parquet(tmp_path)]
    assert names == ["jobs.csv", "timeline.csv", "decisions.csv", "segments.csv", "fragmentation.csv",
                     "jobs.parquet", "timeline.parquet", "decisions.parquet", "segments.parquet",
                     "fragmentation.parquet"]
    assert pd.read_parquet(tmp_path / "jobs.parquet")["start_s"].tolist() == [0.0]
    assert pd.read_csv(tmp_path / "decisions.csv")[["job_id", "decision"]].values.tolist() == [["j0", "started"]]


def test_fragmentation_is_sampled_hourly_over_the_window():
    # One 4-GPU node; a 1-GPU job holds a GPU from 0 to 2 h: 3 GPUs idle, which the workload's
    # own typical pod (1 GPU) can use, so nothing is fragmented; after it ends all 4 are idle. A
    # sample at t is the state once the events at t are done (the state on [t, next event)).
    result = run([job(0, 0, 7200, 1), job(1, 10, 10, 1)], fleet(4))
    frag = result.fragmentation
    assert frag["time_s"].tolist() == [0.0, 3600.0, 7200.0]
    assert frag["idle_gpus"].tolist() == [3.0, 3.0, 4.0]
    assert frag["frag_gpus"].tolist() == [0.0, 0.0, 0.0]


def test_fragmentation_counts_gpus_the_typical_pod_cannot_use():
    # Two 8-GPU nodes; every job asks for 8 GPUs except one of 1 GPU, which leaves 7 GPUs on a
    # node that no 8-GPU pod can use: F = 7 x popularity of the 8-GPU shape (3 of 4 pods).
    jobs = [job(0, 0, 7200, 1), job(1, 0, 7200, 8), job(2, 7300, 10, 8), job(3, 7300, 10, 8)]
    frag = run(jobs, fleet(8, 8)).fragmentation
    assert frag["frag_gpus"].tolist()[:2] == [7 * 3 / 4] * 2
    assert frag["idle_gpus"].tolist()[:2] == [7.0, 7.0]


job_strategy = st.tuples(st.integers(0, 50), st.integers(0, 60), st.sampled_from([0.25, 0.5, 1, 2, 3, 4, 6, 8]),
                         st.integers(1, 2), st.sampled_from(["A", "B"]), st.floats(0.5, 3.0))


@settings(max_examples=40, deadline=None)
@given(st.lists(job_strategy, min_size=1, max_size=25), st.sampled_from(["first-fit", "best-fit", "random"]),
       st.sampled_from(["none", "easy"]), st.sampled_from(["fcfs", "sjf", "wfp3"]), st.integers(0, 3))
def test_never_over_allocates_and_is_deterministic(specs, placement, backfill, order, seed):
    jobs = []
    for i, (submit, runtime, gpus, nodes, gpu_type, guess) in enumerate(specs):
        gang = nodes > 1 and gpus >= 1
        jobs.append(job(i, submit, runtime, gpus * (nodes if gang else 1), runtime * guess, nodes=nodes if gang else 1,
                        gpu_type=gpu_type, gpu_milli=int(gpus * 1000) if gpus < 1 else None))
    nodes = fleet(4, 4, 8, gpu_type=["A", "B", "A"])
    first = run(jobs, nodes, order=order, placement=placement, backfill=backfill, seed=seed)
    again = run(jobs, nodes, order=order, placement=placement, backfill=backfill, seed=seed)
    pd.testing.assert_frame_equal(first.jobs, again.jobs)
    pd.testing.assert_frame_equal(first.decisions, again.decisions)
    assert (first.timeline["busy_gpus"] <= 16 + 1e-9).all()
    table = first.jobs
    ran = table[table["started"]]
    assert (ran["start_s"] >= ran["submit_s"]).all()
    # Busy GPUs at every start, from the per-job table, never exceed any GPU model's capacity.
    for model, capacity in (("A", 12), ("B", 4)):
        model_of = {j["job_id"]: j["gpu_type"] for j in jobs}
        mine = ran[ran["job_id"].map(model_of) == model]
        for t in mine["start_s"]:
            held = mine[(mine["start_s"] <= t) & (mine["end_s"] > t)]["gpus_allocated"].sum()
            assert held <= capacity + 1e-9
    never = table[~table["started"]]
    assert set(never["reason"]) <= {"never-fits"}
    assert np.isfinite(ran["end_s"]).all()


def test_gpus_without_a_model_name_count_once():
    nodes = fleet(4, 4).assign(gpu_type=None)
    jobs = [job(0, 0, 10, 8, nodes=2, gpu_type=None), job(1, 1, 10, 8, nodes=2, gpu_type=None)]
    result = run(jobs, nodes)
    assert starts(result) == [0.0, 10.0]
    assert (result.timeline["busy_gpus"] <= 8).all()


def test_a_job_away_from_its_data_waits_for_the_transfer():
    # j0's 450 GB sit in region "far": at 10 Gbit/s they take 450 x 8 / 10 = 360 s to reach "r";
    # j1 has its data in "r" and starts at once; without [data] nothing waits
    rows = [dict(job(0, 0, 100, 1), data_location="far", data_size_gb=450.0),
            dict(job(1, 0, 100, 1), data_location="r", data_size_gb=450.0)]
    nodes = pd.concat([fleet(8), fleet(8, region="far").assign(node="f0")], ignore_index=True)
    spec = {"name": "t", "data": {"transfer_gbps": 10}}
    result = run_scenario(Scenario.from_dict(spec), pd.DataFrame(rows), nodes)
    assert starts(result) == [360.0, 0.0]
    assert "transferring-data" in set(result.decisions["decision"])
    assert starts(run_scenario(Scenario.from_dict({"name": "t"}), pd.DataFrame(rows), nodes)) == [0.0, 0.0]


def test_a_region_outage_evicts_its_work_and_disaster_recovery_routing_moves_it():
    # region r goes down from 100 s to 1000 s. j0 (training, running in r since 0) is evicted at 100;
    # j1 arrives at 200. Home-only: both wait for r to return (start 1000). With overflow routing both
    # move to region "b" at once: j0 restarts there at 100 (no checkpoint: its 100 s are lost), j1 at 200.
    rows = [job(0, 0, 500, 8), job(1, 200, 300, 8)]
    nodes = pd.concat([fleet(8), fleet(8, region="b").assign(node="b0")], ignore_index=True)
    outage = [{"region": "r", "start_utc": "2026-01-01T00:01:40", "end_utc": "2026-01-01T00:16:40"}]
    home = run_scenario(Scenario.from_dict({"name": "t", "outage": outage}), pd.DataFrame(rows), nodes)
    assert home.segments["start_s"].tolist() == [0.0, 1000.0, 1500.0]     # j1 after j0 on r's one node
    assert home.jobs["preemptions"].tolist() == [1, 0]
    dr = run_scenario(Scenario.from_dict({"name": "t", "outage": outage,
                             "policies": {"routing": {"key": "overflow"}}}), pd.DataFrame(rows), nodes)
    assert dr.jobs["region"].tolist() == ["b", "b"]
    assert starts(dr) == [0.0, 600.0]     # j0 ran 100-600 in b; j1 waits for b's only node
    assert dr.segments["region"].tolist() == ["r", "b", "b"]


def test_during_an_outage_a_job_no_other_region_can_hold_waits_for_its_region():
    # r (two 8-GPU nodes) goes down from 100 s to 1000 s; b has one 8-GPU node. j0, a 2-node gang
    # of 16 GPUs from b (which cannot hold it), runs in r from 0 and is evicted at 100; j1 (1 GPU,
    # 50 s) arrives at 150. Under overflow routing j0 must wait for r (restart at 1000), not move
    # to b where it never fits and would block b's queue for good; j1 runs in b at 150.
    rows = [job(0, 0, 500, 16, nodes=2, region="b"), job(1, 150, 50, 1)]
    nodes = pd.concat([fleet(8, 8), fleet(8, region="b").assign(node="b0")], ignore_index=True)
    outage = [{"region": "r", "start_utc": "2026-01-01T00:01:40", "end_utc": "2026-01-01T00:16:40"}]
    result = run_scenario(Scenario.from_dict({"name": "t", "outage": outage,
                                 "policies": {"routing": {"key": "overflow"}}}), pd.DataFrame(rows), nodes)
    assert result.jobs["region"].tolist() == ["r", "b"]
    assert result.segments[["job_id", "region", "start_s", "end_s"]].values.tolist() == [
        ["j0", "r", 0.0, 100.0], ["j1", "b", 150.0, 200.0], ["j0", "r", 1000.0, 1500.0]]


class _NeverRoom:
    """A placement policy that never finds room (a stand-in for any cause of a job stuck in its queue)."""

    def choose(self, view, request, rng):
        return None


def test_timer_passes_stop_once_nothing_runs_and_nothing_else_can_happen():
    # j0 arrives (time 0: the workload starts at the first submit) and never finds room. With a pass
    # every 60 s the run used to go on forever; its arrival's pass and the timer passes at 60, 120, ...
    # each find nothing running and no other event to come: after IDLE_TIMERS + 1 of them (the last
    # at 100 x 60 s) timers stop, and j0 stays waiting.
    from engine.policies import registry
    from engine.policies.bundle import Policies
    from engine.sim.processes.timer import IDLE_TIMERS
    from engine.sim.simulator import simulate
    from engine.sim.state.workload import build_workload

    policies = Policies(registry.make("order", "fcfs"), _NeverRoom(), registry.make("backfill", "none"),
                        registry.make("admission", "accept-all"))
    result = simulate(build_workload(pd.DataFrame([job(0, 10, 50, 4)]), fleet(8)), policies, timer_s=60.0)
    assert np.isnan(result.jobs.at[0, "start_s"]) and result.jobs.at[0, "reason"] == "blocked-by-capacity"
    assert result.timeline["time_s"].tolist() == [60.0 * k for k in range(IDLE_TIMERS + 1)]
