"""Analysis of the telemetry as it is: busy and idle GPU-hours, capacity, local-hour heat maps, waits,
the Overview's KPIs, time zones and hand-offs, off-peak hours, right-sizing and scaling hints."""
