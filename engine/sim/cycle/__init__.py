"""The scheduling cycle: what happens to an arriving job, the checked start, the backfill pass,
the queue order cache, quotas, evictions, and users who give up.

The simulator's loop (engine.sim.simulator), per batch of events at the same time t
(engine.sim.state.events gives the tie order):
  0. before_batch hooks (the fragmentation sampler records the grid times the clock passed).
  1. Finishes and failures: release the job's pods (a failed job ends at its recorded duration of
     work), then the on_finish hooks (a chain hands over to its next stage); a finish left over from
     before an eviction is ignored.
  2. Arrivals: an on_arrival hook may take the job (the timing policy holds a flexible job back: a
     deferred arrival later, engine.sim.processes.holder); the router picks its region
     (engine.sim.processes.router); a job its region can never hold is recorded "never-fits"; otherwise
     the admission policy admits it to the region's queue (perhaps with fewer nodes, "degraded") or
     rejects it with its reason. Re-passes ask for a pass of a region; every other event goes to the
     process that declared its kind, which returns the regions that need a pass.
  3. Scheduling pass, per region touched by the batch (none while a process holds the region: an outage):
     o. when preemption is on, jobs of guaranteed queues start first, evicting other work if they
        must (engine.sim.cycle.preempt);
     a. order the queue with the order policy (time-independent orders are ranked once, and the
        queue is a mask over ranks; time-dependent ones are re-keyed over the queue, at most every
        `recalc_s` when the policy has one, newcomers keyed when first seen and merged into the cached
        order, a job waiting alone only once another joins it: engine.sim.cycle.order_cache);
        with nothing freed, no arrival that fits and no preemption, nothing can start: no pass;
     b. start jobs from the front while they fit (engine.sim.cycle.starts: under a cluster policy the
        cluster step picks the job's cluster first, engine.sim.cycle.cluster_step; then the placement
        policy; gang jobs take whole free nodes chosen by the gang policy, all or nothing); the first that does not
        fit is the blocked head; a job its quota holds back is parked out of the queue instead
        (engine.sim.cycle.quota_gate) and the next one is tried; the preemption policy may evict jobs
        for the blocked head (then the pass starts again);
     c. ask the backfill policy for a window (None: stop) and start, in queue order, the
        candidates that fit now and that the window allows, updating the window after each
        (engine.sim.cycle.backfill_pass);
     then the after_pass hooks (a region with [[burst]] pools rents cloud nodes when its queue's head
     has waited long enough, and returns them when idle).
  4. Record the timeline sample (busy GPUs, queue length) of each touched region; after_batch hooks
     (the timer pushes the next timer pass while jobs wait).
"""
