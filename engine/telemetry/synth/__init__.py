"""Deterministic generator of the sample telemetry: a global AI company's GPU fleet and jobs."""
