"""Agents trained with `meridian rl train` and shipped with the product (see engine/policies/rl_agent.py)."""
