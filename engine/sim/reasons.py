"""Why a job waited or never ran: codes the simulator records, names the result shows.

A job that started at its submit time keeps code 0 ("started"); see engine.sim.result for what
each reason means.
"""
REASONS = ("started", "waiting-in-queue", "blocked-by-capacity", "blocked-by-reservation",
           "rejected-by-admission", "never-fits", "blocked-by-quota", "blocked-by-team-limit",
           "rejected-by-forecast", "exceeds-quota", "gave-up")
STARTED, WAITING, CAPACITY, RESERVATION, REJECTED, NEVER, QUOTA, TEAM_LIMIT, FORECAST, EXCEEDS, GAVE_UP = range(11)
TURNED_AWAY = frozenset((REJECTED, NEVER, FORECAST, EXCEEDS))  # never queued: their users cannot give up

# Decisions in the log: the reasons, then what else happens to a job.
DECISIONS = REASONS + ("backfilled", "failed", "deferred", "preempted", "degraded", "transferring-data",
                       "reclaimed-at-work-start")
BACKFILLED, FAILED, DEFERRED, PREEMPTED, DEGRADED, TRANSFERRING, RECLAIMED = range(len(REASONS), len(REASONS) + 7)
