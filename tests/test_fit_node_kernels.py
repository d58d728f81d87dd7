"""The placement kernels that apply the fit rule node by node in their own pass (engine.policies.leftover_kernels:
first-fit's and the leftover policies' choice on a fleet without kept fit masks) against the rule written
plainly over the fleet's fit mask (engine.core.fleet_view.fits_on): first-fit's lowest fitting node and its
lowest GPUs with the milli free; best-fit's and worst-fit's leftover score in Python floats, ties to the lowest
node, GPUs tightest-fit. Fleets are drawn small, with spot nodes and pods already placed, so that few nodes fit."""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.fleet_view import PodRequest, fits_on
from engine.policies.placement import BestFit, FirstFit, RandomPlacement, WorstFit, tightest_gpus
from engine.sim.state.fleet_state import FleetState

NODE = st.tuples(st.sampled_from([0, 1, 2, 4]), st.sampled_from([1000, 4000, 8000]), st.sampled_from([1024, 8192]),
                 st.booleans())
POD = st.tuples(st.sampled_from([0, 500, 1000, 3000]), st.sampled_from([0, 512, 4096]), st.sampled_from([0, 1, 2]),
                st.sampled_from([250, 500, 1000]), st.booleans())


def _request(pod) -> PodRequest:
    cpu, memory, gpus, milli, spot_ok = pod
    return PodRequest(cpu, memory, gpus, milli if gpus else 0, spot_ok=spot_ok)


def _fleet(nodes, placed) -> FleetState:
    state = FleetState([n[1] for n in nodes], [n[2] for n in nodes], [n[0] for n in nodes],
                       ["a100" if n[0] else None for n in nodes], spot=np.array([n[3] for n in nodes]))
    rng = np.random.default_rng(len(placed))
    for pod in placed:
        placement = RandomPlacement().choose(state.view(), _request(pod), rng)
        if placement is not None:
            state.allocate(placement, _request(pod))
    return state


def _first_fit(view, request):
    for node in np.flatnonzero(fits_on(view, request)).tolist():
        free = view.gpu_free[node].tolist()
        return node, tuple([g for g in range(len(free)) if free[g] >= request.gpu_milli][:request.num_gpu])
    return None


def _leftover(view, request, least: bool):
    cpu_scale, gpu_scale = max(view.max_cpu_milli, 1), max(view.max_gpu_milli, 1)
    best, top = None, -math.inf
    for node in np.flatnonzero(fits_on(view, request)).tolist():
        left = (int(view.cpu_free[node]) - request.cpu_milli) / cpu_scale * 0.5 \
            + (int(view.gpu_free_total[node]) - request.total_gpu_milli) / gpu_scale * (1 - 0.5)
        score = math.trunc((1.0 - left) * 100) if least else math.trunc(left * 100)
        if score > top:
            best, top = node, score
    return None if best is None else (best, tightest_gpus(view, best, request))


@settings(max_examples=300, deadline=None)
@given(st.lists(NODE, min_size=1, max_size=12), st.lists(POD, max_size=20), POD)
def test_the_fused_placement_kernels_choose_as_the_fit_mask_and_the_plain_rules_do(nodes, placed, pod):
    state = _fleet(nodes, placed)
    view, request, rng = state.view(), _request(pod), np.random.default_rng(0)
    assert view._log is None  # a small fleet: the kernels apply the fit rule themselves
    for policy, expected in ((FirstFit(), _first_fit(view, request)), (BestFit(), _leftover(view, request, True)),
                             (WorstFit(), _leftover(view, request, False))):
        placement = policy.choose(view, request, rng)
        assert (None if placement is None else (placement.node, placement.gpus)) == expected, policy
        if placement is not None:
            assert placement.gpu_milli == request.gpu_milli and len(placement.gpus) == request.num_gpu
            assert all(view.gpu_free[placement.node][g] >= request.gpu_milli for g in placement.gpus)
