"""Repacking a MIG GPU's layout with running instances (issue 27, item 3: [partitions] repack): which
instances block a profile at NVIDIA's published valid positions, the drain under "checkpoint" and
"wait" with its cost, and instances that never overlap after any sequence of placements, releases and
repacks (hypothesis)."""
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sim_helpers import fleet, job

from engine.analysis.runs.partitions import partitions_kpis
from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.world.mig import PROFILES, SIZES, drain_for, first_start

MIG_40GB = {"mode": "mig", "gpu_models": {"A100": "A100-40GB"}, "reconfigure_s": 300, "idle_s": 600}
A100_40GB = {p.name: p for p in PROFILES["A100-40GB"]}


def test_the_blocking_instances_at_the_published_positions():
    # NVIDIA's A100 40 GB table: 3g.20gb starts at 0 or 4 (4 memory slices), 4g.20gb at 0 only, 7g.40gb
    # at 0 (all 8), 1g.5gb anywhere 0-6, 2g.10gb at 0, 2 or 4.
    one, two, three, four, seven = (A100_40GB[n] for n in ("1g.5gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"))
    smaller = lambda key, p: True  # noqa: E731
    # 1g.5gb at 1 and at 4: a 3g at 0 is blocked by the first, at 4 by the second: one slice either
    # way, the lower start wins
    assert drain_for([("a", one, 1), ("b", one, 4)], three, smaller) == (0, ["a"])
    # a 2g.10gb at 2 (slices 2-3) and a 1g.5gb at 5: a 4g (0 only) needs the 2g gone; a 3g at 4 the 1g
    assert drain_for([("a", two, 2), ("b", one, 5)], four, smaller) == (0, ["a"])
    assert drain_for([("a", two, 2), ("b", one, 5)], three, smaller) == (4, ["b"])
    # a 7g takes the whole GPU: everything goes; a free start needs no drain
    assert drain_for([("a", two, 2), ("b", one, 5)], seven, smaller) == (0, ["a", "b"])
    assert drain_for([("a", one, 0)], three, smaller) == (4, [])
    # only movable instances may go: the 3g at 4 may not, so a 3g goes at 0 (draining the 1g at 1)
    assert drain_for([("a", one, 1), ("b", three, 4)], three, lambda k, p: p.compute < 3) == (0, ["a"])
    assert drain_for([("a", three, 0), ("b", three, 4)], three, lambda k, p: p.compute < 3) is None


def repack_jobs():
    # One A100 40 GB; development 1g.5gb, inference 3g.20gb. j0-j4 (development) at 0-4 s take slices
    # 0-4 (the GPU switches at 0, ready at 300); j0, j2, j3 (100 s) end at 400; j1 (2700 s) would end at
    # 3000, j4 (5000 s) at 5300. Slices 1 and 4 stay taken: j5 (inference, 1000 s) at 1000 finds no 3g
    # start free (0-3 has j1, 4-7 has j4) and no idle GPU. j6 (development, 2000 s) comes at 2000.
    runs = [(0, 100), (1, 2700), (2, 100), (3, 100), (4, 5000)]
    jobs = [job(i, t, r, 1, gpu_type="A100", workload_class="development") for i, (t, r) in enumerate(runs)]
    return jobs + [job(5, 1000, 1000, 1, gpu_type="A100", workload_class="inference"),
                   job(6, 2000, 2000, 1, gpu_type="A100", workload_class="development")]


def run_repack(mode):
    spec = {"name": "t", "policies": {"backfill": {"key": "easy"}}, "partitions": {**MIG_40GB, "repack": mode}}
    return run_scenario(Scenario.from_dict(spec), pd.DataFrame(repack_jobs()), fleet(1, gpu_type="A100"))


def test_without_repacking_the_3g_waits_for_a_start_to_clear():
    # j6 at 2000 is backfilled at the lowest free start, 0 (ends at 4000 < the GPU's expected return),
    # so when j1 ends at 3000 slices 0-3 are still blocked: j5 waits for j6, 4000-5000.
    result = run_repack("off")
    assert result.jobs.loc[5, ["start_s", "end_s"]].tolist() == [4000.0, 5000.0]
    assert partitions_kpis(result)["mig_repacks"] == 0


def test_repack_checkpoint_drains_the_cheapest_blocker_at_once():
    # drain_for: j1 at 1 or j4 at 4, one compute slice each: slice 0's side, j1. j1 checkpoints at 1000
    # (700 s of work done since 300, 2000 left), goes back to the queue and takes 1g at slice 5 at once:
    # 1000-3000. j5's 3g at 0 is ready after the layout change, 1300, and ends at 2300. j6 at 2000 takes
    # slice 6. The drain cost: 300 s of a 3/7 GPU.
    result = run_repack("checkpoint")
    jobs = result.jobs
    assert jobs.loc[5, ["start_s", "end_s"]].tolist() == [1000.0, 2300.0]
    assert jobs.loc[1, ["end_s", "preemptions"]].tolist() == [3000.0, 1]
    table = result.partitions
    repack = table[table["event"] == "repack"]
    assert repack[["row", "profile", "start_slice", "start_s", "end_s", "co_tenants"]].values.tolist() == [
        [5, "3g.20gb", 0, 1000.0, 1300.0, 1]]
    instances = table[table["event"] == "instance"]
    assert instances[instances["row"].isin([1, 6])][["row", "start_slice", "start_s", "end_s"]].values.tolist() == [
        [1, 1, 1.0, 1000.0], [1, 5, 1000.0, 3000.0], [6, 6, 2000.0, 4000.0]]
    kpis = partitions_kpis(result)
    assert (kpis["mig_repacks"], kpis["mig_repack_drained"]) == (1, 1)
    assert kpis["mig_repack_drain_gpu_hours"] == pytest.approx(300 * 3 / 7 / 3600)


def test_repack_wait_reserves_the_slices_until_the_blocker_finishes():
    # j5 reserves 3g at 0 at 1000; j6 at 2000 may not take slices 0-3: it goes at 5 (2000-4000). j1 ends
    # at 3000: j5's instance is placed, ready after the layout change at 3300, ends at 4300. The drain
    # cost: 300 s of 3 compute slices, plus the reserved slices idle: 2 (0, 2, 3 free of j1's 1) from
    # 1000 to 3000 = 4000 slice-seconds, all over 7 slices.
    result = run_repack("wait")
    assert result.jobs.loc[5, ["start_s", "end_s"]].tolist() == [3000.0, 4300.0]
    assert result.jobs["preemptions"].sum() == 0
    table = result.partitions
    assert table[(table["event"] == "instance") & (table["row"] == 6)]["start_slice"].tolist() == [5]
    repack = table[table["event"] == "repack"]
    assert repack[["row", "start_slice", "start_s", "end_s", "co_tenants"]].values.tolist() == [
        [5, 0, 1000.0, 3300.0, 0]]
    assert repack["drain_gpu_hours"].sum() == pytest.approx((300 * 3 + 2 * 2000) / 7 / 3600)


@settings(max_examples=300, deadline=None)
@given(part=st.sampled_from(sorted(PROFILES)),
       steps=st.lists(st.tuples(st.sampled_from(["place", "release", "repack"]), st.integers(0, 5),
                                st.integers(0, 20)), max_size=40))
def test_instances_never_overlap_after_placements_releases_and_repacks(part, steps):
    """Any sequence of placements (lowest free valid start), releases and repacks (drain_for's blockers
    removed, the profile placed at its start): every instance at a valid start, none sharing a slice."""
    profiles, placed, occupied, key = PROFILES[part], {}, 0, 0
    for action, which, pick in steps:
        prof = profiles[which]
        if action == "release" and placed:
            gone = sorted(placed)[pick % len(placed)]
            p, s = placed.pop(gone)
            occupied &= ~p.mask(s)
        elif action == "place" and (start := first_start(occupied, prof)) >= 0:
            placed[key], occupied, key = (prof, start), occupied | prof.mask(start), key + 1
        elif action == "repack":
            plan = drain_for([(k, p, s) for k, (p, s) in placed.items()], prof, lambda k, p: p.compute < prof.compute)
            if plan is None:
                continue
            start, drained = plan
            assert start in prof.starts
            for k in drained:
                p, s = placed.pop(k)
                occupied &= ~p.mask(s)
            assert not occupied & prof.mask(start), "the drained instances were all that blocked"
            placed[key], occupied, key = (prof, start), occupied | prof.mask(start), key + 1
        masks = [p.mask(s) for p, s in placed.values()]
        assert sum(bin(m).count("1") for m in masks) == bin(occupied).count("1")  # pairwise disjoint
        assert all(s in p.starts for p, s in placed.values())


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(60, 4000), st.sampled_from(["inference", "development"])),
                min_size=1, max_size=14),
       st.sampled_from(SIZES), st.sampled_from(SIZES), st.sampled_from(["checkpoint", "wait"]))
def test_in_a_run_with_repacking_instances_never_overlap_and_every_job_ends(arrivals, inference, development, mode):
    nodes = fleet(2, gpu_type="A100")
    jobs = [job(i, t, r, 1, gpu_type="A100", workload_class=c) for i, (t, r, c) in enumerate(arrivals)]
    spec = {"name": "t", "policies": {"backfill": {"key": "easy"}},
            "partitions": {**MIG_40GB, "inference_profile": inference, "development_profile": development,
                           "repack": mode}}
    result = run_scenario(Scenario.from_dict(spec), pd.DataFrame(jobs), nodes)
    assert result.jobs["end_s"].notna().all()
    sizes = {p.name: (p.starts, p.size) for p in PROFILES["A100-40GB"]}
    rows = result.partitions[result.partitions["event"] == "instance"]
    for (_, gpu), held in rows.groupby(["node", "gpu"]):
        items = [(r.start_s, r.end_s, r.start_slice, sizes[r.profile][1]) for r in held.itertuples()]
        assert all(a in sizes[r.profile][0] for r, (_, _, a, _) in zip(held.itertuples(), items))
        for k, (s1, e1, a1, n1) in enumerate(items):
            for s2, e2, a2, n2 in items[k + 1:]:
                if s1 < e2 and s2 < e1:
                    assert a1 + n1 <= a2 or a2 + n2 <= a1
