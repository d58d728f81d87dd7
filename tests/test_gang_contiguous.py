"""Contiguous gang placement (issue 25 item 2): runs of adjacent free nodes, first fit, best fit and
the strip-packing skyline, on hand-built fleets and in the simulator."""
import numpy as np
import pandas as pd
from sim_helpers import fleet, job, starts

from engine.policies import registry
from engine.policies.bundle import Policies
from engine.policies.gang_contiguous import runs_of
from engine.sim.simulator import simulate
from engine.sim.state.region import GangFleetState
from engine.sim.state.workload import build_workload


def _view(racks):
    n = len(racks)
    return GangFleetState(np.full(n, 64_000), np.full(n, 512 * 1024), np.full(n, 8), ["A"] * n,
                          rack=np.array(racks)).view()


def test_runs_follow_rack_then_index():
    view = _view([0, 0, 0, 0, 1, 1, 1, 1])
    assert [r.tolist() for r in runs_of(view, np.array([0, 1, 3, 4, 5, 7]))] == [[0, 1], [3, 4, 5], [7]]
    shuffled = _view([1, 0, 1, 0])  # the line: nodes 1, 3 (rack 0), then 0, 2 (rack 1)
    assert [r.tolist() for r in runs_of(shuffled, np.array([0, 1, 3]))] == [[1, 3, 0]]


def test_first_fit_best_fit_and_strip_by_hand():
    view = _view([0] * 12)
    free = np.array([1, 2, 3, 5, 6, 8, 9, 10])  # runs [1-3], [5-6], [8-10]; nodes 0, 4, 7 and 11 busy
    first = registry.make("gang", "contiguous-first-fit")
    best = registry.make("gang", "contiguous-best-fit")
    strip = registry.make("gang", "contiguous-strip")
    rng = np.random.default_rng(0)
    assert first.choose_nodes(view, free, 2, rng).tolist() == [1, 2]
    assert best.choose_nodes(view, free, 2, rng).tolist() == [5, 6]
    assert first.choose_nodes(view, free, 4, rng) is None
    # the busy nodes free at 1,000 (0 and 11), 500 (4) and 100 (7). A 2-node gang ending at 480 is
    # closest to node 4's 500: beside it, the left end of [5-6] (gap 20, no remainder) beats the right
    # end of [1-3] (gap 20, one node left over)
    free_at = np.array([1000, 0, 0, 0, 500, 0, 0, 100, 0, 0, 0, 1000], float)
    assert strip.choose_nodes(view, free, 2, rng, free_at=free_at, end_s=480.0).tolist() == [5, 6]
    # a 3-node gang ending at 110 goes beside node 7 (gap 10), where first fit would take [1-3]
    assert strip.choose_nodes(view, free, 3, rng, free_at=free_at, end_s=110.0).tolist() == [8, 9, 10]
    assert first.choose_nodes(view, free, 3, rng).tolist() == [1, 2, 3]
    # without the times, strip packing is best fit
    assert strip.choose_nodes(view, free, 2, rng).tolist() == [5, 6]


def test_a_contiguous_gang_waits_for_adjacent_nodes():
    # Four 8-GPU nodes in one rack. j0 and j1 take nodes 0 and 2 (single-node jobs, first fit after a
    # 1-node filler on node 1 ends): at 10 a 2-node gang finds nodes 1 and 3 free but not adjacent.
    jobs = [job(0, 0, 100, 8), job(1, 0, 5, 8), job(2, 0, 200, 8), job(3, 10, 50, 16, nodes=2)]
    nodes = fleet(8, 8, 8, 8)
    workload = build_workload(pd.DataFrame(jobs), nodes)

    def run(gang):
        policies = Policies(registry.make("order", "fcfs"), registry.make("placement", "first-fit"),
                            registry.make("backfill", "easy"), registry.make("admission", "accept-all"),
                            registry.make("gang", gang))
        return starts(simulate(workload, policies, 0))
    assert run("lowest-index") == [0.0, 0.0, 0.0, 10.0]
    assert run("contiguous-first-fit") == [0.0, 0.0, 0.0, 100.0]  # nodes 0 and 1 once j0 ends
    assert run("contiguous-strip") == [0.0, 0.0, 0.0, 100.0]
