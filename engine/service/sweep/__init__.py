"""Parameter sweeps: a grid of scenarios (engine.service.sweep.grid) run in parallel on local processes or a
Dask cluster (engine.service.sweep.runner, engine.service.sweep.backends), each point measured like `meridian compare`
(engine.service.sweep.outcome); `meridian sweep` and `meridian sweeps` (engine.cli.sweep) store them in DuckDB
(engine.telemetry.sweeps)."""
