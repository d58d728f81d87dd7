"""The discrete-event simulator: pure, deterministic, no I/O. `simulator.py` is the loop (its numbered
steps in the docstring); `state/` what it holds, `cycle/` the scheduling cycle, `processes/` the
world's processes it reacts to, `output/` what a run produces."""
