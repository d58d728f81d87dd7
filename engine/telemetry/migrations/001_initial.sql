-- Meridian telemetry schema, version 1.
-- Timestamps are TIMESTAMP values holding UTC wall-clock time (column names end in _utc).
-- Units are in column names: _s seconds, _gib gibibytes, _gb gigabytes, _usd US dollars.

CREATE TABLE datasets (
    name            VARCHAR PRIMARY KEY,
    created_utc     TIMESTAMP NOT NULL,
    description     VARCHAR
);

-- One row per imported file; a dataset may be built from several files
-- (e.g. an openb node list and a pod list, or the sample bundle).
CREATE TABLE imports (
    import_id       INTEGER PRIMARY KEY,
    dataset         VARCHAR NOT NULL,
    source_file     VARCHAR NOT NULL,
    format          VARCHAR NOT NULL,
    content_sha256  VARCHAR NOT NULL,
    imported_utc    TIMESTAMP NOT NULL,
    row_count       BIGINT NOT NULL,
    table_name      VARCHAR NOT NULL
);
CREATE SEQUENCE import_ids START 1;

CREATE TABLE jobs (
    dataset              VARCHAR NOT NULL,
    import_id            INTEGER NOT NULL,
    source_line          BIGINT,          -- line in the source file, for traceability
    job_id               VARCHAR NOT NULL,
    user_name            VARCHAR,
    team                 VARCHAR,         -- team / account / group
    project              VARCHAR,
    workload_class       VARCHAR NOT NULL CHECK (workload_class IN ('training','inference','development','batch','hpo','unknown')),
    priority             DOUBLE,
    qos                  VARCHAR,
    queue                VARCHAR,         -- partition / queue
    submit_utc           TIMESTAMP NOT NULL,
    start_utc            TIMESTAMP,
    end_utc              TIMESTAMP,
    gpus                 DOUBLE NOT NULL CHECK (gpus >= 0),   -- GPU equivalents; 0.25 = 250 milli-GPU
    gpu_milli            INTEGER,         -- per-GPU share in milli-GPU (1000 = whole GPUs)
    gpu_type             VARCHAR,
    cpus                 DOUBLE,
    memory_gib           DOUBLE,
    nodes                INTEGER,
    region               VARCHAR NOT NULL,
    cluster              VARCHAR,
    status               VARCHAR NOT NULL CHECK (status IN ('completed','failed','cancelled','preempted','running','pending')),
    requested_runtime_s  DOUBLE,          -- the user's runtime estimate
    deadline_utc         TIMESTAMP,
    data_location        VARCHAR,         -- region holding the job's input data
    data_size_gb         DOUBLE,
    residency            VARCHAR          -- data-residency tag, e.g. EU, CN, or a region list
);

CREATE TABLE fleet (
    dataset      VARCHAR NOT NULL,
    import_id    INTEGER NOT NULL,
    region       VARCHAR NOT NULL,
    cluster      VARCHAR,
    node         VARCHAR NOT NULL,
    gpu_type     VARCHAR,
    gpus         INTEGER NOT NULL CHECK (gpus >= 0),
    cpus         DOUBLE,
    memory_gib   DOUBLE,
    rack         VARCHAR,
    tier         VARCHAR NOT NULL CHECK (tier IN ('reserved','on-demand','spot'))
);

CREATE TABLE regions (
    dataset          VARCHAR NOT NULL,
    region           VARCHAR NOT NULL,
    timezone         VARCHAR NOT NULL,   -- IANA name
    country          VARCHAR,            -- ISO 3166 code of the jurisdiction
    jurisdiction     VARCHAR,            -- e.g. EU, US, CN
    egress_usd_per_gb DOUBLE,
    PRIMARY KEY (dataset, region)
);

CREATE TABLE prices (
    dataset            VARCHAR NOT NULL,
    region             VARCHAR NOT NULL,
    gpu_type           VARCHAR NOT NULL,
    tier               VARCHAR NOT NULL CHECK (tier IN ('reserved','on-demand','spot')),
    usd_per_gpu_hour   DOUBLE NOT NULL,
    assumed            BOOLEAN NOT NULL DEFAULT false,  -- true when taken from the default price book
    PRIMARY KEY (dataset, region, gpu_type, tier)
);

CREATE TABLE carbon (
    dataset          VARCHAR NOT NULL,
    region           VARCHAR NOT NULL,
    local_hour       INTEGER NOT NULL CHECK (local_hour BETWEEN 0 AND 23),
    g_co2e_per_kwh   DOUBLE NOT NULL,
    PRIMARY KEY (dataset, region, local_hour)
);

CREATE TABLE teams (
    dataset          VARCHAR NOT NULL,
    team             VARCHAR NOT NULL,
    timezone         VARCHAR NOT NULL,
    work_start_hour  INTEGER NOT NULL,
    work_end_hour    INTEGER NOT NULL,
    working_days     VARCHAR NOT NULL,   -- e.g. Mon-Fri, Sun-Thu
    holiday_country  VARCHAR,            -- ISO code for the holidays package
    home_region      VARCHAR,
    share_weight     DOUBLE NOT NULL DEFAULT 1,
    PRIMARY KEY (dataset, team)
);

CREATE TABLE utilization (
    dataset      VARCHAR NOT NULL,
    import_id    INTEGER NOT NULL,
    ts_utc       TIMESTAMP NOT NULL,
    region       VARCHAR NOT NULL,
    cluster      VARCHAR,
    node         VARCHAR,
    busy         DOUBLE,     -- busy units (see unit)
    total        DOUBLE,     -- total units
    util_pct     DOUBLE,     -- 0..100
    unit         VARCHAR NOT NULL   -- 'gpus' or 'nodes'
);

CREATE TABLE meta (
    key    VARCHAR PRIMARY KEY,
    value  VARCHAR
);
