-- Meridian schema, version 7: staged workflows (engine.sim.processes.chains).
--   jobs.depends_on      the job id of the job this one waits for (its predecessor in a chain; NULL: none),
--                        a job of the same file (checked at import with the lines: unknown ids, cycles)
--   jobs.checkpoint_gb   the size of the checkpoint the predecessor hands over, GB (moved when the two ran
--                        in different regions)

ALTER TABLE jobs ADD COLUMN depends_on VARCHAR;
ALTER TABLE jobs ADD COLUMN checkpoint_gb DOUBLE;
