-- Meridian schema, version 8: measured host memory per job, for right-sizing memory at submit
-- (engine.predict.memory_need, engine.scenario.rightsize).
--   jobs.memory_used_gib_max   the most host memory the job held at once during its run, GiB, summed over
--                              its nodes (e.g. the cgroup's memory.peak, or Slurm's MaxRSS x tasks); it may
--                              exceed memory_gib where the scheduler did not enforce the request. NULL when
--                              the telemetry does not measure it; for a job still running at export, its
--                              run so far. The range (0-10,000,000 GiB) is enforced by the importers.

ALTER TABLE jobs ADD COLUMN memory_used_gib_max DOUBLE;
