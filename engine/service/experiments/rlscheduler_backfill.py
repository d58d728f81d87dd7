"""What an RLScheduler replay does while its picked job waits for nodes (step 3 of the replay).

Each mode is a function `(replay, picked)` that returns once `picked` fits, advancing the replay
one event at a time:
- "none": start nothing else; the picked job blocks the queue.
- "compat": the published code's backfilling, which is not standard EASY. The shadow time is
  computed once (running jobs by start + requested time, free nodes added up until the picked job
  fits); then, before each event, the queue is scanned in FCFS order whatever the main policy, and
  every job that fits now and would finish strictly before the shadow time starts. No extra-nodes
  rule.
- "easy": textbook EASY (Mu'alem and Feitelson 2001): the picked job holds a reservation at the
  shadow time; other jobs, in the policy's order, start if they fit now and either finish by the
  shadow time or use only the extra nodes (free at the shadow time beyond the picked job's need).
  The reservation is recomputed at every event, from requested runtimes.
- "conservative": every waiting job holds a reservation, made at the earliest time it fits without
  delaying an earlier reservation, the picked job's first and then the others' in the policy's
  order; jobs whose reservation is now start. Recomputed at every event.
Expected ends use requested runtimes; in "easy" and "conservative" a job already past its
requested end is expected to end now.
"""
from __future__ import annotations

import numpy as np

from engine.policies.profile import Profile
from engine.service.experiments.rlscheduler_replay import Replay


def wait_none(replay: Replay, picked: int) -> None:
    while not replay.fits(picked):
        replay.advance()


def wait_compat(replay: Replay, picked: int) -> None:
    seq = replay.sequence
    replay.reorder_running_by_requested_end()
    positions, requested_end_s = replay.running()
    # The published code compares processors: free nodes x processors per node against the request.
    free_procs = (replay.free_nodes + np.cumsum(seq.nodes[positions])) * seq.procs_per_node
    enough = np.flatnonzero(free_procs >= seq.procs[picked])
    # As published: the last requested end when the sum never reaches the request (rounding only).
    shadow_s = requested_end_s[enough[0] if len(enough) else -1]
    while not replay.fits(picked):
        replay.queue.sort_by_submit_later()
        if replay.smallest_waiting(picked) <= replay.free_nodes:
            order = replay.queue.fcfs_order()
            ends_s = replay.now_s + seq.requested_s[order]
            for position in order[(ends_s < shadow_s) & (seq.nodes[order] <= replay.free_nodes)].tolist():
                if replay.fits(position):
                    replay.start(position)
        replay.advance()


def _expected_free(replay: Replay) -> Profile:
    """Free nodes over time if nothing else starts: now, then at each running job's expected end."""
    positions, requested_end_s = replay.running()
    return Profile.expected(replay.now_s, replay.free_nodes, requested_end_s, replay.sequence.nodes[positions])


def wait_easy(replay: Replay, picked: int) -> None:
    seq = replay.sequence
    while not replay.fits(picked):
        if replay.smallest_waiting(picked) <= replay.free_nodes:
            shadow_s, extra = _shadow(replay, int(seq.nodes[picked]))
            order = replay.queue.policy_order(replay.now_s)
            nodes = seq.nodes[order]
            fit_now = (nodes <= replay.free_nodes) & (order != picked)
            order, nodes = order[fit_now], nodes[fit_now]
            ends_s = replay.now_s + seq.requested_s[order]
            usable = (ends_s <= shadow_s) | (nodes <= extra)
            for position, end_s, need in zip(order[usable].tolist(), ends_s[usable].tolist(), nodes[usable].tolist()):
                if not replay.fits(position):
                    continue
                if end_s <= shadow_s:
                    replay.start(position)
                elif need <= extra:
                    replay.start(position)
                    extra -= need
        replay.advance()


def _shadow(replay: Replay, need: int) -> tuple[float, int]:
    """(shadow time in s, extra nodes): when `need` nodes are expected free, and how many more are."""
    positions, requested_end_s = replay.running()
    end_s = np.maximum(requested_end_s, replay.now_s)
    free = replay.free_nodes + np.cumsum(replay.sequence.nodes[positions])
    shadow_s = end_s[np.searchsorted(free, need)]
    return float(shadow_s), int(free[np.searchsorted(end_s, shadow_s, side="right") - 1]) - need


def wait_conservative(replay: Replay, picked: int) -> None:
    seq = replay.sequence
    while not replay.fits(picked):
        profile = _expected_free(replay)
        order = replay.queue.policy_order(replay.now_s)
        order = np.concatenate(([picked], order[order != picked]))
        # Once no later job is small enough for the nodes left now, the rest cannot start now.
        smallest_after = np.minimum.accumulate(seq.nodes[order][::-1])[::-1].tolist()
        for k, (position, need, length_s) in enumerate(zip(order.tolist(), seq.nodes[order].tolist(),
                                                           seq.requested_s[order].tolist())):
            if min(profile.free[0], replay.free_nodes) < smallest_after[k]:
                break
            at_s = profile.earliest(need, length_s)
            profile.reserve(at_s, need, length_s)
            # A step may count nodes of a job ending now whose completion is the next event.
            if at_s <= replay.now_s and position != picked and replay.fits(position):
                replay.start(position)
        replay.advance()


MODES = {"none": wait_none, "compat": wait_compat, "easy": wait_easy, "conservative": wait_conservative}
