"""Scenarios as data: a scenario file (TOML) parsed, validated and described, one module per section.

`spec.Scenario` is the whole scenario; `edits` (window, compression, fleet edits), `demand` (seeded
demand resampling), `world` ([[region]] edits and outages), `sharing` (queues, quotas, teams, spot),
`burst` (cloud burst pools), `runtime` (what runtime the scheduler sees), `recorded` (the baseline
that reproduces how a dataset was scheduled); `checks` holds the validators every section uses.
Running a scenario is engine.service's.
"""
