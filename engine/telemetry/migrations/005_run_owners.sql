-- Meridian schema, version 5: who runs a long computation, and headroom searches kept as they finish.
-- A process that opens the database for writing marks every sweep or headroom run still 'running'
-- under another owner 'interrupted' (engine.telemetry.orphans): only one process can hold the file,
-- so such a run's process is gone. A headroom search is stored the moment it finishes, keyed by a
-- digest of everything it depends on, so a run killed midway keeps its finished searches and the same
-- request resumes from them (engine.telemetry.headroom_runs).

ALTER TABLE sweeps ADD COLUMN owner VARCHAR;   -- host:pid:token of the process running it (NULL before v5)

CREATE TABLE headroom_runs (
    run_id       INTEGER PRIMARY KEY,
    created_utc  TIMESTAMP NOT NULL,
    source       VARCHAR NOT NULL,      -- dataset name, or trace file name
    scenarios    VARCHAR NOT NULL,      -- the scenarios' names, baseline first, comma-separated
    searches     INTEGER NOT NULL,      -- searches the run asks for
    owner        VARCHAR NOT NULL,      -- host:pid:token of the process running it
    elapsed_s    DOUBLE,                -- wall-clock seconds (NULL while running)
    status       VARCHAR NOT NULL CHECK (status IN ('running','ok','failed','interrupted'))
);
CREATE SEQUENCE headroom_run_ids START 1;

CREATE TABLE headroom_searches (
    search_key   VARCHAR PRIMARY KEY,   -- sha256 of the tables' content, kind, scenario, seed, level, tolerance
    run_id       INTEGER NOT NULL,      -- the run that computed it
    outcome      JSON NOT NULL          -- engine.service.headroom.tasks.SearchOutcome as a record
);
