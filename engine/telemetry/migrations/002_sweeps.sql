-- Meridian schema, version 2: parameter sweeps (engine.sweep, engine.telemetry.sweeps).
-- A sweep is written when it starts (status 'running') and finished with its wall time and status
-- ('ok': every point ok, 'failed': some point failed, 'interrupted'); each point's outcome is
-- inserted as it arrives, so a sweep that dies keeps what finished. JSON columns hold JSON text.

CREATE TABLE sweeps (
    sweep_id     INTEGER PRIMARY KEY,
    name         VARCHAR NOT NULL,
    created_utc  TIMESTAMP NOT NULL,
    source       VARCHAR NOT NULL,      -- dataset name, or trace file path
    grid_text    VARCHAR NOT NULL,      -- the grid file's TOML
    points       INTEGER NOT NULL,
    workers      INTEGER,               -- processes asked for (NULL: a remote Dask cluster's own)
    backend      VARCHAR NOT NULL,      -- 'local', 'dask-local' or the Dask scheduler address
    elapsed_s    DOUBLE,                -- wall-clock seconds of the whole sweep (NULL while running)
    status       VARCHAR NOT NULL CHECK (status IN ('running','ok','failed','interrupted'))
);
CREATE SEQUENCE sweep_ids START 1;

CREATE TABLE sweep_results (
    sweep_id   INTEGER NOT NULL,
    idx        INTEGER NOT NULL,        -- the point's position in the grid
    name       VARCHAR NOT NULL,
    params     JSON NOT NULL,           -- axis label -> value
    status     VARCHAR NOT NULL CHECK (status IN ('ok','failed')),
    error      VARCHAR,                 -- "<ExceptionType>: <message>" when failed
    kpis       JSON NOT NULL,           -- KPI name -> number (null: not finite)
    classes    JSON NOT NULL,           -- per workload class censored waits, seconds
    elapsed_s  DOUBLE NOT NULL,         -- seconds the point took in its worker
    worker     VARCHAR NOT NULL,        -- host:pid
    PRIMARY KEY (sweep_id, idx)
);
