"""Parameter sweeps: a grid of scenarios (engine.sweep.grid) run in parallel on local processes or a
Dask cluster (engine.sweep.runner, engine.sweep.backends), each point measured like `meridian compare`
(engine.sweep.outcome); `meridian sweep` and `meridian sweeps` (engine.sweep.cli) store them in DuckDB
(engine.telemetry.sweeps)."""
