"""Reproductions of published scheduling results (the engine's fidelity report).

Each experiment module follows its paper's method exactly, exposes a function that runs it and
returns plain records, and an `add_parser(experiment_subparsers)` for `meridian experiment ...`.
"""
