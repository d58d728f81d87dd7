"""Analysis, in two rooms: `telemetry/`, the telemetry as it is (below), and `runs/`, a simulation's
result (its KPIs and the KPI catalogue, fairness, stranded capacity, cost and carbon, job stories).

Pure pandas/numpy: DataFrames in (as the telemetry store returns them), DataFrames out, units
in column names. `telemetry.overview.build_overview` computes everything the Overview page shows;
the telemetry modules below document each formula (the exact integrals of weighted intervals over
bins they share are engine.core.intervals, which the demand forecast uses too):

  window     the whole-UTC-hour analysis window and local-hour bin edges
  activity   jobs -> GPU allocations, utilisation samples -> step intervals
  capacity   GPUs per region and type, from the fleet or inferred
  busy       busy and capacity unit-hours per bin
  timeline   utilisation per region over time
  heatmap    utilisation by local hour of the week
  idle       idle GPU-hours and dollars
  waits      queue-wait distributions by workload class
  mix        jobs and GPU-hours by workload class
  kpis       the headline numbers
  rightsize  jobs that held more GPUs than they used (per-job measured GPU use)
"""
