"""Staged workflows as job chains (issue 26 item 3) on hand-built fleets: a stage starting exactly at its
predecessor's end plus the checkpoint's transfer, computed by hand; a chain across regions with its egress;
a broken chain; the depends_on checks (unknown ids, cycles, with lines); [[chain]] building; determinism."""
from __future__ import annotations

import pandas as pd
import pytest
from sim_helpers import fleet, job, starts

from engine.analysis.runs.catalogue import keys
from engine.analysis.runs.chain_kpis import KPI_KEYS, chain_kpis
from engine.analysis.runs.world_kpis import world_report
from engine.core.chain_links import ChainError, predecessors
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario

NODES = pd.concat([fleet(8), fleet(8, region="far").assign(node="f0")], ignore_index=True)
REGIONS = pd.DataFrame({"region": ["r", "far"], "timezone": ["UTC", "UTC"], "country": ["US", "IE"],
                        "jurisdiction": ["US", "US"], "egress_usd_per_gb": [0.02, 0.05]})


def scenario(gbps: float = 10.0, **extra) -> Scenario:
    return Scenario.from_dict({"name": "t", "data": {"transfer_gbps": gbps}, **extra})


def chained(rows: list[dict], depends: list, gb: list) -> pd.DataFrame:
    return pd.DataFrame(rows).assign(depends_on=depends, checkpoint_gb=gb)


def three_stages() -> pd.DataFrame:
    """j0 in r (0-1000 s), j1 in far (500 s of work, submitted at 10 s), j2 in r (300 s, at 20 s); each
    stage waits for the one before and receives its 450 GB checkpoint."""
    return chained([job(0, 0, 1000, 8), job(1, 10, 500, 8, region="far"), job(2, 20, 300, 8)],
                   [None, "j0", "j1"], [None, 450.0, 450.0])


def test_a_stage_starts_at_its_predecessors_end_plus_the_transfer_across_regions():
    # 450 GB x 8 / 10 Gbit/s = 360 s per hand-over between r and far. j1: 1000 + 360 = 1360, runs to 1860;
    # j2: 1860 + 360 = 2220, runs to 2520; both nodes idle, so each starts the moment it is handed over
    result = run_scenario(scenario(), three_stages(), NODES)
    assert starts(result) == [0.0, 1360.0, 2220.0]
    assert result.jobs["reason"].tolist() == ["started", "waiting-for-predecessor", "waiting-for-predecessor"]
    table = result.chains
    assert table[["job_id", "chain", "stage", "from_region", "to_region"]].values.tolist() == [
        ["j1", "j0", 2, "r", "far"], ["j2", "j0", 3, "far", "r"]]
    assert table[["predecessor_end_s", "transfer_s", "ready_s", "held_s"]].values.tolist() == [
        [1000.0, 360.0, 1360.0, 1350.0], [1860.0, 360.0, 2220.0, 2200.0]]
    logged = result.decisions[result.decisions["decision"] == "waiting-for-predecessor"]
    assert logged[["time_s", "job_id"]].values.tolist() == [[10.0, "j1"], [20.0, "j2"]]
    kpis = chain_kpis(result)
    # one chain, complete: 2520 - 0 s; waited for predecessors (1000 - 10) + (1860 - 20) = 2830 s;
    # two transfers of 360 s; 900 GB moved
    assert kpis == {"chains": 1.0, "chains_completed": 1.0, "chain_makespan_mean_s": 2520.0,
                    "chain_predecessor_wait_hours": pytest.approx(2830 / 3600),
                    "chain_handover_hours": pytest.approx(720 / 3600), "chain_handover_gb": 900.0}
    assert set(kpis) == set(KPI_KEYS) == keys("workflow")


def test_the_hand_over_egress_is_in_cost_usd():
    # 450 GB leave r at $0.02/GB ($9) and 450 GB leave far at $0.05/GB ($22.50)
    result = run_scenario(scenario(), three_stages(), NODES)
    report = world_report(result, NODES, pd.DataFrame(), REGIONS, pd.DataFrame())
    assert report.kpis["egress_usd"] == pytest.approx(9.0 + 22.5)


def test_a_stage_in_the_same_region_moves_nothing_and_a_late_submit_is_not_held():
    # j1 in r after j0 (ends 1000): the checkpoint stays, j1 starts at 1000; j2 (submitted at 5000, long after
    # j1 ends at 1500) arrives at its submit as any job
    jobs = chained([job(0, 0, 1000, 8), job(1, 10, 500, 8), job(2, 5000, 300, 8, region="far")],
                   [None, "j0", "j1"], [None, 450.0, 450.0])
    result = run_scenario(scenario(), jobs, NODES)
    assert starts(result) == [0.0, 1000.0, 5000.0]
    assert result.chains["transfer_s"].tolist() == [0.0, 360.0]
    assert result.jobs["reason"].tolist() == ["started", "waiting-for-predecessor", "started"]


def test_without_a_bandwidth_the_hand_over_is_instant():
    result = run_scenario(scenario(gbps=0.0), three_stages(), NODES)
    assert starts(result) == [0.0, 1000.0, 1500.0]


def test_a_failed_stage_still_hands_over_and_a_stage_that_never_runs_breaks_the_chain():
    # j0 fails at 1000: j1 starts from its last checkpoint at 1360. j3 asks for 16 GPUs (no node has them):
    # never fits, so j4 waits for it to the end and never runs
    rows = [job(0, 0, 1000, 8, status="failed"), job(1, 10, 500, 8, region="far"), job(3, 20, 100, 16),
            job(4, 30, 100, 8)]
    result = run_scenario(scenario(), chained(rows, [None, "j0", None, "j3"], [None, 450.0, None, 1.0]), NODES)
    assert starts(result) == [0.0, 1360.0, None, None]
    assert result.jobs["reason"].tolist()[2:] == ["never-fits", "waiting-for-predecessor"]
    kpis = chain_kpis(result)
    assert kpis["chains"] == 2.0 and kpis["chains_completed"] == 1.0
    assert kpis["chain_makespan_mean_s"] == 1860.0  # the complete chain: 0 to 1360 + 500


def test_a_stage_behind_other_work_queues_after_the_hand_over():
    # far's node is busy with j9 until 2000: j1, handed over at 1360, waits in far's queue until 2000
    rows = [job(0, 0, 1000, 8), job(9, 5, 1995, 8, region="far"), job(1, 10, 500, 8, region="far")]
    result = run_scenario(scenario(), chained(rows, [None, None, "j0"], [None, None, 450.0]), NODES)
    assert starts(result) == [0.0, 5.0, 2000.0]
    assert result.chains["ready_s"].tolist() == [1360.0]


def test_depends_on_names_unknown_repeated_and_cyclic_jobs_with_their_lines():
    ids = pd.Series(["a", "b", "c", "d", "e"]).to_numpy(object)
    lines = [2, 3, 4, 5, 6]
    with pytest.raises(ChainError, match=r"line 3: job 'b' depends on 'x', which is not in the jobs table"):
        predecessors(ids, pd.Series([None, "x", None, None, None]), lines)
    with pytest.raises(ChainError, match=r"lines 2, 4, 5: jobs 'a' -> 'd' -> 'c' -> 'a' \(each waits for the next\) "
                                         r"form a cycle"):
        predecessors(ids, pd.Series(["d", None, "a", "c", None]), lines)
    with pytest.raises(ChainError, match=r"line 6: job 'e' depends on itself"):
        predecessors(ids, pd.Series([None, None, None, None, "e"]), lines)
    with pytest.raises(ChainError, match=r"an id that more than one job has"):
        predecessors(pd.Series(["a", "a", "b"]).to_numpy(object), pd.Series([None, None, "a"]), [2, 3, 4])
    assert predecessors(ids, pd.Series([None, "a", "b", None, "x"]), lines, missing_ok=True).tolist() == [-1, 0, 1, -1, -1]


def test_a_chain_scenario_builds_stages_from_the_jobs_in_submit_order():
    # stage 1 in r, stage 2 in far: chain 1 = j0 -> j2 (the first far job submitted at or after j0's 0 s),
    # chain 2 = j1 -> j3 (j2 is taken)
    rows = [job(0, 0, 100, 8), job(1, 50, 100, 8), job(2, 60, 100, 8, region="far"), job(3, 70, 100, 8, region="far")]
    result = run_scenario(scenario(chain=[{"stages": ["r", "far"], "count": 5, "checkpoint_gb": 125}]),
                          pd.DataFrame(rows), NODES)
    assert result.chains[["job_id", "predecessor_job_id", "checkpoint_gb"]].values.tolist() == [
        ["j2", "j0", 125.0], ["j3", "j1", 125.0]]
    # 125 GB x 8 / 10 Gbit/s = 100 s. j1 waits for j0 on r's node: 100 to 200. j2: j0's end 100 + 100 = 200;
    # j3: j1's end 200 + 100 = 300
    assert starts(result) == [0.0, 100.0, 200.0, 300.0]


def test_chain_scenario_errors_name_the_entry_and_the_problem():
    with pytest.raises(ScenarioError, match=r"\[\[chain\]\] #1: stages must be a list of 2 or more region names"):
        scenario(chain=[{"stages": ["r"]}])
    with pytest.raises(ScenarioError, match=r"\[\[chain\]\] #1: workload_class 'gpu' is unknown"):
        scenario(chain=[{"stages": ["r", "far"], "workload_class": "gpu"}])
    with pytest.raises(ScenarioError, match=r"\[\[chain\]\] #1: unknown \[\[chain\]\] key size"):
        scenario(chain=[{"stages": ["r", "far"], "size": 3}])
    with pytest.raises(ScenarioError, match=r"\[\[chain\]\] #1 builds no chain: stage 2 \(far, class inference\)"):
        run_scenario(scenario(chain=[{"stages": ["r", "far"], "workload_class": ["training", "inference"]}]),
                     pd.DataFrame([job(0, 0, 100, 8), job(2, 60, 100, 8, region="far")]), NODES)


def test_same_scenario_same_chains():
    rows = [job(i, 10 * i, 100 + 7 * i, 4, region="r" if i % 2 else "far") for i in range(12)]
    spec = scenario(chain=[{"stages": ["r", "far", "r"], "count": 3, "checkpoint_gb": 40}])
    one, two = (run_scenario(spec, pd.DataFrame(rows), NODES) for _ in range(2))
    pd.testing.assert_frame_equal(one.chains, two.chains)
    pd.testing.assert_frame_equal(one.jobs, two.jobs)
    assert len(one.chains) == 6


def test_chains_build_on_a_table_that_already_has_empty_chain_columns():
    # a stored dataset has depends_on and checkpoint_gb (NULL), and a sample's rows no source line: the
    # [[chain]] fills them in
    rows = pd.DataFrame([job(0, 0, 100, 8), job(2, 60, 100, 8, region="far")]).assign(
        depends_on=pd.array([None, None], dtype="str"), checkpoint_gb=float("nan"), source_line=float("nan"))
    result = run_scenario(scenario(chain=[{"stages": ["r", "far"], "count": 1}]), rows, NODES)
    assert result.chains["predecessor_job_id"].tolist() == ["j0"]


def test_a_chain_scenario_applied_to_no_jobs_gives_its_fleet():
    # the GPUs-needed search applies a scenario to no jobs to read its fleet: no chain to build, no error
    spec = scenario(chain=[{"stages": ["r", "far"], "count": 1}])
    jobs = pd.DataFrame([job(0, 0, 100, 8), job(2, 60, 100, 8, region="far")])
    applied, fleet = spec.apply(jobs.iloc[:0], NODES)
    assert applied.empty and len(fleet) == len(NODES)


def routed_away() -> pd.DataFrame:
    """j0 in r (0-1000 s); j1, its successor, is far's (submitted at 10 s, 500 s of work) but j9 holds far's 8
    GPUs until 5000 s, so the overflow router sends j1 to r when j0 hands over."""
    return chained([job(0, 0, 1000, 8), job(1, 10, 500, 8, region="far"), job(9, 0, 5000, 8, region="far")],
                   [None, "j0", None], [None, 450.0, None])


def test_a_stage_routed_away_gets_its_checkpoint_where_it_runs():
    # j1 is routed at j0's end (1000 s) to r, where j0 ran: the checkpoint does not move (0 s, $0) and j1 starts
    # at 1000. (Sent to far, its home, it would have waited 450 GB x 8 / 10 Gbit/s = 360 s and cost 450 x $0.02.)
    result = run_scenario(scenario(policies={"routing": "overflow"}), routed_away(), NODES)
    out = result.jobs.set_index("job_id")
    assert out.loc[["j0", "j1", "j9"], "start_s"].tolist() == [0.0, 1000.0, 0.0]
    assert out.loc[["j0", "j1", "j9"], "region"].tolist() == ["r", "r", "far"]
    table = result.chains
    assert table[["from_region", "to_region", "transfer_s", "ready_s"]].values.tolist() == [["r", "r", 0.0, 1000.0]]
    report = world_report(result, NODES, pd.DataFrame(), REGIONS, pd.DataFrame())
    assert report.kpis["egress_usd"] == 0.0


def test_a_stage_routed_away_from_its_predecessors_region_waits_for_the_transfer_there():
    # the same, but r is taken too (j8 until 5000 s) and a third region, mid, has 16 GPUs free: j1 is sent to mid
    # at 1000 s; the checkpoint crosses r -> mid in 360 s (j1 starts at 1360) and its egress is r's, 450 x $0.02
    nodes = pd.concat([NODES, fleet(8, 8, region="mid").assign(node=["m0", "m1"])], ignore_index=True)
    regions = pd.concat([REGIONS, pd.DataFrame({"region": ["mid"], "timezone": ["UTC"], "country": ["US"],
                                                "jurisdiction": ["US"], "egress_usd_per_gb": [0.09]})])
    jobs = pd.concat([routed_away(), chained([job(8, 0, 5000, 8)], [None], [None])], ignore_index=True)
    nodes.loc[nodes["region"] == "r", "gpus"] = 16
    result = run_scenario(scenario(policies={"routing": "overflow"}), jobs, nodes)
    assert result.jobs.set_index("job_id").loc["j1", ["region", "start_s"]].tolist() == ["mid", 1360.0]
    table = result.chains
    assert table[["from_region", "to_region", "transfer_s", "ready_s"]].values.tolist() == [
        ["r", "mid", 360.0, 1360.0]]
    assert result.jobs.set_index("job_id").loc["j1", "reason"] == "waiting-for-predecessor"
    report = world_report(result, nodes, pd.DataFrame(), regions, pd.DataFrame())
    assert report.kpis["egress_usd"] == pytest.approx(9.0)


def test_a_late_stage_routed_away_is_held_only_for_the_transfer_to_where_it_runs():
    # j1 submitted at 1200 s, after j0 ended (1000 s): routed to r at its submit, its checkpoint is already there
    jobs = routed_away()
    jobs.loc[1, "submit_utc"] = jobs.loc[0, "submit_utc"] + pd.Timedelta(seconds=1200)
    result = run_scenario(scenario(policies={"routing": "overflow"}), jobs, NODES)
    assert result.jobs.set_index("job_id").loc["j1", ["region", "start_s", "reason"]].tolist() == [
        "r", 1200.0, "started"]
