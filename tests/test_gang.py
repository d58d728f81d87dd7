"""Gang placement policies: which whole free nodes a multi-node job takes, on tiny racked fleets."""
import numpy as np
import pytest

from engine.policies import registry
from engine.policies.gang import LowestIndexGang, TopologyGang
from engine.scenario.spec import DEFAULTS, Scenario
from engine.sim.state.fleet_state import FleetState


def _view(racks):
    n = len(racks)
    return FleetState(np.full(n, 8000), np.full(n, 65536), np.full(n, 8), ["A100"] * n, rack=racks).view()


RACKS = [0, 0, 0, 1, 1, 2, 2, 2, 2, 3]          # free counts when all free: 3, 2, 4, 1
INTERLEAVED = [7, 3, 7, 3, 7, 3, 3]              # rack 7: nodes 0, 2, 4; rack 3: nodes 1, 3, 5, 6

# (racks, free nodes, width, topology's answer, lowest-index's answer); None: fewer free than width.
CASES = {
    "smallest-rack-that-suffices": (RACKS, range(10), 2, [3, 4], [0, 1]),
    "three-fit-rack-0-exactly": (RACKS, range(10), 3, [0, 1, 2], [0, 1, 2]),
    "only-rack-2-holds-four": (RACKS, range(10), 4, [5, 6, 7, 8], [0, 1, 2, 3]),
    "one-node-goes-to-the-lone-rack": (RACKS, range(10), 1, [9], [0]),
    "span-biggest-rack-first": (RACKS, range(10), 5, [0, 5, 6, 7, 8], [0, 1, 2, 3, 4]),
    "span-three-racks": (RACKS, range(10), 8, [0, 1, 2, 3, 5, 6, 7, 8], [0, 1, 2, 3, 4, 5, 6, 7]),
    "everything": (RACKS, range(10), 10, list(range(10)), list(range(10))),
    "too-wide": (RACKS, range(10), 11, None, None),
    "equal-racks-lowest-id": (RACKS, [0, 1, 3, 4], 2, [0, 1], [0, 1]),
    "equal-racks-span-lowest-id-first": (RACKS, [0, 1, 3, 4], 3, [0, 1, 3], [0, 1, 3]),
    "busy-nodes-change-the-counts": (RACKS, [1, 2, 4, 6, 9], 2, [1, 2], [1, 2]),
    "span-ties-of-one": (RACKS, [1, 2, 4, 6, 9], 3, [1, 2, 4], [1, 2, 4]),
    "racks-not-in-node-order": (INTERLEAVED, range(7), 3, [0, 2, 4], [0, 1, 2]),
    "bigger-rack-by-id-order": (INTERLEAVED, range(7), 4, [1, 3, 5, 6], [0, 1, 2, 3]),
    "span-interleaved": (INTERLEAVED, range(7), 5, [0, 1, 3, 5, 6], [0, 1, 2, 3, 4]),
    "tie-goes-to-rack-3-not-node-0": (INTERLEAVED, [0, 1, 2, 3], 2, [1, 3], [0, 1]),
    "nothing-free": (RACKS, [], 1, None, None),
}


@pytest.mark.parametrize("name", CASES)
def test_gang_choices_by_hand(name):
    racks, free, width, topology, lowest = CASES[name]
    view, free = _view(racks), np.array(list(free), np.int64)
    for policy, expected in ((TopologyGang(), topology), (LowestIndexGang(), lowest)):
        chosen = policy.choose_nodes(view, free, width, None)   # neither policy draws randomness
        assert (None if chosen is None else chosen.tolist()) == expected, type(policy).__name__


def test_family_is_registered_and_defaults_to_lowest_index():
    assert registry.families()["gang"] == ["contiguous-best-fit", "contiguous-first-fit", "contiguous-strip",
                                          "lowest-index", "topology"]
    assert DEFAULTS["gang"] == "lowest-index"
    assert Scenario.from_dict({}).policies["gang"] == ("lowest-index", {})
    chosen = Scenario.from_dict({"policies": {"gang": {"key": "topology"}}}).build_policies()
    assert isinstance(chosen.gang, TopologyGang)


def test_answer_does_not_alias_the_free_nodes():
    free = np.arange(4, dtype=np.int64)
    chosen = LowestIndexGang().choose_nodes(_view(RACKS), free, 2, None)
    chosen[0] = 9
    assert free.tolist() == [0, 1, 2, 3]
