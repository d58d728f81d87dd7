"""The world's processes the loop reacts to: routing at submit, timing holds, spot reclamation,
region outages, cloud bursts, and quota reclaimed at each working day's start."""
