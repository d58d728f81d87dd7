"""The scheduling cycle: what happens to an arriving job, the checked start, the backfill pass,
the queue order cache, quotas, evictions, and users who give up."""
