"""Staged workflows: chains of jobs, each stage starting only when the stage before it has ended.

A job with a predecessor (the workload's `predecessor`, from a jobs table's `depends_on` column or a
scenario's [[chain]]: engine.scenario.chains) is held from its submit until its predecessor p ends
(completed or failed: a failed stage hands over its last checkpoint) and hands its checkpoint over:

  ready = end(p) + transfer,  transfer = checkpoint_gb x 8 / transfer_gbps seconds
          when p ran in another region than the job's own ([data] transfer_gbps; 0 Gbit/s, the
          default: instant; the same region: 0 s).

The job then arrives (is routed and queued as any job) at max(submit, ready): a job submitted after
`ready` arrives at its submit as usual; one submitted before is logged "waiting-for-predecessor" at its
submit (its reason while it waits, kept when it starts at the hand-over) and arrives at `ready` (a
CHAIN event). A job whose predecessor never ends (turned away, never fits, gave up, or itself waiting
on a predecessor that never ends) never arrives and keeps that reason. The checkpoint goes to the
region where the job runs: without a router its own (its home, where its stage is meant to run); with
one, the region the router sends it to at max(submit, end(p)) (the job is routed then, and queues there
at max(that, ready) with ready computed for that region; one submitted after end(p) whose checkpoint
is not there yet is logged "waiting-for-predecessor" at its submit). The predecessor's region is where
it ended (a stage handed over mid-run by [handoff] keeps its row and so its chain link).

`chains` (a result table): one row per job with a predecessor, in job order: row, job_id, chain_row and
chain (the row and job id of the chain's first stage), stage (its place in the chain: 2 for the stage
after the first, 3 for the next, ...),
predecessor_row, predecessor_job_id, from_region (where the predecessor ran), to_region, checkpoint_gb,
submit_s, predecessor_end_s (NaN: never ended), transfer_s, ready_s (NaN: never handed over),
held_s (seconds from submit to arrival: max(0, ready_s - submit_s); the whole wait to the end of the
run for a job never handed over), start_s, end_s.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from engine.core.reasons import PREDECESSOR
from engine.sim.processes.base import WorldProcess

CHAIN = 19
CHAIN_COLUMNS = ["row", "job_id", "chain_row", "chain", "stage", "predecessor_row", "predecessor_job_id", "from_region",
                 "to_region", "checkpoint_gb", "submit_s", "predecessor_end_s", "transfer_s", "ready_s", "held_s",
                 "start_s", "end_s"]


class Chains(WorldProcess):
    """The hand-overs of one run's chained jobs (attached when any job has a predecessor)."""

    kinds = (CHAIN,)
    cause = "chained jobs handed over to the next stage ([[chain]] or depends_on)"
    result_fields = ("chains",)

    def __init__(self, run) -> None:
        w = run.w
        self.run = run
        self.pred = w.predecessor.tolist()
        self.gb = w.checkpoint_gb.tolist() if w.checkpoint_gb is not None else [0.0] * len(w)
        self.gbps = run.transfer_gbps
        self.successors: dict[int, list[int]] = {}
        for j in np.flatnonzero(w.predecessor >= 0).tolist():
            self.successors.setdefault(self.pred[j], []).append(j)
        self.handed: dict[int, tuple[float, float, str, str]] = {}  # job -> (predecessor end, transfer, from, to)
        self.ended: dict[int, tuple[float, str]] = {}  # job -> (its predecessor's end, the region it ended in)
        self.held: set[int] = set()  # jobs submitted before their predecessor ended
        self.routed: set[int] = set()  # jobs routed at their hand-over, queueing once their checkpoint is there
        self.last = 0.0

    @classmethod
    def attach(cls, run) -> Chains | None:
        pred = run.w.predecessor
        if pred is None or not bool((pred >= 0).any()):
            return None
        run.chains = chains = cls(run)
        return chains

    def on_arrival(self, j: int, now: float) -> bool:
        if self.pred[j] < 0:
            return False
        if j not in self.ended:
            self.held.add(j)
            self.run.decide(now, j, PREDECESSOR)
            return True  # arrives at the hand-over (a CHAIN event, pushed by on_finish)
        if self.run.router is not None:
            return False  # routed as any job, then held for its checkpoint (sent_after_routing)
        if self._hand(j) <= now:
            return False  # handed over before its submit: it arrives as any job
        self.run.decide(now, j, PREDECESSOR)
        return True  # arrives at the hand-over (a CHAIN event, pushed by on_finish)

    def on_finish(self, p: int, now: float) -> None:
        run = self.run
        for j in self.successors.get(p, ()):
            self.ended[j] = (now, run.region_name[p])
            if run.router is not None:
                if j in self.held:
                    run.events.push(now, CHAIN, j)  # route it now; its checkpoint then goes where it is sent
            elif (ready := self._hand(j)) > run.submit[j]:  # submitted before the hand-over ends: held until then
                run.events.push(ready, CHAIN, j)

    def _hand(self, j: int) -> float:
        """Send job j's predecessor's checkpoint to j's region (where it is now); returns when it is there."""
        end, source = self.ended[j]
        target = self.run.region_name[j]
        transfer = self.gb[j] * 8.0 / self.gbps if source != target and self.gbps > 0 else 0.0
        self.handed[j] = (end, transfer, source, target)
        return end + transfer

    def sent_after_routing(self, j: int, now: float) -> bool:
        """Job j, with a router, was routed at `now`: its checkpoint goes to that region; True while it is not
        there yet (the job queues at a CHAIN event when it is)."""
        if self.pred[j] < 0 or j in self.handed:
            return False
        ready = self._hand(j)
        if ready <= now:
            return False
        if j not in self.held:
            self.run.decide(now, j, PREDECESSOR)
        self.routed.add(j)
        self.run.events.push(ready, CHAIN, j)
        return True

    def on_event(self, kind: int, payload: int, now: float) -> Iterable[str]:
        region = self.run._arrive(payload, now, route=payload not in self.routed)
        waiting = payload in self.routed and sum(self.handed[payload][:2]) > now  # routed, checkpoint on its way
        return () if waiting else (region,)

    def finish(self, last: float) -> None:
        self.last = last

    def result(self) -> dict[str, object]:
        run, w = self.run, self.run.w
        rows = np.flatnonzero(w.predecessor >= 0)
        pred = w.predecessor[rows]
        handed = [self.handed.get(j, (math.nan, math.nan, run.region_name[self.pred[j]], run.region_name[j]))
                  for j in rows.tolist()]
        end, transfer = (np.array([h[k] for h in handed], np.float64) for k in (0, 1))
        submit, ready = w.submit_s[rows], end + transfer
        first, stage = self._stages(rows)
        return {"chains": pd.DataFrame({
            "row": rows, "job_id": w.job_id[rows], "chain_row": first, "chain": w.job_id[first], "stage": stage,
            "predecessor_row": pred, "predecessor_job_id": w.job_id[pred],
            "from_region": pd.array([h[2] for h in handed], dtype="str"),
            "to_region": pd.array([h[3] for h in handed], dtype="str"),
            "checkpoint_gb": np.asarray(self.gb, np.float64)[rows], "submit_s": submit, "predecessor_end_s": end,
            "transfer_s": transfer, "ready_s": ready,
            "held_s": np.maximum(np.where(np.isnan(ready), self.last, ready) - submit, 0.0),
            "start_s": run.start[rows], "end_s": run.end[rows]}, columns=CHAIN_COLUMNS)}

    def _stages(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's chain head (the first job of its chain) and its stage (1 + links from the head)."""
        first, stage = np.empty(len(rows), np.int64), np.empty(len(rows), np.int64)
        for k, j in enumerate(rows.tolist()):
            head, depth = j, 1
            while self.pred[head] >= 0:
                head, depth = self.pred[head], depth + 1
            first[k], stage[k] = head, depth
        return first, stage
