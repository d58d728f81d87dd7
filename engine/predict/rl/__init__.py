"""Learning a queue order by reinforcement: hand-written gradients, Adam and PPO in numpy."""
