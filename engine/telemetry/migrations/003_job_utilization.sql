-- Meridian schema, version 3: measured GPU use per job, for right-sizing (engine.analysis.rightsize).
-- Both columns are optional: NULL when the telemetry does not measure GPU use (existing rows stay NULL).
--   gpu_util_pct   mean utilisation of the GPUs the job held, over its run, percent 0..100: the average
--                  over the run and over the job's GPUs of each GPU's busy percentage (e.g. DCGM/NVML
--                  "GPU utilization"); 100 = every GPU held was busy all the time. For a fractional job
--                  (gpus < 1) it is relative to the share held. gpus x gpu_util_pct / 100 is the job's
--                  mean-equivalent GPUs in use.
--   gpus_used_max  the largest number of the job's GPUs busy at the same time during its run, GPUs,
--                  0..gpus (a GPU counts as busy in a sample when the source says so, e.g. utilisation
--                  above zero); fractional for fractional jobs.
-- For a job still running at export, both describe its run so far. DuckDB cannot add CHECK constraints
-- to an existing table, so the ranges are enforced by the importers (importers/jobs_frame.py).

ALTER TABLE jobs ADD COLUMN gpu_util_pct DOUBLE;
ALTER TABLE jobs ADD COLUMN gpus_used_max DOUBLE;
