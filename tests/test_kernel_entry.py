"""Kernels called through their entry points (engine.core.kernel_entry): the same answers as numba's
dispatcher, and every caller fixes the argument types the entry point reads."""
import numpy as np
import pandas as pd

from engine.core.fleet_view import Placement, PodRequest
from engine.core.kernel_entry import Entries, entry
from engine.sim.state import whole_kernels
from engine.sim.state.fleet_state import FleetState
from engine.sim.state.region import GangFleetState, RegionFleet


def test_the_entry_point_is_the_dispatchers_own_compiled_version(monkeypatch):
    from engine.core.kernel_entry import CHECK

    monkeypatch.delenv(CHECK, raising=False)  # bare, as in a user's process
    state = GangFleetState([1000] * 4, [1024] * 4, [1] * 4, ["T4"] * 4)
    nodes = np.array([1, 3], np.int64)
    args = (state._plain, state._taken, state._flags, nodes, True)
    call = entry(whole_kernels.move_whole, args)
    assert call is whole_kernels.move_whole.overloads[tuple(map(whole_kernels.move_whole.typeof_pyval, args))].entry_point
    assert call(*args) == 2000 and state.held_whole.tolist() == [False, True, False, True]


def test_entries_keep_one_entry_point_per_key_and_make_it_once(monkeypatch):
    from engine.core.kernel_entry import CHECK

    monkeypatch.delenv(CHECK, raising=False)
    state = GangFleetState([1000] * 4, [1024] * 4, [1] * 4, ["T4"] * 4)
    entries, nodes = Entries(), np.array([0], np.int64)
    take = (state._plain, state._taken, state._flags, nodes, True)
    give = (state._plain, state.capacity, state._flags, nodes, False)
    made = entries.get(True) or entries.made(True, whole_kernels.move_whole, take)
    assert entries.get(True) is made and made(*take) == 1000
    assert entries.get(False) is None
    assert (entries.get(False) or entries.made(False, whole_kernels.move_whole, give))(*give) == 1000
    assert list(entries) == [True, False] and state.held_whole.tolist() == [False] * 4


def test_whole_nodes_given_as_a_strided_view_or_a_list_are_the_nodes_named():
    """An entry point reads any array as C-contiguous int64: the whole-node moves convert what they get."""
    state = GangFleetState([1000] * 8, [1024] * 8, [1] * 8, ["T4"] * 8)
    state.allocate_whole([1, 5])  # the first call resolves the entry point: C-contiguous int64
    state.allocate_whole(np.arange(8, dtype=np.int64)[::2])
    assert state.held_whole.tolist() == [True, True, True, False, True, True, True, False]
    state.release_whole(np.arange(8, dtype=np.int32)[::4])
    assert state.entirely_free.tolist() == [True, False, False, True, True, False, False, True]
    fleet = RegionFleet(pd.DataFrame({"node": [f"n{i}" for i in range(6)], "cpu_milli": 1000, "memory_mib": 1024,
                                      "gpu": 1, "model": "T4", "rack_id": 0}))
    assert fleet.allocate_whole(np.array([0], np.int64)) == 1000
    assert fleet.allocate_whole(np.arange(6, dtype=np.int64)[1::2]) == 3000
    assert fleet.state.held_whole.tolist() == [True, True, False, True, False, True]


def test_pods_of_every_gpu_count_and_model_move_as_through_the_dispatcher():
    """FleetState keeps one entry point per count of GPUs (a tuple of k indices is a type per k): pods of
    0, 1 and 2 GPUs, with and without a model, in one state, take and give back exactly."""
    state = FleetState([8000, 8000], [4096, 4096], [2, 2], ["T4", "V100"])
    idle = state.free.copy()
    moves = [(Placement(0, (), 0), PodRequest(1000, 512, 0, 0)),
             (Placement(1, (1,), 500), PodRequest(1000, 512, 1, 500)),
             (Placement(0, (0, 1), 1000), PodRequest(2000, 1024, 2, 1000, ("T4",))),
             (Placement(1, (0,), 1000), PodRequest(1000, 512, 1, 1000, ("V100",)))]
    for placement, request in moves:
        state.allocate(placement, request)
    assert state.gpu_free.tolist() == [[0, 0], [0, 500]] and state.cpu_free.tolist() == [5000, 6000]
    for placement, request in reversed(moves):
        state.release(placement, request)
    assert np.array_equal(state.free, idle) and sorted(state._moves) == [0, 1, 2]


def test_the_backfill_scan_has_an_entry_per_type_of_the_runs_arrays():
    """The scan's entry point is keyed by the dtypes and strides of the run's per-job arrays: a run whose
    arrays are of another type (int32 pools, strided shapes) gets its own entry and the same answer."""
    from engine.policies.backfill import easy_kernels
    from engine.sim.cycle.backfill_pass import _scan_entry

    kernels = easy_kernels()

    def scan(pools, shapes):
        jobs = np.array([0, 1, 2], np.int64)
        codes, reason, marked = np.zeros(3, np.int8), np.zeros(3, np.int8), np.empty(3, np.int64)
        args = (0, -1, 0.0, 100.0, 0.0, jobs, np.array([50.0, 500.0, 50.0]), np.zeros(3), np.array([1000.0] * 3),
                pools, shapes, np.array([1000.0]), codes, reason, 1, 2, marked)
        return _scan_entry(kernels, args), _scan_entry(kernels, args)(*args)

    plain, answer = scan(np.zeros(3, np.int64), np.arange(3, dtype=np.int64))
    other, same = scan(np.zeros(3, np.int32), np.arange(6, dtype=np.int64)[::2])
    assert other is not plain and same == answer == kernels.scan(
        0, -1, 0.0, 100.0, 0.0, np.array([0, 1, 2], np.int64), np.array([50.0, 500.0, 50.0]), np.zeros(3),
        np.array([1000.0] * 3), np.zeros(3, np.int64), np.arange(3, dtype=np.int64), np.array([1000.0]),
        np.zeros(3, np.int8), np.zeros(3, np.int8), 1, 2, np.empty(3, np.int64))


def test_a_checked_entry_point_refuses_an_argument_it_would_misread(monkeypatch):
    """Under MERIDIAN_CHECK_ENTRIES, an entry point called with an array of another
    dtype or layout than it was resolved for raises instead of misreading it; one resolved for any layout
    reads a contiguous array as well, and a read-only array is read as a writable one."""
    import pytest

    from engine.core.kernel_entry import CHECK
    from engine.sim.state import slot_kernels

    monkeypatch.setenv(CHECK, "1")
    slots = np.zeros((4, 7))
    call = entry(slot_kernels.running, (slots, 0, 0.0, True))
    assert len(call(slots, 0, 0.0, True)) == 5
    with pytest.raises(TypeError, match="running's entry point"):
        call(np.zeros((8, 7))[::2], 0, 0.0, True)
    with pytest.raises(TypeError, match="running's entry point"):
        call(np.zeros((4, 7), np.float32), 0, 0.0, True)
    strided = np.zeros((8, 7))[::2]
    anywise = entry(slot_kernels.running, (strided, 0, 0.0, True))
    slots.flags.writeable = False
    assert len(anywise(slots, 0, 0.0, True)) == 5 == len(call(slots, 0, 0.0, True))


CHECKED_RUN = """
import sys
from pathlib import Path

import pandas as pd

from engine.scenario.spec import Scenario
from engine.service.run import run_scenario
from engine.telemetry.sample import read_bundle
from engine.world.facts import World

bundle = read_bundle().tables
world = World(bundle["regions"], bundle["prices"], bundle["carbon"], teams=bundle["teams"])
jobs = bundle["jobs"]
submit = pd.to_datetime(jobs["submit_utc"])
jobs = jobs[submit < submit.min() + pd.Timedelta(days=14)]
for name in sys.argv[1:]:
    run_scenario(Scenario.load(Path("sample_data/scenarios", name + ".toml")), jobs, bundle["fleet"], world)
"""


def test_the_scenarios_that_reach_every_entry_point_pass_its_type_checks():
    """Two weeks of the sample under scenarios that between them call every kernel entry point of the engine
    (pod and whole-node moves, first-fit's and best-fit's placement, EASY's reservation, scan and running slots,
    the fair-share keying, the ledger's decay, the order cache, the cluster step's choice and the head's cluster:
    all 17 kernels called through one), in a process with MERIDIAN_CHECK_ENTRIES set: a caller that passed an
    argument of a type its entry point would misread fails it with TypeError."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from engine.core.kernel_entry import CHECK

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", CHECKED_RUN, "fifo", "easy-backfill", "priority-fairshare",
                           "quotas-preemption", "cluster-topology"],
                          cwd=root, env={**os.environ, CHECK: "1", "PYTHONPATH": str(root)}, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
