"""Policy optimisers over the simulator: evolve policy parameters against several objectives (study.py,
over a study file: space.py), and the trade-off they find (front.py)."""
