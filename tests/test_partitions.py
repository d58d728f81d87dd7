"""GPU partitions in a run (issue 27, item 3: engine.world.partitions, engine.sim.processes.partitions):
MIG instances with the drain cost of reconfigurations, time-slicing and MPS with interference that
grows with co-tenants and re-paces running jobs exactly, inference keeping its share; without a
[partitions] table nothing changes."""
import hashlib

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job

from engine.analysis.runs.partitions import partitions_kpis
from engine.core.errors import ScenarioError
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.mig import PROFILES, SIZES
from engine.world.partitions import Partitions

MIG_40GB = {"gpu_models": {"A100": "A100-40GB"}, "reconfigure_s": 300, "idle_s": 600}


def simulate(jobs, nodes, partitions=None, backfill="none"):
    spec = {"name": "t", "policies": {"backfill": {"key": backfill}}}
    if partitions is not None:
        spec["partitions"] = partitions
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), nodes)


def ends(result) -> list[float]:
    return result.jobs["end_s"].tolist()


def test_two_development_jobs_share_a_mig_gpu_after_its_reconfiguration_and_a_whole_gpu_job_waits_for_it():
    # One A100 40 GB, EASY backfilling. j0 (development, 1 GPU, 1000 s) at 0: the GPU switches to MIG
    # mode, ready at 300; its 1g.5gb instance at slice 0 works 300-1300. j1 (batch, a whole GPU) at 10
    # waits. j2 (development, 500 s) at 100: the GPU is in MIG mode with slice 1 free: an instance at 1,
    # working from 300 to 800 (a MIG job takes no whole GPU: backfilled past j1). The GPU empties at
    # 1300, stays in MIG mode for idle_s 600, switches back 1900-2200: j1 starts at 2200.
    nodes = fleet(1, gpu_type="A100")
    jobs = [job(0, 0, 1000, 1, gpu_type="A100", workload_class="development"),
            job(1, 10, 400, 1, gpu_type="A100", workload_class="batch"),
            job(2, 100, 500, 1, gpu_type="A100", workload_class="development")]
    result = simulate(jobs, nodes, {"mode": "mig", **MIG_40GB}, backfill="easy")
    assert ends(result) == [1300.0, 2600.0, 800.0]
    assert result.jobs["start_s"].tolist() == [0.0, 2200.0, 100.0]
    assert result.jobs["gpus_allocated"].tolist() == pytest.approx([1 / 7, 1.0, 1 / 7])
    table = result.partitions.set_index(["event", "row"])
    assert table.loc[("instance", 0), ["profile", "start_slice", "start_s", "end_s"]].tolist() == [
        "1g.5gb", 0, 0.0, 1300.0]
    assert table.loc[("instance", 2), ["profile", "start_slice"]].tolist() == ["1g.5gb", 1]
    # the drain cost: two switches of one GPU, 300 s each, 2 x 300 / 3600 GPU-hours
    switches = result.partitions[result.partitions["event"].isin(["to-mig", "to-whole"])]
    assert switches[["event", "start_s", "end_s"]].values.tolist() == [["to-mig", 0.0, 2200.0],
                                                                      ["to-whole", 1900.0, 2200.0]]
    assert switches["drain_gpu_hours"].sum() == pytest.approx(2 * 300 / 3600)
    # the KPIs: instances 0-1300 and 100-800 at 1/7 of a GPU; the GPU in MIG mode 0-2200; the two
    # jobs would have held a whole GPU each for 1300 + 700 s: 2000 - 2200 s, MIG cost 200 GPU-seconds here
    kpis = partitions_kpis(result)
    assert kpis == pytest.approx({
        "mig_instances": 2, "mig_slice_gpu_hours": 2000 / 7 / 3600, "mig_mode_gpu_hours": 2200 / 3600,
        "mig_slice_use": 2000 / 7 / 2200, "mig_gpu_hours_saved": -200 / 3600, "mig_reconfigurations": 2,
        "mig_drain_gpu_hours": 600 / 3600, "mig_repacks": 0, "mig_repack_drained": 0, "mig_repack_drain_gpu_hours": 0.0,
        "shared_gpu_pieces": 0, "interference_mean_slowdown": 1.0, "interference_extra_gpu_hours": 0.0})


def test_a_mig_gpu_refuses_a_profile_with_no_free_valid_start_and_a_second_gpu_switches():
    # Two A100 40 GB on one node; inference 4g.20gb, development 4g too: a 4g sits only at slice 0, so
    # the second job cannot share the first's GPU (slices 4-7 are free but no 4g start is there):
    # the node's second GPU switches, and both run from 300 (the reconfiguration) for their 1000 s.
    nodes = fleet(2, gpu_type="A100")
    jobs = [job(i, 0, 1000, 1, gpu_type="A100", workload_class=c) for i, c in enumerate(("inference", "development"))]
    result = simulate(jobs, nodes, {"mode": "mig", "inference_profile": "4g", "development_profile": "4g", **MIG_40GB})
    instances = result.partitions[result.partitions["event"] == "instance"]
    assert instances[["gpu", "profile", "start_slice"]].values.tolist() == [[0, "4g.20gb", 0], [1, "4g.20gb", 0]]
    assert ends(result) == [1300.0, 1300.0]
    assert (result.partitions["event"] == "to-mig").sum() == 2


def test_time_slicing_slows_co_tenants_by_1_plus_c_k_and_re_paces_a_running_job_when_one_leaves():
    # One L4, time-slicing (c 0.15), replicas 4: each development job asks 250 milli. j0 (1000 s of
    # work) at 0 runs alone until j1 arrives at 200: 200 done, 800 left; both at 1.15 from 200. j1
    # (400 s) ends at 200 + 400 x 1.15 = 660; j0 did 460 / 1.15 = 400 meanwhile, 400 left at pace 1:
    # it ends at 1060.
    nodes = fleet(1, gpu_type="L4")
    jobs = [job(0, 0, 1000, 1, gpu_type="L4", workload_class="development"),
            job(1, 200, 400, 1, gpu_type="L4", workload_class="development")]
    result = simulate(jobs, nodes, {"mode": "time-slicing"})
    assert ends(result) == pytest.approx([1060.0, 660.0])
    assert result.jobs["gpus_allocated"].tolist() == [0.25, 0.25]
    shared = result.partitions.set_index("row")
    assert shared.loc[0, "slowdown"] == pytest.approx(1060 / 1000) and shared.loc[1, "slowdown"] == pytest.approx(1.15)
    assert shared["co_tenants"].tolist() == [1, 1]
    # interference added 60 s to j0 and 60 s to j1 (460 - 400), each holding 0.25 GPU
    assert partitions_kpis(result)["interference_extra_gpu_hours"] == pytest.approx(2 * 60 * 0.25 / 3600)


def test_interference_grows_with_co_tenants_and_mps_interferes_less():
    model = Partitions(enabled=True, mode="time-slicing")
    paces = [model.slowdown(k) for k in range(8)]
    assert paces == sorted(set(paces)) and paces[0] == 1.0 and paces[3] == pytest.approx(1.45)
    # k jobs of 1000 s arriving together on one GPU each run 1000 (1 + c (k - 1)) s
    nodes = fleet(1, gpu_type="L4")
    for mode, c in (("time-slicing", 0.15), ("mps", 0.08)):
        spans = []
        for k in (1, 2, 3, 4):
            jobs = [job(i, 0, 1000, 1, gpu_type="L4", workload_class="development") for i in range(k)]
            spans.append(max(ends(simulate(jobs, nodes, {"mode": mode}))))
        assert spans == pytest.approx([1000 * (1 + c * (k - 1)) for k in (1, 2, 3, 4)]), mode


def test_on_a_shared_gpu_inference_keeps_its_share_and_development_yields():
    # j0 inference (1000 s) at 0 and j1 development (400 s) at 200 on one L4 under time-slicing:
    # inference counts only inference co-tenants (none): it ends at 1000; development counts j0:
    # 400 x 1.15 = 460 s, it ends at 660. Without the priority both slow (as in the test above).
    nodes = fleet(1, gpu_type="L4")
    jobs = [job(0, 0, 1000, 1, gpu_type="L4", workload_class="inference"),
            job(1, 200, 400, 1, gpu_type="L4", workload_class="development")]
    assert ends(simulate(jobs, nodes, {"mode": "time-slicing"})) == pytest.approx([1000.0, 660.0])
    assert ends(simulate(jobs, nodes, {"mode": "time-slicing", "inference_priority": False})) == pytest.approx(
        [1060.0, 660.0])


def _digest(result) -> str:
    return hashlib.sha256(pd.concat([result.jobs, result.timeline], axis=1).to_csv().encode()).hexdigest()


def test_without_the_table_or_with_it_off_nothing_changes():
    nodes = fleet(2, 1, gpu_type=["A100", "L4"])
    jobs = [job(i, 50 * i, 600 + 100 * i, g, gpu_type=t, workload_class=c, gpu_milli=m)
            for i, (g, t, c, m) in enumerate([(1, "A100", "development", None), (0.5, "L4", "inference", 500),
                                              (0.5, "L4", "batch", 500), (1, "A100", "inference", None),
                                              (2, "A100", "training", None)])]
    plain = simulate(jobs, nodes)
    off = simulate(jobs, nodes, {"enabled": False})
    assert _digest(plain) == _digest(off) and plain.partitions is None and off.partitions is None
    assert _digest(simulate(jobs, nodes, {"mode": "mig"})) != _digest(plain)


def test_bad_partitions_tables_are_refused_naming_the_key():
    for table, words in (({"mode": "vgpu"}, "mode must be one of mig, time-slicing, mps"),
                         ({"inference_profile": "5g"}, "inference_profile must be one of 1g, 2g, 3g, 4g, 7g, none"),
                         ({"replicas": 1}, "replicas must be from 2 to 48"),
                         ({"reconfigure_s": -5}, "reconfigure_s must be from 0"),
                         ({"gpu_models": {"A100": "A100-20GB"}}, "gpu_models must map"),
                         ({"mig": True}, "unknown [partitions] key mig")):
        with pytest.raises(ScenarioError, match="partitions") as caught:
            Scenario.from_dict({"partitions": table})
        assert words in str(caught.value), table


def _compared(results):
    import streamlit as st

    from dashboard.sections.partitions import partitions_section

    partitions_section(["whole", "mig"], results)
    st.session_state["drawn"] = True


def test_the_whatif_section_sums_up_the_runs_with_partitions_and_draws_nothing_without():
    from streamlit.testing.v1 import AppTest

    from engine.analysis.runs.partitions import summary

    nodes = fleet(1, gpu_type="A100")
    jobs = [job(0, 0, 1000, 1, gpu_type="A100", workload_class="development")]
    whole, mig = simulate(jobs, nodes), simulate(jobs, nodes, {"mode": "mig", **MIG_40GB})
    table = summary(["whole", "mig"], [whole, mig])
    # only the run with partitions: j0 held 1/7 of a GPU from 0 to 1300 s (300 s of reconfiguration)
    assert table["scenario"].tolist() == ["mig"]
    assert table[["gpu_hours_held", "rule_jct_h"]].values[0].tolist() == pytest.approx([1300 / 7 / 3600, 1300 / 3600])
    app = AppTest.from_function(_compared, args=([whole, mig],), default_timeout=60).run()
    assert not app.exception and [h.value for h in app.subheader] == ["GPU partitions"]
    drawn = app.dataframe[0].value
    assert drawn["scenario"].tolist() == ["mig"] and drawn["mig_instances"].tolist() == [1]
    empty = AppTest.from_function(_compared, args=([whole, whole],), default_timeout=60).run()
    assert not empty.exception and not empty.subheader and empty.session_state["drawn"]


def test_the_work_an_eviction_keeps_is_integrated_over_the_paces_the_job_ran():
    from engine.sim.processes.partitions import _left

    # j0 of the time-slicing test: 1000 s of work from 0 at pace 1, 800 left at 200 when a co-tenant
    # came (pace 1.15), 400 left at 660 when it left (pace 1). Evicted at 430 it did 200 + 230 / 1.15
    # = 400 s of work; at 900, 600 + 240 = 840; before the start of a MIG instance's work, nothing.
    marks = [[0.0, 1000.0, 1.0], [200.0, 800.0, 1.15], [660.0, 400.0, 1.0]]
    assert [1000.0 - _left(marks, t) for t in (100.0, 430.0, 900.0, 1060.0)] == pytest.approx([100, 400, 840, 1000])
    assert _left([[300.0, 500.0, 1.0]], 120.0) == 500.0


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(60, 4000), st.sampled_from(["inference", "development"])),
                min_size=1, max_size=14),
       st.sampled_from(SIZES), st.sampled_from(SIZES))
def test_in_a_run_instances_sit_at_published_starts_and_never_overlap_on_a_gpu(arrivals, inference, development):
    nodes = fleet(2, gpu_type="A100")
    jobs = [job(i, t, r, 1, gpu_type="A100", workload_class=c) for i, (t, r, c) in enumerate(arrivals)]
    result = simulate(jobs, nodes, {"mode": "mig", "inference_profile": inference, "development_profile": development,
                                    **MIG_40GB}, backfill="easy")
    assert result.jobs["end_s"].notna().all()
    starts = {p.name: (p.starts, p.size) for p in PROFILES["A100-40GB"]}
    rows = result.partitions[result.partitions["event"] == "instance"]
    for row in rows.itertuples():
        assert row.start_slice in starts[row.profile][0]
    for (_, gpu), held in rows.groupby(["node", "gpu"]):
        items = [(r.start_s, r.end_s, r.start_slice, starts[r.profile][1]) for r in held.itertuples()]
        for k, (s1, e1, a1, n1) in enumerate(items):
            for s2, e2, a2, n2 in items[k + 1:]:
                if s1 < e2 and s2 < e1:  # together on the GPU: their memory slices are disjoint
                    assert a1 + n1 <= a2 or a2 + n2 <= a1
