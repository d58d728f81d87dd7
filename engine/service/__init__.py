"""The one front door: running, comparing and editing scenarios, ETA replays, headroom searches,
capacity planning, sweeps, reports and the reproductions of published results. The CLI and the
dashboard call this layer and nothing below it for a run, so their numbers agree by construction.
"""
