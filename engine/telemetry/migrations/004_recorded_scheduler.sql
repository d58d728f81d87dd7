-- Meridian schema, version 4: how a dataset's telemetry was scheduled, when its source says so.
--   recorded_scheduler  a key of engine.scenario_recorded.RECORDED ("per-pool-fifo" for the sample's
--                       generator; "easy" or "maui" from an SWF log's "; Note: uses ... scheduler"
--                       header line); NULL when the source does not say (then the recorded baseline
--                       assumes FCFS with EASY backfilling, and says so).

ALTER TABLE datasets ADD COLUMN recorded_scheduler VARCHAR;
