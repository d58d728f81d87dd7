"""Why a job waited or never ran: codes the simulator records, the names the result shows, and what
each means in plain words (the one place they are explained: the result's docs, the ETA table and
the Teams & fairness page read them from here).

A job that started at its submit time keeps code 0 ("started"). `EXPLAINED` says in a sentence why
a job waited (for a team lead's "why is my job waiting?"); `SHORT` says it in a few words (the
queue ETA's table).
"""
REASONS = ("started", "waiting-in-queue", "blocked-by-capacity", "blocked-by-reservation",
           "rejected-by-admission", "never-fits", "blocked-by-quota", "blocked-by-team-limit",
           "rejected-by-forecast", "exceeds-quota", "gave-up", "waiting-for-data", "restoring-checkpoint")
STARTED, WAITING, CAPACITY, RESERVATION, REJECTED, NEVER, QUOTA, TEAM_LIMIT, FORECAST, EXCEEDS, GAVE_UP, DATA_WAIT, \
    RESTORING = range(13)
TURNED_AWAY = frozenset((REJECTED, NEVER, FORECAST, EXCEEDS))  # never queued: their users cannot give up

# Decisions in the log: the reasons, then what else happens to a job.
DECISIONS = REASONS + ("backfilled", "failed", "deferred", "preempted", "degraded", "transferring-data",
                       "reclaimed-at-work-start")
BACKFILLED, FAILED, DEFERRED, PREEMPTED, DEGRADED, TRANSFERRING, RECLAIMED = range(len(REASONS), len(REASONS) + 7)
# A soft constraint the router relaxed for the job (engine.policies.constraints), one decision each.
SOFT_CONSTRAINTS = ("data-locality", "latency", "carbon", "cost", "team-affinity")
DECISIONS += tuple(f"relaxed-{name}" for name in SOFT_CONSTRAINTS)
RELAXED = {name: DECISIONS.index(f"relaxed-{name}") for name in SOFT_CONSTRAINTS}
RELAXED_DECISIONS = frozenset(f"relaxed-{name}" for name in SOFT_CONSTRAINTS)  # where it runs, not why it waits
# Adaptive backfilling changed its strategy (engine.policies.backfill_adaptive).
DECISIONS += ("backfill-switched",)
SWITCHED = DECISIONS.index("backfill-switched")
# Live follow-the-sun moved the running job to another region (engine.sim.processes.handoff).
DECISIONS += ("handed-off",)
HANDED_OFF = DECISIONS.index("handed-off")
# A job of a chain held until its predecessor ended and handed its checkpoint over (engine.sim.processes.chains);
# also the reason of a job that waited for it (or never ran: its predecessor never did), so a job's reason is a
# DECISIONS code: REASONS codes, or this one.
DECISIONS += ("waiting-for-predecessor",)
PREDECESSOR = DECISIONS.index("waiting-for-predecessor")
# A right-sized job given too little ran out of memory and was requeued with its request
# (engine.sim.processes.oom_restarts).
DECISIONS += ("out-of-memory",)
OUT_OF_MEMORY = DECISIONS.index("out-of-memory")
# A job whose dataset was in an archive region waited for its restore before queueing (engine.sim.processes.
# dataset_archive); its reason too, as "waiting-for-predecessor" is.
DECISIONS += ("restoring-dataset",)
RESTORING_DATASET = DECISIONS.index("restoring-dataset")

EXPLAINED = {
    "started": "it started as soon as it was submitted",
    "waiting-in-queue": "behind other jobs in the queue",
    "blocked-by-capacity": "first in line, but no node had room for it",
    "blocked-by-reservation": "it would have delayed the job at the front (no room to backfill it)",
    "blocked-by-quota": "its team had used its quota and could borrow no more",
    "blocked-by-team-limit": "its team was at its limit of GPUs at once",
    "rejected-by-admission": "turned away: the queue was full",
    "rejected-by-forecast": "turned away: the queue ahead would not drain in time",
    "never-fits": "it cannot fit in its region (too large, a GPU model the region lacks, or only spot nodes "
                  "that it had to leave)",
    "exceeds-quota": "it asks for more GPUs than its team's or queue's quota can ever give it (its cap, or "
                     "its nominal quota plus what it may borrow)",
    "gave-up": "its user gave up waiting and withdrew it before it started",
    "waiting-for-data": "its turn had come, but its input data, prefetched while it queued, was still being moved "
                        "to its region",
    "restoring-checkpoint": "its turn had come, but its checkpoint, stored in an archive region when it was evicted, "
                            "was still being restored",
    "backfilled": "it started early, in a gap that delayed no job ahead of it",
    "failed": "it ended in failure",
    "deferred": "held back by the timing policy (a cleaner or off-hours slot)",
    "preempted": "it was evicted for more important work and requeued",
    "degraded": "it was admitted on fewer nodes than it asked for (an elastic job)",
    "transferring-data": "its input data was being moved to the region it was sent to",
    "reclaimed-at-work-start": "it was evicted because the quota it borrowed went back to its holder as the "
                               "holder's working day began",
    "relaxed-data-locality": "no region holding its input data could take it, so it was sent away from its data",
    "relaxed-latency": "no region near its users could take it, so it runs beyond their latency SLO",
    "relaxed-carbon": "no low-carbon region could take it, so it runs on a dirtier grid",
    "relaxed-cost": "no low-priced region could take it, so it runs where its GPUs cost more",
    "relaxed-team-affinity": "its team's region could not take it, so it runs in another region",
    "out-of-memory": "it was given the GPUs it was predicted to use, needed more, ran out of memory and was "
                     "requeued with its full request",
    "backfill-switched": "adaptive backfilling changed its strategy at this job's pass (the replay of the "
                         "last period scored another strategy better)",
    "handed-off": "it was checkpointed and moved, running, to an off-hours region as the working day of the "
                  "region it had borrowed began and that region's own work queued",
    "waiting-for-predecessor": "it is a stage of a chain: it waited for the stage before it to end and hand its "
                               "checkpoint over (moved to its region when that stage ran elsewhere)",
    "restoring-dataset": "its input dataset was kept in an archive region and was being restored to its home "
                         "region before the job could queue",
}
SHORT = {
    "started": "could start now", "waiting-in-queue": "behind other jobs", "blocked-by-capacity": "no room yet",
    "blocked-by-reservation": "would delay the job at the front", "blocked-by-quota": "its team's quota is used up",
    "blocked-by-team-limit": "its team is at its GPU limit", "never-fits": "never fits its region",
    "exceeds-quota": "more than its quota can ever give", "rejected-by-admission": "turned away: the queue is full",
    "rejected-by-forecast": "turned away: the queue would not drain in time", "gave-up": "withdrawn by its user",
    "waiting-for-data": "its input data is still on its way",
    "restoring-checkpoint": "its checkpoint is being restored from the archive",
    "deferred": "held back for a later slot", "transferring-data": "its input data is being moved",
    "waiting-for-predecessor": "the stage before it has not handed over",
    "restoring-dataset": "its dataset is being restored from the archive"}
