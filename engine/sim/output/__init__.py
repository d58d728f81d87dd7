"""What a run produces: the decision log and each job's reason, the per-job tables, the result,
the fragmentation samples, and the garbage collector paused while it runs."""
